"""A run's samples as a benchmark's numbers count them: the one loop every benchmark's
``score.py`` reads an eval log's samples with (its card, its per-item records, ``m3kit eval``'s
table).

Each sample is one of three (``LoggedItem.outcome``): *counted*, with the benchmark's per-item
record (``None`` when the sample got none: inspect recorded it as errored, or it has no score of
the benchmark's scorer; the benchmark scores it as it scores a failed answer); *excluded*, its
media could not be read (``m3kit.schema.LoggedSample.excluded``); *left out*, a sample without a
record that the benchmark's ``FailurePolicy`` leaves out of its numbers. The policy is the
benchmark's declaration's (``Benchmark.failures``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic

from pydantic import ValidationError

from m3kit.benchmarks.declaration import FailurePolicy, Treatment
from m3kit.benchmarks.protocol import ItemT
from m3kit.schema.evallog import LoggedSample

__all__ = ["LoggedItem", "Outcome", "logged_items"]


class Outcome(StrEnum):
    """How a benchmark's numbers take one logged sample."""

    COUNTED = "counted"
    EXCLUDED = "excluded"
    LEFT_OUT = "left out"


@dataclass(frozen=True)
class LoggedItem(Generic[ItemT]):
    """One logged sample and how the numbers take it: its per-item record (the question's id
    set; ``None`` where the sample has none of the benchmark's) and its ``outcome``."""

    sample: LoggedSample
    item: ItemT | None
    outcome: Outcome

    @property
    def counted(self) -> bool:
        return self.outcome is Outcome.COUNTED


def logged_items(samples: Sequence[LoggedSample], item_type: type[ItemT],
                 policy: FailurePolicy) -> list[LoggedItem[ItemT]]:
    """Each of ``samples``, in log order, with its record as ``item_type`` and its outcome
    under ``policy`` (the module docstring has the rule)."""
    out: list[LoggedItem[ItemT]] = []
    for sample in samples:
        item = _record(sample, item_type)
        if sample.excluded and policy.unreadable_media is Treatment.LEFT_OUT:
            outcome = Outcome.EXCLUDED
        elif item is None and policy.errored is Treatment.LEFT_OUT:
            outcome = Outcome.LEFT_OUT
        else:
            outcome = Outcome.COUNTED
        out.append(LoggedItem(sample=sample, item=item, outcome=outcome))
    return out


def _record(sample: LoggedSample, item_type: type[ItemT]) -> ItemT | None:
    """The sample's record as ``item_type``, with the sample's id; ``None`` for a sample inspect
    recorded as errored, one without a record, or one whose record is not the benchmark's."""
    item = sample.item
    if sample.error is not None or item is None:
        return None
    if isinstance(item, item_type):
        return item.model_copy(update={"id": sample.id})
    try:  # a record read as another ScoreItem: the benchmark's, if its fields make one
        return item_type.model_validate({**item.model_dump(), "id": sample.id})
    except ValidationError:
        return None
