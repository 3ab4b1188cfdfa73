"""``m3kit report --layout main|cost`` end to end on real eval logs: a tiny M3Exam persona
answered by ``m3kit/builtin`` directly, through ``context`` (index path) and through ``rag`` on
the streaming path; the rows grouped by class, the cost read from the samples' usage, the JSON
unrounded, and the one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean

import pytest
from PIL import Image

from m3kit.cli.main import main

# The persona's stream: round D1:1, its image, round D2:1.
EVENTS = 3


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from m3kit.benchmarks import run_benchmark_task

    root = tmp_path_factory.mktemp("memory_layouts")
    folder = root / "Pat_Layouts"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (32, 24), (200, 10, 10)).save(folder / "images" / "img_1.jpg")
    sessions = [
        {"session_id": "D1", "date": "2024-03-01", "dialogues": [
            {"round": "D1:1", "user": "My dog Rex ate chocolate.", "assistant": "Call a vet.",
             "img_file": ["img_1.jpg"], "img_id": [1], "img_description": ["a brown dog"]}]},
        {"session_id": "D2", "date": "2024-03-05", "dialogues": [
            {"round": "D2:1", "user": "Rex is fine now, he sleeps a lot.",
             "assistant": "Good to hear."}]},
    ]
    questions = [
        {"question": "What did Rex eat?", "answer": ["chocolate"], "label": "chocolate",
         "supporting_facts": "D1:1", "type": "ss"},
        {"question": "Which image shows the dog? Return img_<number>.", "answer": ["img_1"],
         "label": "img_1", "supporting_facts": "D1:1", "type": "fm"},
    ]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps(questions))
    for regime, extra in (("text", {}), ("memory=context", {}),
                          ("memory=rag", {"memory_config": {"replay": "stream"}})):
        log = run_benchmark_task("m3exam", "m3kit/builtin", model_args={"ocr": False},
                                 task_args={"data": str(folder), "regime": regime, **extra},
                                 log_dir=root / "logs")
        assert log.status == "success", regime
    return root / "logs"


def _samples(logs: Path) -> dict[str, list]:
    """Each run's samples as the one log reader reads them, by regime."""
    from inspect_ai.log import read_eval_log

    from m3kit.report.logs import read_samples

    runs = {}
    for path in sorted(logs.glob("*.eval")):
        log = read_eval_log(str(path))
        runs[log.eval.metadata["m3kit_regime"]] = read_samples(log)
    return runs


def test_cost_layout(logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(logs), "--layout", "cost", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["m3exam"]
    # by regime (the label's third part)
    rows = {row["run"]["system"].split(" · ")[2]: row for row in data["m3exam"]}
    assert set(rows) == {"oracle-text", "memory=context", "memory=rag"}
    samples = _samples(logs)
    for regime, row in rows.items():
        logged = samples[regime]
        assert row["questions"] == 2 and row["failed"] == 0
        assert row["run"]["model"] == "m3kit/builtin" and not row["run"]["model_differs"]
        # per question: the means of what the log records, to the last digit
        assert row["prompt_tokens_per_question"] == fmean(s.usage.prompt_tokens
                                                          for s in logged)
        assert row["completion_tokens_per_question"] == fmean(s.usage.completion_tokens
                                                              for s in logged)
        assert row["images_per_question"] == fmean(s.usage.images_sent for s in logged)
        # both questions ask the persona's one memory key: its build counted once
        builds = {s.usage.index_build_seconds for s in logged}
        assert row["index_build_seconds"] == max(builds)
    direct, context = rows["oracle-text"], rows["memory=context"]
    streamed = rows["memory=rag"]
    assert direct["run"]["memory"] is None and direct["index_build_seconds"] == 0.0
    # the index path builds once and feeds nothing; the streaming path feeds each event once
    # (the earliest question feeds the whole stream, the later one nothing), with no replay
    assert context["index_build_seconds"] > 0 and context["ingest_events"] == 0
    assert streamed["ingest_events"] == EVENTS and streamed["ingest_replays"] == 0
    assert streamed["memory_keys"] == context["memory_keys"] == 1  # the persona
    # rag stores embeddings, not model calls: no ingest call, no ingest token
    assert streamed["ingest_calls"] == 0 and streamed["ingest_tokens"] == 0

    out = tmp_path / "cost"
    assert main(["report", str(logs), "--layout", "cost", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out / 'index.html'}"
    markdown = (out / "tables.md").read_text()
    assert "### M3Exam: cost of each run" in markdown
    tokens = context["prompt_tokens_per_question"]
    assert f"| {tokens:.2f} |" in markdown  # the page rounds, the JSON does not


def test_main_layout(logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(logs), "--layout", "main", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (table,) = data.values()
    assert table["benchmark"] == "m3exam" and table["types"] == ["ss", "fm"]
    classes = {row["run"]["system"].split(" · ")[2]: row["run"]["memory_class"]
               for row in table["rows"]}
    # direct; rag sends its text surrogates; context sends the images themselves
    assert classes == {"oracle-text": "none", "memory=rag": "text", "memory=context": "multimodal"}
    from m3kit.benchmarks.m3exam.score import scores_from_log

    samples = _samples(logs)
    for row in table["rows"]:
        regime = row["run"]["system"].split(" · ")[2]
        card = scores_from_log(samples[regime])
        assert row["questions"] == 2
        assert row["avg"]["em"]["value"] == card.total["em"]
        assert row["per_type"]["ss"]["f1"]["value"] == card.per_type["ss"]["f1"]
        assert "llm_judge" not in row["avg"] or row["avg"]["llm_judge"]["judged"] == 0
    assert not table["judged"]

    out = tmp_path / "main"
    assert main(["report", str(logs), "--layout", "main", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == data  # with --json, stdout is the JSON alone
    assert captured.err.strip() == f"report: {out / 'index.html'}"
    markdown = (out / "tables.md").read_text()
    headings = [line.split(" | ")[0].lstrip("| ") for line in markdown.splitlines()
                if line.startswith("| ") and ("memory systems" in line or "No memory" in line)]
    assert headings == ["No memory (direct)", "Text-based memory systems",
                        "Multimodal memory systems"]
    assert "M3Exam: memory systems by question type (EM / F1 / BLEU-1)" in markdown


@pytest.mark.parametrize(("args", "message"), [
    (["--layout", "wide", "--out", "x"], "unknown layout 'wide' (one of full, main, cost)"),
    (["--json"], "--json prints a layout's records"),
    ([], "give --out DIR"),
    (["--layout", "cost"], "give --out DIR for the layout's report, or --json"),
    (["--layout", "main", "--json", "--baseline", "x"], "--humans and --baseline belong to the "
                                                        "full report"),
])
def test_one_line_errors(logs: Path, args: list[str], message: str,
                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(logs), *args]) == 2
    assert message in capsys.readouterr().err
