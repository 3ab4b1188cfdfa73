"""The reproducibility card: everything a benchmark number depends on besides the model's
weights, recorded with the number.

Scores in these papers differ by a few points between systems, and a number whose frame count,
resolution, prompt or data version was not recorded cannot be reproduced (nor told apart from
one that differs in them). A ``ReproCard`` names them: the m3kit and inspect-ai versions, the
model and its arguments (credentials never: the card is built by ``m3kit.harness.card``, which
redacts them), the generation config, the frame policy and the frames actually sent, the prompt
template (its text and sha256), the subtitle mode, the memory and its config, the judge model,
the data set's fingerprint (``files_fingerprint``: its question files whole and the content
identity of every media file its samples read) and the scoring rule variants in force. A task
records the part it knows (``TASK_CARD_KEY`` in its metadata); the harness's run completes it
with the model and versions (``CARD_KEY``); ``m3kit score --json`` writes the card of an
external predictions file (model ``null``, the predictions file's sha256).

``card_differences`` lists the field paths in which two cards differ (``m3kit compare`` warns
about all but the model's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import SchemaError

__all__ = [
    "CARD_KEY",
    "RUN_FIELDS",
    "TASK_CARD_KEY",
    "EnvironmentCard",
    "FramePolicyCard",
    "FramesSent",
    "ReproCard",
    "card_differences",
    "file_sha256",
    "files_fingerprint",
    "text_sha256",
]

# task metadata: the part of the card the task knows (data, prompt, frames, scoring...)
TASK_CARD_KEY = "m3kit_task_card"
# eval metadata: the whole card as the harness's run recorded it (model and versions added)
CARD_KEY = "m3kit_card"
# The fields the run adds to the task's part (``m3kit.harness.card.run_card``); every other
# field but ``frames_sent`` (which the report counts) is the task's.
RUN_FIELDS = ("m3kit_version", "inspect_ai_version", "environment", "model", "model_args",
              "model_base_url", "generate_config")

_CHUNK = 1 << 20


def text_sha256(text: str) -> str:
    """The sha256 (hex) of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _digest(path: Path) -> bytes:
    sha = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                sha.update(chunk)
    except OSError as exc:
        raise SchemaError(f"cannot read the file to fingerprint it: {exc.strerror or exc}",
                          path=path) from None
    return sha.digest()


def file_sha256(path: str | Path) -> str:
    """The sha256 (hex) of one file's bytes."""
    return _digest(Path(path)).hex()


# Separates the media part from the question files' digests (32 bytes each: a marker of
# another length can never be read as one of them).
_MEDIA_MARKER = b"m3kit-data-media-v1"
# Each media entry is tagged: present (its 32-byte identity follows) or absent (a file the data
# names that is not there or cannot be read, so that it appearing later changes the fingerprint).
_PRESENT, _ABSENT = b"\x01", b"\x00"


def files_fingerprint(paths: Iterable[str | Path], media: Sequence[str | None] = ()) -> str:
    """The fingerprint of a data set: sha256 over the sha256 of each question file's bytes,
    in the order given (each loader lists its question files in a fixed order), then, when the
    data set has media, a marker and the content identity of each media file its samples read
    (``media``: hex identities, ``m3kit.media.identity``, in load order; ``None`` for one that
    is not there). File names and folders do not enter it, so a copy of the same files
    elsewhere has the same fingerprint; one byte changed in a question file, or a media file
    replaced, changes it. A data set without media has the fingerprint of its question files
    alone (as before media entered it)."""
    sha = hashlib.sha256()
    for path in paths:
        sha.update(_digest(Path(path)))
    if media:
        sha.update(_MEDIA_MARKER)
        for identity in media:
            sha.update(_PRESENT + bytes.fromhex(identity) if identity is not None else _ABSENT)
    return sha.hexdigest()


class FramePolicyCard(BaseModel):
    """The frames a task asks for: ``policy`` (``uniform``, ``fps``, ``none``), ``count`` (the
    frames per video, or the cap under ``fps``; ``None``: the benchmark's own default, which
    ``default`` describes), ``fps`` and ``max_side`` (frames shrunk to fit, ``None``: as
    decoded)."""

    model_config = ConfigDict(frozen=True)

    policy: str
    count: int | None = None
    fps: float | None = None
    max_side: int | None = None
    default: str | None = None


class EnvironmentCard(BaseModel):
    """The Python environment of a run (``m3kit.harness.environment``): ``packages``
    distributions installed, ``packages_sha256`` over their sorted ``name==version`` lines (two
    runs with equal hashes ran the same versions of everything); ``lock``, the lock it was
    installed from (``main``, ``cognee``: ``requirements/<lock>.lock``; ``None`` outside a
    checkout), ``lock_sha256`` its files' identity and ``lock_differs`` the locked packages
    installed at another version (``name installed (locked version)``)."""

    model_config = ConfigDict(frozen=True)

    packages: int
    packages_sha256: str
    lock: str | None = None
    lock_sha256: str | None = None
    lock_differs: tuple[str, ...] = ()

    def text(self) -> str:
        """One line: ``lock main 1a2b3c4d5e6f (as locked) · 183 packages 9f8e7d6c5b4a``."""
        packages = f"{self.packages} packages {self.packages_sha256[:12]}"
        if self.lock is None or self.lock_sha256 is None:
            return f"no lock · {packages}"
        state = (f"{len(self.lock_differs)} differ: {', '.join(self.lock_differs)}"
                 if self.lock_differs else "as locked")
        return f"lock {self.lock} {self.lock_sha256[:12]} ({state}) · {packages}"


