"""Registers m3kit's model providers with inspect-ai under the API name ``m3kit``.

inspect splits a model name at its first slash into the API and the model, so
``m3kit/builtin`` reaches the ``m3kit`` API with model name ``builtin``, and
``m3kit/hf/<path>`` reaches it with ``hf/<path>``. One registered factory therefore dispatches
on the model name:

- ``m3kit/builtin``: ``BuiltinModelAPI``, the offline text-surrogate baseline (not a VLM);
- ``m3kit/hf/<path>`` or ``m3kit/hf -M model_path=<path>``: ``HFVisionModelAPI``, a local
  transformers VLM run in-process.

Importing this module registers the API (``m3kit.registry``, loaded by inspect through the
``inspect_ai`` entry point, imports it). The provider classes load lazily: importing this
module pulls in neither torch nor transformers.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

from m3kit.models.errors import ModelArgError

MODELS = ("builtin", "hf")


def create_model_api(
    model_name: str,
    base_url: str | None = None,
    api_key: str | None = None,
    config: GenerateConfig | None = None,
    **model_args: Any,
) -> ModelAPI:
    """The provider for ``m3kit/<model_name>`` (``builtin`` or ``hf[/<path>]``)."""
    family = model_name.split("/", 1)[0]
    if family == "builtin":
        from m3kit.models.builtin import BuiltinModelAPI

        return BuiltinModelAPI(model_name, base_url, api_key, config, **model_args)
    if family == "hf":
        from m3kit.models.hf import HFVisionModelAPI

        return HFVisionModelAPI(model_name, base_url, api_key, config, **model_args)
    raise ModelArgError(
        f"unknown m3kit model {model_name!r}; known: m3kit/builtin, m3kit/hf/<path>",
        record=f"m3kit/{model_name}",
    )


@modelapi(name="m3kit")
def m3kit() -> Any:
    # inspect calls the registered function with no arguments, then calls what it returns
    # with the model name and args: returning a factory (not a class) lets one API name serve
    # several providers.
    return create_model_api
