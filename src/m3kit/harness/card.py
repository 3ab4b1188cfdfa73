"""The run's reproducibility card (``m3kit.schema.card.ReproCard``): the task's part completed
with the versions, the model, its arguments, base URL and generation config; and the data
set's fingerprint a task records (``data_fingerprint``).

Credentials never enter a card: the model's arguments and base URL pass through
``m3kit.models.redact.public_model_args`` and ``public_base_url``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m3kit import package_version
from m3kit.errors import MediaError
from m3kit.harness.environment import environment_card
from m3kit.media.identity import IdentityCache
from m3kit.models.redact import public_base_url, public_model_args
from m3kit.schema.card import (
    CARD_KEY,
    TASK_CARD_KEY,
    FramePolicyCard,
    ReproCard,
    file_sha256,
    files_fingerprint,
)

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.model import Model

__all__ = [
    "card_metadata",
    "data_fingerprint",
    "frame_policy_card",
    "package_version",
    "predictions_card",
    "run_card",
    "task_card",
    "task_card_metadata",
]


def frame_policy_card(frames: int | None, fps: float | None, max_side: int | None, *,
                      blind: bool = False, default: str | None = None) -> FramePolicyCard:
    """A task's frame options as the card's policy: ``none`` (blind, or ``frames=0``),
    ``fps`` (``frames`` then caps the count) or ``uniform`` (``frames`` per video; ``None``:
    the benchmark's ``default``, described)."""
    if blind or frames == 0:
        return FramePolicyCard(policy="none", count=0, max_side=max_side)
    if fps is not None:
        return FramePolicyCard(policy="fps", count=frames, fps=fps, max_side=max_side)
    return FramePolicyCard(policy="uniform", count=frames, max_side=max_side,
                           default=default if frames is None else None)


def data_fingerprint(question_files: Sequence[str | Path],
                     media_files: Iterable[str | Path] = (), *,
                     identities: IdentityCache | None = None) -> str | None:
    """The fingerprint of a data set (``m3kit.schema.card.files_fingerprint``): its question
    files, whole, then every media file its samples read (videos, transcripts, subtitles,
    images, PDFs: each benchmark's loader lists them), each by its sampled content identity
    (``m3kit.media.identity``: the size and the first, middle and last MiB, so a multi-GB video
    costs 3 MiB of reading), each file once, where the list first names it. A media file that
    is not there or cannot be read counts as absent (a sample that needs it fails by name).
    ``identities``: a cache to share between several fingerprints of one process (a file is
    hashed again only when its stat changes). ``None`` without question files (questions built
    in code)."""
    if not question_files:
        return None
    cache = identities if identities is not None else IdentityCache()
    seen: set[str] = set()
    media: list[str | None] = []
    for path in media_files:
        name = os.path.abspath(path)
        if name in seen:
            continue
        seen.add(name)
        try:
            media.append(cache.identity(path))
        except MediaError:
            media.append(None)
    return files_fingerprint(question_files, media)


def task_card_metadata(card: ReproCard) -> dict[str, Any]:
    """The task's part of the card as task metadata (``TASK_CARD_KEY``)."""
    return {TASK_CARD_KEY: card.model_dump(mode="json", exclude_defaults=True)}


def task_card(task: Task | None) -> ReproCard:
    """The part of the card a task recorded in its metadata (an empty card for a task that
    recorded none)."""
    raw = ((task.metadata or {}) if task is not None else {}).get(TASK_CARD_KEY)
    return ReproCard.model_validate(raw) if raw is not None else ReproCard()


def run_card(
    task: Task | None,
    model: Model,
    *,
    model_args: Mapping[str, Any] | None = None,
    generate_config: Mapping[str, Any] | None = None,
) -> ReproCard:
    """The whole card of a run of ``task`` (``None``: a task inspect builds itself) on
    ``model``: the task's part, the m3kit and inspect-ai versions, the environment and its lock
    (``m3kit.harness.environment``), the model's name, arguments
    (``model_args`` as given, else the model's own) and base URL, and the generation config
    (the model's, then the task's, then ``generate_config`` from the run)."""
    config: dict[str, Any] = model.config.model_dump(mode="json", exclude_none=True)
    if task is not None and task.config is not None:
        config |= task.config.model_dump(mode="json", exclude_none=True)
    config |= {k: v for k, v in (generate_config or {}).items() if v is not None}
    args = model_args if model_args is not None else getattr(model, "model_args", {})
    return task_card(task).model_copy(update={
        "m3kit_version": package_version("m3kit"),
        "inspect_ai_version": package_version("inspect_ai"),
        "environment": environment_card(),
        "model": str(model),
        "model_args": public_model_args(args),
        "model_base_url": public_base_url(getattr(model.api, "base_url", None)),
        "generate_config": public_model_args(config),
    })


def card_metadata(card: ReproCard) -> dict[str, Any]:
    """The card as the run's eval metadata (``CARD_KEY``)."""
    return {CARD_KEY: card.model_dump(mode="json")}


def predictions_card(card: ReproCard, predictions: Path) -> ReproCard:
    """The card of a score of an external predictions file: ``card`` (the benchmark's data
    fingerprint and scoring rules) with the versions and the file's sha256 (``None`` when
    ``predictions`` is not a file); the model is unknown (``None``)."""
    predictions = Path(predictions)
    return card.model_copy(update={
        "m3kit_version": package_version("m3kit"),
        "inspect_ai_version": package_version("inspect_ai"),
        "environment": environment_card(),
        "model": None,
        "predictions_sha256": file_sha256(predictions) if predictions.is_file() else None,
    })
