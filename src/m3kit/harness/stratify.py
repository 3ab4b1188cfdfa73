"""``--limit N --stratify``: N samples spread evenly over a benchmark's strata.

``--limit N`` alone takes the first N samples, and a data set stored by question type then
yields one type only (M3Exam's ``--limit 20``: only ``ss``). Stratified, the samples are taken
round-robin over the strata (question types, in the order they first appear), in data set
order within each, so every stratum gets ``N // strata`` samples or one more, until a stratum
runs out and the others fill in. The stratum of a sample is a field of its ``Question``
(``question_type`` by default: each benchmark declares its own as ``Benchmark.stratum``) or a
key of the question's metadata (``metadata.<key>``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from m3kit.errors import M3kitError
from m3kit.schema.evallog import QUESTION_KEY

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample

__all__ = ["DEFAULT_STRATUM", "NO_STRATUM", "sample_stratum", "stratified_ids"]

DEFAULT_STRATUM = "question_type"
NO_STRATUM = "(none)"  # the stratum of a sample whose question does not say


def sample_stratum(sample: Sample, stratum: str = DEFAULT_STRATUM) -> str:
    """The stratum of ``sample``: its question's field ``stratum``, or the question metadata's
    key ``<key>`` for ``metadata.<key>``; several joined by ``+`` (``question_type+metadata.
    condition``: one stratum per pair of values, ``"nback/n1k3"``); ``NO_STRATUM`` when the
    question or every value is missing (a task m3kit does not own)."""
    question: dict[str, Any] = (sample.metadata or {}).get(QUESTION_KEY) or {}
    values = [_field(question, key) for key in stratum.split("+")]
    if all(v is None for v in values):
        return NO_STRATUM
    return "/".join("-" if v is None else str(v) for v in values)


def _field(question: dict[str, Any], key: str) -> Any:
    if key.startswith("metadata."):
        return (question.get("metadata") or {}).get(key.removeprefix("metadata."))
    return question.get(key)


def stratified_ids(samples: Sequence[Sample], limit: int,
                   stratum_of: Callable[[Sample], str] = sample_stratum) -> list[str | int]:
    """The ids of ``limit`` samples taken round-robin over the strata of ``samples`` (strata in
    order of first appearance, samples in data set order within each); every sample's id
    when ``limit`` is at least their number."""
    if limit < 1:
        raise M3kitError(f"--limit must be at least 1 with --stratify, got {limit}",
                         field="limit")
    strata: dict[str, list[Sample]] = {}
    for sample in samples:
        strata.setdefault(stratum_of(sample), []).append(sample)
    chosen: list[Sample] = []
    queues = [list(members) for members in strata.values()]
    depth = 0
    while len(chosen) < limit and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < limit:
                chosen.append(queue[depth])
        depth += 1
    ids: list[str | int] = []
    for sample in chosen:
        if sample.id is None:
            raise M3kitError("--stratify needs sample ids: the task's samples have none",
                             field="stratify")
        ids.append(sample.id)
    return ids
