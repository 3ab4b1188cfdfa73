"""m3kit: evaluate and build multimodal memory."""

from importlib.metadata import PackageNotFoundError, version

__version__ = "0.1.0"


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (``None`` when it is not installed): what
    a run card and an external memory's config record of the software they ran."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None
