"""Every benchmark declaration's pointers resolve, to the parts the protocol types say; the one
loop over a run's samples applies a declaration's failure policy; a scorer's metrics build one
card per list of scores."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from m3kit.benchmarks import BENCHMARKS, Benchmark, Ref
from m3kit.benchmarks.declaration import FailurePolicy, Treatment
from m3kit.benchmarks.logged import Outcome, logged_items
from m3kit.benchmarks.once_per_scores import OncePerScores
from m3kit.benchmarks.protocol import BenchmarkReporting, BenchmarkScoring
from m3kit.schema import MEDIA_FAILURE, ScoreItem
from m3kit.schema.evallog import LoggedSample

NAMES = [b.name for b in BENCHMARKS]


def refs_of(declared: Benchmark) -> list[tuple[str, Ref[Any]]]:
    """Every ``Ref`` the declaration holds, by field (a tuple's members each)."""
    out = []
    for field in dataclasses.fields(declared):
        value = getattr(declared, field.name)
        members = value if isinstance(value, tuple) else (value,)
        out += [(field.name, ref) for ref in members if isinstance(ref, Ref)]
    return out


@pytest.mark.parametrize("declared", BENCHMARKS, ids=NAMES)
def test_every_ref_resolves_inside_the_benchmark_folder(declared: Benchmark) -> None:
    refs = refs_of(declared)
    # the scoring, the report, and the solvers and scorer the registry exposes by name
    assert sorted({name for name, _ in refs}) == ["components", "reporting", "scoring"]
    for name, ref in refs:
        module = ref.target.partition(":")[0]
        assert module.startswith(f"m3kit.benchmarks.{declared.name}."), (name, ref.target)
        assert ref.load() is not None, (name, ref.target)
    for ref in declared.components:
        assert callable(ref.load()) and ref.load().__name__ == ref.target.rpartition(":")[2]
    assert declared.scorer in {ref.load().__name__ for ref in declared.components}


@pytest.mark.parametrize("declared", BENCHMARKS, ids=NAMES)
def test_the_parts_are_the_protocols(declared: Benchmark) -> None:
    scoring = declared.scoring.load()
    reporting = declared.reporting.load()
    assert isinstance(scoring, BenchmarkScoring) and isinstance(reporting, BenchmarkReporting)
    assert issubclass(scoring.item, ScoreItem)
    # every part is declared: the score, its text, intervals, paired tests, the card
    assert all(getattr(scoring, f.name) is not None for f in dataclasses.fields(scoring))
    # each option of ``m3kit score <verb>`` is a keyword of score_predictions, and one that
    # items_from_predictions takes (the intervals read the items with the score's options)
    options = {o.name for o in declared.score_command.options}
    assert options <= set(inspect.signature(scoring.score_predictions).parameters)
    assert scoring.items_from_predictions is not None
    taken = inspect.signature(scoring.items_from_predictions).parameters
    assert options <= set(taken) or any(p.kind is p.VAR_KEYWORD for p in taken.values())


def test_m3exam_alone_leaves_errored_samples_out() -> None:
    policies = {b.name: b.failures for b in BENCHMARKS}
    assert {"m3eval", "m3exam", "supermemory", "videomme_v2"} <= set(policies)
    assert policies.pop("m3exam") == FailurePolicy(errored=Treatment.LEFT_OUT,
                                                   unreadable_media=Treatment.COUNTED_WRONG)
    # the documented rule: a failed sample counts wrong, unreadable media are left out
    assert set(policies.values()) == {FailurePolicy()}
    assert FailurePolicy() == FailurePolicy(errored=Treatment.COUNTED_WRONG,
                                            unreadable_media=Treatment.LEFT_OUT)


class Record(ScoreItem):
    letter: str


class OtherRecord(ScoreItem):
    letter: str


SAMPLES = [
    LoggedSample(id="scored", item=Record(status="correct", letter="A")),
    LoggedSample(id="unreadable", failure=f"{MEDIA_FAILURE} no such file",
                 item=Record(status="failed", letter="")),
    LoggedSample(id="errored", error="RuntimeError: boom"),
    LoggedSample(id="no record"),
    # a record read as another type: the benchmark's where its fields make one
    LoggedSample(id="base", item=OtherRecord(status="incorrect", letter="B")),
    LoggedSample(id="not ours", item=ScoreItem(status="correct")),
]


def test_one_loop_applies_the_default_policy() -> None:
    logged = logged_items(SAMPLES, Record, FailurePolicy())
    assert [(e.sample.id, e.outcome) for e in logged] == [
        ("scored", Outcome.COUNTED), ("unreadable", Outcome.EXCLUDED),
        ("errored", Outcome.COUNTED), ("no record", Outcome.COUNTED),
        ("base", Outcome.COUNTED), ("not ours", Outcome.COUNTED)]
    items = {e.sample.id: e.item for e in logged}
    assert items["scored"] == Record(status="correct", letter="A", id="scored")
    assert items["errored"] is None and items["no record"] is None  # failed: counted wrong
    assert items["base"] == Record(status="incorrect", letter="B", id="base")
    assert items["not ours"] is None  # no letter: not the benchmark's record


def test_one_loop_applies_a_declared_policy() -> None:
    policy = FailurePolicy(errored=Treatment.LEFT_OUT, unreadable_media=Treatment.COUNTED_WRONG)
    logged = logged_items(SAMPLES, Record, policy)
    assert [(e.sample.id, e.outcome) for e in logged] == [
        ("scored", Outcome.COUNTED), ("unreadable", Outcome.COUNTED),
        ("errored", Outcome.LEFT_OUT), ("no record", Outcome.LEFT_OUT),
        ("base", Outcome.COUNTED), ("not ours", Outcome.LEFT_OUT)]
    # an unreadable sample counted wrong keeps its failed record
    assert logged[1].item == Record(status="failed", letter="", id="unreadable")


def test_a_card_is_built_once_per_list_of_scores() -> None:
    built: list[int] = []

    def build(scores: list[Any]) -> int:
        built.append(len(scores))
        return sum(scores)

    card = OncePerScores(build)
    scores = [1, 2, 3]
    assert card(scores) == card(scores) == 6  # two metrics of one scorer: one card
    assert built == [3]
    assert card([1, 2, 3]) == 6 and built == [3, 3]  # another list: built again
    scores.append(4)
    assert card(scores) == 10 and built == [3, 3, 4]  # the list grew while kept: built again
