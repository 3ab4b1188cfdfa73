"""``m3kit score <verb>`` is built from a declaration alone: each declared ``ScoreOption``
reaches ``score_predictions`` as its keyword, typed; skips and unmatched ids are reported the
same way for every verb; a benchmark that cannot score anything exits 2."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from m3kit.benchmarks import Benchmark, Ref, ScoreCommand, ScoreOption
from m3kit.benchmarks.protocol import BenchmarkReporting, BenchmarkScoring
from m3kit.cli.score import build_score_command
from m3kit.schema import NothingToScoreError, PredictionsCard, ScoreItem, SkippedRecord
from m3kit.schema.report import Table


@dataclass(frozen=True)
class Given(Ref):
    """A reference to an object already at hand (the declaration under test lives here)."""

    value: Any = None

    def load(self) -> Any:
        return self.value


class EchoCard(PredictionsCard):
    data: str
    predictions: str
    options: dict[str, Any]


def echo_score(data: Path, predictions: Path, **options: Any) -> EchoCard:
    if options["limit"] == 0:
        raise NothingToScoreError("nothing to score", path=data,
                                  skipped=[SkippedRecord.at(data, 1, "unreadable", "x")])
    skipped = [SkippedRecord.at(predictions, n, "not JSON") for n in range(1, 8)]
    card = EchoCard(data=data.name, predictions=predictions.name, options=options)
    return card.with_skips(skipped, ["u1", "u2"], ["3 questions have no prediction"])


def echo_text(card: EchoCard, predictions: Path) -> list[Any]:
    return [f"read {predictions.name}",
            Table(title="echo", columns=["key", "value"],
                  rows=[[k, repr(v)] for k, v in sorted(card.options.items())])]


def _unused(*_: Any) -> Any:
    raise AssertionError("not part of the score verb")


ECHO = Benchmark(
    name="echo", title="Echo", tasks=("echo",), task_module="echo.task", scorer="echo",
    scoring=Given("-", BenchmarkScoring(item=ScoreItem, score_predictions=echo_score,
                                        scores_from_log=_unused, score_text=echo_text,
                                        summary_rows=_unused)),
    reporting=Given("-", BenchmarkReporting(sections=_unused, system_label=_unused)),
    score_command=ScoreCommand(
        verb="echo", help="Echo the options.", data_help="Data.", predictions_help="Predictions.",
        options=(
            ScoreOption("limit", ("--limit",), type=int, default=5, help="A number."),
            ScoreOption("tags", ("--tag",), multiple=True, help="Repeatable."),
            ScoreOption("model_args", ("-K",), key_values=True, help="key=value pairs."),
            ScoreOption("rule", ("--loose",), flag=True, default="strict", on="loose",
                        help="A switch."),
            ScoreOption("review", ("--review",), type=Path, help="An optional path."),
        ),
    ),
)


def _run(*args: str) -> Any:
    app = typer.Typer()
    app.command("echo")(build_score_command(ECHO))
    app.command("other")(lambda: None)  # two commands: typer keeps the verb's name
    return CliRunner().invoke(app, ["echo", "--data", "d", "--predictions", "p.jsonl", *args])


def test_declared_options_reach_score_predictions_typed() -> None:
    result = _run("--json", "--limit", "3", "--tag", "a", "--tag", "b", "-K", "n=2",
                  "-K", "flag=yes", "--loose", "--review", "r.json")
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    assert card["options"] == {"limit": 3, "tags": ["a", "b"], "model_args": {"n": 2, "flag": True},
                               "rule": "loose", "review": "r.json"}
    # what was skipped closes the JSON: 7 records, 2 unmatched ids
    assert list(card)[-3:] == ["n_skipped_records", "n_unmatched_predictions", "skipped"]
    assert (card["n_skipped_records"], card["n_unmatched_predictions"]) == (7, 2)
    assert card["skipped"][0] == {"file": "p.jsonl", "record": "1", "field": None,
                                  "reason": "not JSON"}


def test_defaults_when_options_are_not_given() -> None:
    result = _run("--json")
    assert json.loads(result.stdout)["options"] == {
        "limit": 5, "tags": None, "model_args": {}, "rule": "strict", "review": None}


def test_skips_unmatched_ids_and_notes_on_stderr() -> None:
    result = _run()
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        *(f"m3kit: skipped: p.jsonl: record {n}: not JSON" for n in range(1, 6)),
        'm3kit: ... and 2 more skipped (all are listed under "skipped" in --json)',
        "m3kit: 2 predictions match no question: u1, u2",
        "m3kit: 3 questions have no prediction",
    ]
    assert result.stdout.startswith("read p.jsonl\n") and "echo" in result.stdout
    assert "'strict'" in result.stdout  # the table of options, drawn by rich


def test_nothing_to_score_names_the_skips_then_fails() -> None:
    result = _run("--limit", "0")
    assert isinstance(result.exception, NothingToScoreError)
    assert result.stderr.splitlines() == ["m3kit: skipped: d: record 1: field 'x': unreadable"]


def test_help_lists_the_declared_options() -> None:
    result = _run("--help")
    for flag in ("--data", "--predictions", "--limit", "--tag", "-K", "--loose", "--review",
                 "--json", "Echo the options."):
        assert flag in result.stdout
