"""``m3kit/hf``: a vision-language model run in-process with transformers, from a local folder.

inspect's own ``hf`` provider sends text only; this one sends the images too. It targets the
Qwen2.5-VL / Qwen3-VL class (any ``AutoModelForImageTextToText`` checkpoint whose processor has
a chat template should work) and never downloads: the path must be a local folder.

    inspect eval task.py --model m3kit/hf/models/Qwen2.5-VL-7B-Instruct -M dtype=bfloat16
    get_model("m3kit/hf", model_path="models/Qwen2.5-VL-7B-Instruct")

The model loads on the first ``generate`` (not when the provider is built). One request runs at
a time (batch size 1, a lock): a single in-process model gains nothing from concurrent calls.
Greedy decoding unless ``temperature > 0``.

Inputs are built by the checkpoint's ``AutoProcessor``. When the processor cannot be built —
transformers' Qwen-VL processors require torchvision for their video half, even for images —
Qwen-style inputs are assembled from the tokenizer and the image processor instead: the chat
template's ``<|image_pad|>`` is expanded to ``grid_t * grid_h * grid_w / merge_size**2`` tokens
per image, which is what the processor does. ``metadata["m3kit"]["input_builder"]`` says which.

Usage: ``input_tokens`` is the prompt length in tokens, image tokens included
(``metadata["m3kit"]["image_tokens"]`` of them); ``output_tokens`` the tokens generated.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import anyio
from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from PIL import Image

from m3kit.models.content import load_image
from m3kit.models.errors import ModelArgError, ModelLoadError

DEFAULT_MAX_NEW_TOKENS = 128
_DTYPES = ("auto", "bfloat16", "float16", "float32")


@dataclass
class _Loaded:
    model: Any
    builder: _InputBuilder
    tokenizer: Any
    device: str
    dtype: str


class HFVisionModelAPI(ModelAPI):
    """In-process transformers VLM behind ``m3kit/hf``.

    Model args (``-M name=value``):

    - ``model_path``: the local checkpoint folder (or give it in the name: ``m3kit/hf/<path>``);
    - ``device`` (``auto`` | ``cuda`` | ``cuda:N`` | ``cpu``, default ``auto``: cuda when present);
    - ``dtype`` (``auto`` | ``bfloat16`` | ``float16`` | ``float32``; ``auto``: bfloat16 on a GPU
      that supports it, else float16 on GPU, float32 on CPU);
    - ``min_pixels`` / ``max_pixels`` (int): passed to the image processor (Qwen-VL resizing);
    - ``attn_implementation`` (e.g. ``sdpa``, ``flash_attention_2``);
    - ``trust_remote_code`` (bool, default false).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        *,
        model_path: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        min_pixels: int | str | None = None,
        max_pixels: int | str | None = None,
        attn_implementation: str | None = None,
        trust_remote_code: bool | str = False,
        **unknown: Any,
    ) -> None:
        super().__init__(
            model_name=model_name, base_url=base_url, api_key=api_key,
            config=config or GenerateConfig(),
        )
        if unknown:
            raise ModelArgError(
                f"unknown model args {sorted(unknown)}; known: model_path, device, dtype, "
                "min_pixels, max_pixels, attn_implementation, trust_remote_code",
                record=f"m3kit/{model_name}",
            )
        path = model_path or _path_from_name(model_name)
        if not path:
            raise ModelArgError(
                "no checkpoint folder: use m3kit/hf/<path> or -M model_path=<path>",
                field="model_path",
            )
        self.model_path = Path(path).expanduser()
        if not self.model_path.is_dir():
            raise ModelLoadError("checkpoint folder not found (m3kit/hf never downloads)",
                                 path=self.model_path)
        if dtype not in _DTYPES:
            raise ModelArgError(f"dtype must be one of {_DTYPES}", field="dtype")
        self.device = device
        self.dtype = dtype
        self.pixels = PixelBounds()
        if min_pixels is not None:
            self.pixels["min_pixels"] = int(min_pixels)
        if max_pixels is not None:
            self.pixels["max_pixels"] = int(max_pixels)
        self.attn_implementation = attn_implementation
        self.trust_remote_code = str(trust_remote_code).lower() in ("1", "true", "yes")
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    def max_connections(self) -> int:
        return 1  # one in-process model, batch size 1

    def close(self) -> None:
        """Drop the model (and free GPU memory)."""
        with self._lock:
            if self._loaded is not None:
                on_gpu = self._loaded.device.startswith("cuda")
                self._loaded = None
                if on_gpu:
                    import torch

                    torch.cuda.empty_cache()

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        return await anyio.to_thread.run_sync(self.complete, input, config)

    def complete(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> ModelOutput:
        """Generate synchronously (what ``generate`` runs in a worker thread)."""
        config = config or GenerateConfig()
        chat, images = to_hf_chat(messages)
        with self._lock:
            loaded = self._load()
            import torch

            inputs = loaded.builder.build(chat, images).to(loaded.device)
            if "pixel_values" in inputs:  # processors emit float32; the vision tower may not be
                inputs["pixel_values"] = inputs["pixel_values"].to(loaded.model.dtype)
            prompt_length = int(inputs["input_ids"].shape[1])
            image_token_id = getattr(loaded.model.config, "image_token_id", None)
            image_tokens = (
                int((inputs["input_ids"] == image_token_id).sum()) if image_token_id is not None
                else 0
            )
            max_new = config.max_tokens or DEFAULT_MAX_NEW_TOKENS
            kwargs = _generation_kwargs(config, max_new, loaded.tokenizer)
            with torch.inference_mode():
                generated = loaded.model.generate(**inputs, **kwargs)
        new_tokens = generated[0, prompt_length:]
        text = loaded.tokenizer.decode(new_tokens, skip_special_tokens=True)
        eos = _eos_ids(loaded.model, loaded.tokenizer)
        ended = len(new_tokens) > 0 and int(new_tokens[-1]) in eos
        stop_reason: StopReason = (
            "max_tokens" if len(new_tokens) >= max_new and not ended else "stop")

        output = ModelOutput.from_content(
            model=self.model_name, content=text.strip(), stop_reason=stop_reason
        )
        output.usage = ModelUsage(
            input_tokens=prompt_length, output_tokens=len(new_tokens),
            total_tokens=prompt_length + len(new_tokens),
        )
        output.metadata = {
            "m3kit": {
                "provider": "m3kit/hf",
                "model_path": str(self.model_path),
                "images": len(images),
                "image_tokens": image_tokens,
                "device": loaded.device,
                "dtype": loaded.dtype,
                "input_builder": loaded.builder.name,
                "do_sample": kwargs["do_sample"],
            }
        }
        return output

    def _load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        import torch
        from transformers import AutoModelForImageTextToText
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        device = _resolve_device(self.device, torch)
        dtype = _resolve_dtype(self.dtype, device, torch)
        options: dict[str, Any] = {
            "dtype": getattr(torch, dtype), "local_files_only": True,
            "trust_remote_code": self.trust_remote_code,
        }
        if self.attn_implementation:
            options["attn_implementation"] = self.attn_implementation
        try:
            # Any: the class is the checkpoint's, known only at run time (transformers' own
            # annotations of ``from_pretrained(...).to`` do not fit a device string)
            model: Any = AutoModelForImageTextToText.from_pretrained(str(self.model_path),
                                                                     **options)
        except (OSError, ValueError, KeyError) as error:
            raise ModelLoadError(f"cannot load the model: {error}", path=self.model_path) from error
        model = model.to(device).eval()
        builder = _input_builder(self.model_path, model.config, self.pixels,
                                 self.trust_remote_code)
        self._loaded = _Loaded(model, builder, builder.tokenizer, device, dtype)
        return self._loaded


def to_hf_chat(messages: Sequence[ChatMessage]) -> tuple[list[dict[str, Any]], list[Image.Image]]:
    """inspect messages as a transformers chat (content lists with image placeholders) and the
    images, in the order the placeholders appear.

    Tool results become user turns (VLM chat templates rarely know a tool role); reasoning
    content is left out.
    """
    chat: list[dict[str, Any]] = []
    images: list[Image.Image] = []
    for message in messages:
        role = message.role if message.role in ("system", "user", "assistant") else "user"
        items: list[dict[str, Any]] = []
        content = message.content
        if isinstance(content, str):
            items.append({"type": "text", "text": content})
        else:
            for item in content:
                if isinstance(item, ContentText):
                    items.append({"type": "text", "text": item.text})
                elif isinstance(item, ContentImage):
                    images.append(load_image(item.image))
                    items.append({"type": "image"})
                elif getattr(item, "type", None) in ("video", "audio", "document"):
                    raise ModelArgError(
                        f"m3kit/hf takes text and images; got {item.type} content "
                        "(send sampled frames as images)", field="content",
                    )
        if message.role == "tool":
            items.insert(0, {"type": "text", "text": "Tool result:\n"})
        chat.append({"role": role, "content": items})
    return chat, images


class _InputBuilder:
    """Turns a chat and its images into model inputs (``BatchFeature``)."""

    name: str
    tokenizer: Any

    def build(self, chat: list[dict[str, Any]], images: list[Image.Image]) -> Any:
        raise NotImplementedError


class _ProcessorInputs(_InputBuilder):
    """The checkpoint's own processor: chat template to text, then text + images to tensors."""

    name = "processor"

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        self.tokenizer = processor.tokenizer

    def build(self, chat: list[dict[str, Any]], images: list[Image.Image]) -> Any:
        text = self.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return self.processor(text=[text], images=images or None, return_tensors="pt")


class _QwenVLInputs(_InputBuilder):
    """Qwen-VL inputs from the tokenizer and the image processor (no processor object)."""

    name = "qwen_vl_parts"

    def __init__(self, tokenizer: Any, image_processor: Any, chat_template: str,
                 image_token: str, image_token_id: int) -> None:
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.chat_template = chat_template
        self.image_token = image_token
        self.image_token_id = image_token_id

    def build(self, chat: list[dict[str, Any]], images: list[Image.Image]) -> Any:
        import torch
        from transformers import BatchFeature

        text = self.tokenizer.apply_chat_template(
            chat, chat_template=self.chat_template, add_generation_prompt=True, tokenize=False
        )
        pixels: dict[str, Any] = {}
        if images:
            pixels = dict(self.image_processor(images=images, return_tensors="pt"))
            merge = int(getattr(self.image_processor, "merge_size", 2)) ** 2
            counts = [int(grid.prod()) // merge for grid in pixels["image_grid_thw"]]
            text = _expand(text, self.image_token, counts)
        encoded = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)
        data = dict(encoded)
        # Qwen-VL's 3-D rotary positions need to know which tokens are image tokens.
        data["mm_token_type_ids"] = (encoded["input_ids"] == self.image_token_id).to(torch.int32)
        data.update(pixels)
        return BatchFeature(data=data)


def _expand(text: str, token: str, counts: list[int]) -> str:
    """Replace the k-th ``token`` in ``text`` with ``counts[k]`` copies of it."""
    parts = text.split(token)
    if len(parts) - 1 != len(counts):
        raise ModelArgError(
            f"the chat template placed {len(parts) - 1} image tokens for {len(counts)} images",
            field="chat_template",
        )
    out = [parts[0]]
    for count, part in zip(counts, parts[1:], strict=True):
        out.append(token * count + part)
    return "".join(out)


class PixelBounds(TypedDict, total=False):
    """The image processor's resize bounds (Qwen-VL's ``min_pixels`` and ``max_pixels``) as
    keyword arguments of ``from_pretrained``: typed by name, so they can never be read as one of
    its own parameters (``config``, ``token``...), whatever a transformers release declares."""

    min_pixels: int
    max_pixels: int


def _input_builder(path: Path, config: Any, pixels: PixelBounds, remote: bool) -> _InputBuilder:
    from transformers import AutoImageProcessor, AutoProcessor, AutoTokenizer

    try:
        processor = AutoProcessor.from_pretrained(
            str(path), local_files_only=True, trust_remote_code=remote, **pixels
        )
        if hasattr(processor, "tokenizer") and hasattr(processor, "image_processor"):
            return _ProcessorInputs(processor)
        failure: Exception = TypeError(f"{type(processor).__name__} has no image processor")
    except (ImportError, AttributeError, ValueError, TypeError, OSError) as error:
        failure = error
    image_token_id = getattr(config, "image_token_id", None)
    if image_token_id is None:
        raise ModelLoadError(f"cannot build the processor: {failure}", path=path) from failure
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True,
                                              trust_remote_code=remote)
    image_processor = AutoImageProcessor.from_pretrained(
        str(path), local_files_only=True, trust_remote_code=remote, **pixels
    )
    template = tokenizer.chat_template or _template_file(path)
    if not template:
        raise ModelLoadError("no chat template in the checkpoint", path=path) from failure
    # one id in, one token out
    token = str(getattr(tokenizer, "image_token", None)
                or tokenizer.convert_ids_to_tokens(int(image_token_id)))
    return _QwenVLInputs(tokenizer, image_processor, template, token, int(image_token_id))