class FramesSent(BaseModel):
    """The frames actually sent per sample over the samples that had a solver record: how many
    samples, and the mean, least and most frames one of them was shown."""

    model_config = ConfigDict(frozen=True)

    samples: int
    mean: float | None = None
    min: int | None = None
    max: int | None = None

    @classmethod
    def of(cls, counts: Sequence[int]) -> FramesSent:
        if not counts:
            return cls(samples=0)
        return cls(samples=len(counts), mean=round(fmean(counts), 3), min=min(counts),
                   max=max(counts))


class ReproCard(BaseModel):
    """How a run (or a score of external predictions) was made; see the module doc.

    ``scoring``: the scoring rule variants in force, by name (``fj: exact``...); ``settings``:
    the benchmark's further answer-changing settings (M3Exam's regime and its limits,
    Video-MME-v2's reasoning prompt); ``predictions_sha256``: the scored predictions file (score
    cards of external predictions only, whose ``model`` is ``None``: unknown)."""

    model_config = ConfigDict(frozen=True)

    m3kit_version: str | None = None
    inspect_ai_version: str | None = None
    environment: EnvironmentCard | None = None
    benchmark: str | None = None
    task: str | None = None
    model: str | None = None
    model_args: dict[str, Any] = Field(default_factory=dict)
    model_base_url: str | None = None
    generate_config: dict[str, Any] = Field(default_factory=dict)
    frames: FramePolicyCard | None = None
    frames_sent: FramesSent | None = None
    prompt_sha256: str | None = None
    prompt_template: str | None = None
    subtitles: str | None = None
    blind: bool = False
    memory: str | None = None
    memory_config: dict[str, Any] | None = None
    judge_model: str | None = None
    data_fingerprint: str | None = None
    scoring: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    predictions_sha256: str | None = None

    @classmethod
    def with_prompt(cls, template: str, **fields: Any) -> ReproCard:
        """A card whose prompt is ``template`` (its text and sha256)."""
        return cls(prompt_template=template, prompt_sha256=text_sha256(template), **fields)

    def with_task_part(self, task_part: ReproCard) -> ReproCard:
        """This run's card with the task's part taken from ``task_part``: the run's own
        fields (``RUN_FIELDS``, ``frames_sent``) kept, every other one ``task_part``'s."""
        return task_part.model_copy(update={name: getattr(self, name)
                                             for name in (*RUN_FIELDS, "frames_sent")})

    def frames_text(self) -> str:
        """The frame policy on one line: ``96 uniform``, ``0.5 fps (max 64)``, ``none``,
        ``uniform (default: 96, 144 repetition, 8 per N-Back clip)``; with ``max_side``."""
        frames = self.frames
        if frames is None:
            return "-"
        if frames.policy == "fps":
            text = f"{frames.fps:g} fps" + (f" (max {frames.count})" if frames.count else "")
        elif frames.policy == "none" or frames.count == 0:
            text = "none"
        elif frames.count is None:
            text = f"{frames.policy} ({frames.default or 'default'})"
        else:
            text = f"{frames.count} {frames.policy}"
        return text + (f", max side {frames.max_side}" if frames.max_side else "")

    def summary_line(self) -> str:
        """``m3kit eval``'s line: model · memory · frames · blind · data fingerprint[:12]."""
        parts = [
            self.model or "model unknown",
            f"memory {self.memory}" if self.memory else "no memory",
            f"frames {self.frames_text()}",
            "blind" if self.blind else "not blind",
            f"data {self.data_fingerprint[:12]}" if self.data_fingerprint else "data unknown",
        ]
        return " · ".join(parts)

    def rows(self) -> list[tuple[str, str]]:
        """The card as (field, value) rows for a report table, the prompt by its hash."""
        sent = self.frames_sent
        values: list[tuple[str, Any]] = [
            ("m3kit", self.m3kit_version), ("inspect-ai", self.inspect_ai_version),
            ("environment", self.environment.text() if self.environment else None),
            ("benchmark", self.benchmark), ("task", self.task), ("model", self.model),
            ("model arguments", self.model_args or None),
            ("model base URL", self.model_base_url),
            ("generation config", self.generate_config or None),
            ("frame policy", self.frames_text() if self.frames else None),
            ("frames sent", None if sent is None or not sent.samples else
             f"mean {sent.mean:g}, min {sent.min}, max {sent.max} ({sent.samples} samples)"),
            ("prompt sha256", self.prompt_sha256), ("subtitles", self.subtitles),
            ("blind", "yes" if self.blind else "no"), ("memory", self.memory),
            ("memory config", self.memory_config or None), ("judge model", self.judge_model),
            ("data fingerprint", self.data_fingerprint),
            ("scoring", ", ".join(f"{k}: {v}" for k, v in self.scoring.items()) or None),
            ("settings", self.settings or None),
            ("predictions sha256", self.predictions_sha256),
        ]
        return [(name, _cell(value)) for name, value in values if value is not None]


def _cell(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    return str(value)


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):  # an empty mapping adds no path
        for key, item in value.items():
            _flat(item, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value


def card_differences(a: ReproCard, b: ReproCard, *,
                     ignore: Sequence[str] = ("model", "model_args")) -> list[str]:
    """The field paths (``frames.count``, ``scoring.fj``, ``model_args.temperature``) whose
    values differ between ``a`` and ``b`` (a path present in one card only differs), sorted;
    paths under a field named in ``ignore`` are left out."""
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    _flat(a.model_dump(mode="json"), "", left)
    _flat(b.model_dump(mode="json"), "", right)
    ignored = set(ignore)
    return sorted(
        path for path in set(left) | set(right)
        if path.split(".", 1)[0] not in ignored
        and (path not in left or path not in right or left[path] != right[path])
    )
