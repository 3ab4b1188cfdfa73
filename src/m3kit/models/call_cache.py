"""Finished model calls on disk, so a rerun or a killed run of a construction pipeline redoes
nothing that finished.

Construction is hours of model calls on a real benchmark. Both stores key what they keep by
``call_key``: the hash of the model, its generate settings and the inputs, so a changed model,
prompt, setting or input file is asked again and anything else is replayed.

- ``CachedBackend`` wraps a ``TextBackend``: every reply is appended to a JSONL transcript the
  moment it returns and replayed to the same request later (a line cut by a kill is skipped and
  that call made again). The transcript is also the record of every call a dataset came from.
- ``ResultCache`` keeps units of finished work made of several calls (the captions of one
  video, the accepted reply for one question job) as one JSON file per unit under
  ``<folder>/<kind>/<name>.json``, written atomically; a unit whose key changed is redone.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from m3kit.files import atomic_write_text
from m3kit.models.backend import BackendRequest, TextBackend, backend_name

__all__ = ["CachedBackend", "ResultCache", "call_key"]

M = TypeVar("M", bound=BaseModel)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def call_key(model: str, *parts: Any) -> str:
    """The hash of ``model`` and ``parts`` (JSON-able: prompts, settings, file stamps)."""
    text = json.dumps([model, *parts], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _settings(backend: TextBackend) -> Any:
    settings = getattr(backend, "settings", None)
    return settings() if callable(settings) else None


class CachedBackend:
    """``inner`` with its replies kept in the JSONL file ``path`` and replayed to the same
    request (same model, settings, stage, item, attempt, prompt and images)."""

    def __init__(self, inner: TextBackend, path: Path) -> None:
        self.inner = inner
        self.name = backend_name(inner)
        self.path = Path(path)
        self._settings = _settings(inner)
        self._answers: dict[str, str] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                    self._answers[record["key"]] = record["response"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut by a kill: that call is simply made again

    def key(self, request: BackendRequest) -> str:
        return call_key(self.name, self._settings, request.key())

    def complete(self, request: BackendRequest) -> str:
        key = self.key(request)
        if key in self._answers:
            return self._answers[key]
        response = self.inner.complete(request)
        self._answers[key] = response
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": key, "stage": request.stage, "item": request.item,
                                 "response": response}) + "\n")
        return response


class _Entry(BaseModel):
    key: str
    value: dict[str, Any]


class ResultCache:
    """Units of finished work under ``folder``, for the model ``model``."""

    def __init__(self, folder: str | Path, model: str) -> None:
        self.folder = Path(folder)
        self.model = model

    def key(self, *parts: Any) -> str:
        """``call_key`` of this cache's model and ``parts``."""
        return call_key(self.model, *parts)

    def path(self, kind: str, name: str) -> Path:
        return self.folder / kind / f"{_UNSAFE.sub('_', name)}.json"

    def get(self, kind: str, name: str, key: str, model: type[M]) -> M | None:
        """The stored unit, or None when absent, stale (another key) or unreadable."""
        try:
            entry = _Entry.model_validate_json(self.path(kind, name).read_bytes())
            if entry.key != key:
                return None
            return model.model_validate(entry.value)
        except (OSError, ValidationError, ValueError):
            return None

    def put(self, kind: str, name: str, key: str, value: BaseModel) -> None:
        entry = _Entry(key=key, value=value.model_dump(mode="json"))
        atomic_write_text(self.path(kind, name), entry.model_dump_json())
