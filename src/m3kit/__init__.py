"""m3kit: evaluate and build multimodal memory."""

__version__ = "0.1.0"
