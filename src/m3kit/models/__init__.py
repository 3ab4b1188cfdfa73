"""inspect-ai model providers of m3kit's own, and the glue from frames and pages to messages.

- ``m3kit/builtin`` (``BuiltinModelAPI``): the offline default, a text-surrogate baseline built
  from models shipped inside installed packages (OCR, text embeddings); not a VLM.
- ``m3kit/hf`` (``HFVisionModelAPI``): a local transformers VLM (Qwen2.5-VL / Qwen3-VL class)
  run in-process, images included.
- Any OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp server, hosted APIs) goes
  through inspect's own providers, e.g. ``openai-api/<service>/<model>`` or ``vllm/<model>``.

Importing ``m3kit.models`` registers the ``m3kit`` API with inspect (``m3kit.registry``, the
entry point, imports it). Heavy modules
(torch, transformers, the OCR and embedding models) load only when a provider first answers.
"""

from m3kit.models.builtin import DEFAULT_ABSTAIN_THRESHOLD, BuiltinModelAPI
from m3kit.models.content import (
    count_images,
    frames_to_content,
    image_content,
    image_refs,
    inline_images,
    load_image,
    load_rgb,
    media_refs,
    message_images,
    message_text,
)
from m3kit.models.errors import ModelArgError, ModelLoadError
from m3kit.models.hf import HFVisionModelAPI
from m3kit.models.providers import create_model_api
from m3kit.models.scoring import EvidenceScorer, calibrate_threshold

__all__ = [
    "DEFAULT_ABSTAIN_THRESHOLD",
    "BuiltinModelAPI",
    "EvidenceScorer",
    "HFVisionModelAPI",
    "ModelArgError",
    "ModelLoadError",
    "calibrate_threshold",
    "count_images",
    "create_model_api",
    "frames_to_content",
    "image_content",
    "image_refs",
    "inline_images",
    "load_image",
    "load_rgb",
    "media_refs",
    "message_images",
    "message_text",
]