def _template_file(path: Path) -> str | None:
    """The chat template from ``chat_template.jinja`` or ``chat_template.json``, if present."""
    jinja = path / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    packed = path / "chat_template.json"
    if packed.is_file():
        return json.loads(packed.read_text(encoding="utf-8")).get("chat_template")
    return None


def _generation_kwargs(config: GenerateConfig, max_new: int, tokenizer: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"max_new_tokens": max_new}
    if config.temperature is not None and config.temperature > 0:
        kwargs.update(do_sample=True, temperature=config.temperature)
        if config.top_p is not None:
            kwargs["top_p"] = config.top_p
        if config.top_k is not None:
            kwargs["top_k"] = config.top_k
        if config.seed is not None:
            import torch

            torch.manual_seed(config.seed)
    else:
        # Greedy; clear sampling knobs a checkpoint's generation_config may carry.
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    if config.stop_seqs:
        kwargs.update(stop_strings=list(config.stop_seqs), tokenizer=tokenizer)
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is not None:
        kwargs["pad_token_id"] = pad
    return kwargs


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    found = getattr(model.generation_config, "eos_token_id", None)
    ids = set(found if isinstance(found, list) else [found] if found is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids


def _path_from_name(model_name: str) -> str | None:
    """``hf/<path>`` -> ``<path>`` (the provider prefix ``m3kit/`` is already gone)."""
    head, _, rest = model_name.partition("/")
    if head != "hf":
        return None
    return rest or None


def _resolve_device(device: str, torch: Any) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelArgError("device is cuda but no GPU is visible", field="device")
    return device


def _resolve_dtype(dtype: str, device: str, torch: Any) -> str:
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float32"
