"""`m3kit eval`'s summary (m3kit.report.summary) and the skips record (m3kit.harness.skips)
on real harness runs: intrusion rate only over questions with an intrusion option, ``—`` where
none does, costs averaged over answered samples, and the loader's skips printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.cli.main import main
from m3kit.harness.skips import skipped_of
from m3kit.report.summary import NA, summary_table
from m3kit.schema import Choice, Question, VideoRef, write_jsonl

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # runs the harness: caches per test


def _suite(root: Path, probe_video: Path, make_q) -> Path:
    root.mkdir()
    (root / "probe.mp4").write_bytes(probe_video.read_bytes())
    video = Path("probe.mp4")
    qs = [make_q(i, video, condition=c) for i, c in enumerate(("far", "near", "far"))]
    # q3: an interference question without role annotations (no intrusion option)
    qs.append(Question(
        id="q3", benchmark="m3kit-test", text="What colour was the box? qid=q3",
        choices=[Choice(letter="A", text="red"), Choice(letter="B", text="blue")], answer="A",
        media=[VideoRef(path=str(video))],
        metadata={"paradigm": "interference", "condition": "plain"}))
    # q4: its video is missing -> excluded at run time
    qs.append(make_q(4, Path("missing.mp4"), condition="far"))
    write_jsonl(root / "questions.jsonl", qs)
    with (root / "questions.jsonl").open("a") as f:
        f.write('{"id": "broken"}\n')  # a record the loader skips
    return root


@pytest.fixture
def log(tmp_path, probe_video, make_q, scripted, serve):
    suite = _suite(tmp_path / "suite", probe_video, make_q)
    server = scripted(answers={"q0": "The final answer is A", "q1": "The final answer is B",
                               "q2": "The final answer is C", "q3": "The final answer is B"})
    model = serve("summary", server)
    return run_benchmark_task("synth_interference", model,
                              task_args={"suite": str(suite), "frames": 2},
                              log_dir=tmp_path / "logs", max_connections=2)


def test_m3eval_table(log):
    table = summary_table(log)
    # the title says how the run was made: no memory, 2 uniform frames, not blind
    assert table.title == f"m3kit/synth_interference · {log.eval.model} · no memory · frames 2 " \
        "uniform · success"
    assert table.columns[:4] == ["group", "n", "acc%", "intr%"]
    rows = {r[0]: dict(zip(table.columns, r, strict=True)) for r in table.rows}
    # all: q0..q3 answered (q4 excluded). acc = 1 correct (q0) / 4 = 25.0.
    # intr% over q0, q1, q2 only (q3 offers no intrusion): 1 (q1 chose B) / 3 = 33.3
    # (over every answer it would be 1/4 = 25.0)
    assert (rows["all"]["n"], rows["all"]["acc%"], rows["all"]["intr%"]) == ("4", "25.0", "33.3")
    assert rows["all"]["excluded"] == "1"
    assert rows["condition=near"]["intr%"] == "100.0"  # q1: 1/1
    assert rows["condition=far"]["intr%"] == "0.0"  # q0, q2: 0/2 (q4 excluded)
    assert rows["condition=plain"]["intr%"] == NA  # q3 only: intrusion does not apply
    # the intervals under the table: q0..q3 ask of one probe video (no source pair named),
    # the one unit the bootstrap can draw: every resample would be the whole run, so no
    # interval, the unit count instead (the heading wrapped at 80 columns)
    assert table.intervals == [
        "95 % intervals, 2000 resamples of source video pair (the probe video where no",
        "  pair is known), seed 0:",
        "  acc% 25.0 (1 unit) · intr% 33.3 (1 unit)",
    ]
    # the log's own metric is the same definition: 1 / 3, and so is it read back from disk
    from inspect_ai.log import read_eval_log

    assert log.results.scores[0].metrics["intrusion_rate"].value == 1 / 3
    on_disk = read_eval_log(log.location)
    assert on_disk.results.scores[0].metrics["intrusion_rate"].value == 1 / 3

    from m3kit.report.logs import read_samples
    from m3kit.schema.evallog import mean_cost

    tokens, images = mean_cost(read_samples(log))
    assert images == 2.0  # (2+2+2+2)/4 answered; 1.6 if the excluded sample were counted
    assert tokens > 0


def test_skips_are_read_from_the_log(log):
    skipped = skipped_of(log)
    assert skipped.count == 1
    # the 6th line of questions.jsonl (five good records first), its missing field named
    assert "questions.jsonl: record 6 (id broken): field 'benchmark'" in skipped.reasons[0]


def test_cli_prints_the_skips(tmp_path, probe_video, make_q, scripted, serve, capsys):
    suite = _suite(tmp_path / "suite", probe_video, make_q)
    model = serve("summarycli", scripted())
    code = main(["eval", "synth_interference", "--model", model, "-T", f"suite={suite}",
                 "-T", "frames=0", "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "skipped 1 record(s) while loading:" in out
    line = next(x for x in out.splitlines() if "questions.jsonl" in x and "skipped" not in x)
    assert "record 6 (id broken): field 'benchmark'" in line


def test_m3exam_table_uses_its_own_scores(tmp_path, m3exam_persona):
    """M3Exam rows show EM / F1 / BLEU-1 (no acc%/intr%), the same numbers as the task's own
    metrics (both from m3kit.benchmarks.m3exam scoring)."""
    log = run_benchmark_task("m3exam", "m3kit/builtin",
                             task_args={"data": str(m3exam_persona), "regime": "oracle-text"},
                             limit=2, log_dir=tmp_path / "logs")
    table = summary_table(log)
    assert table.columns[:5] == ["type", "n", "EM", "F1", "BLEU-1"]
    assert "intr%" not in table.columns and "acc%" not in table.columns
    overall = dict(zip(table.columns, table.rows[0], strict=True))
    metrics = log.results.scores[0].metrics
    assert overall["n"] == "2"
    for column, key in (("EM", "em"), ("F1", "f1"), ("BLEU-1", "bleu1")):
        # the paper's 0-1 scale, four decimals, as `m3kit score` and `m3kit report` print it
        assert overall[column] == f"{metrics[key].value:.4f}", column
    # under the table: each headline number as value [lo, hi], the value the column's
    heading, numbers = table.intervals[0], " ".join(table.intervals[1:])
    assert heading.startswith("95 % intervals, 2000 resamples of session")
    # the two questions' evidence lies in one session: one unit, no interval
    for column in ("EM", "F1", "BLEU-1"):
        assert f"{column} {overall[column]} (1 unit)" in numbers, column


def test_intrusion_rate_is_nan_without_intrusion_options(tmp_path, probe_video, make_q,
                                                         scripted, serve):
    """N-back questions (Yes / No) offer no intrusion option: the log's metric and the table
    say "does not apply" (NaN, shown —), never 0."""
    import math

    from inspect_ai.log import read_eval_log

    from m3kit.benchmarks.m3eval.score import result_rows
    from m3kit.report.logs import read_samples

    root = tmp_path / "suite"
    root.mkdir()
    (root / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(root / "questions.jsonl",
                [make_q(i, Path("probe.mp4"), nback=True, k=4, n=1) for i in range(3)])
    server = scripted(answers={"q0": "Yes", "q1": "No", "q2": "Yes"})
    model = serve("nanback", server)
    log = run_benchmark_task("synth_nback", model, task_args={"suite": str(root), "frames": 1},
                             log_dir=tmp_path / "logs", max_connections=2)
    assert log.status == "success"
    # accuracy: q0 and q2 (Yes, the gold) right, q1 (No) wrong: 2 / 3
    assert result_rows(read_samples(log))[0].accuracy == 2 / 3
    assert math.isnan(result_rows(read_samples(log))[0].intrusion_rate)
    assert math.isnan(log.results.scores[0].metrics["intrusion_rate"].value)
    metric = read_eval_log(log.location).results.scores[0].metrics["intrusion_rate"].value
    assert metric is None or math.isnan(metric)  # NaN, however the log file stores it
    assert summary_table(log).rows[0][3] == NA


def test_group_labels_never_break_mid_word_at_80_columns(log):
    """``key=value`` labels print as the value under a ``key=`` heading; with M3Eval's longest
    labels and nine columns the table fits 80 columns and every label is whole on its line."""
    import io

    from rich.console import Console

    from m3kit.cli.eval import print_summary
    from m3kit.report.summary import INDENT, SummaryTable, display_rows

    real = summary_table(log)  # all, condition=far, condition=near, condition=plain
    shown = display_rows(real)
    assert [r[0] for r in shown] == ["all", "condition=", f"{INDENT}far", f"{INDENT}near",
                                     f"{INDENT}plain"]
    assert shown[1][1:] == [""] * (len(real.columns) - 1)  # the heading row has no numbers
    assert shown[2][1:] == real.rows[1][1:]

    labels = ["paradigm=divided_attention", "paradigm=memory_interference",
              "condition=repeat_interferer", "condition=proactive"]
    wide = SummaryTable(title="synth_interference · openai-api/local/qwen2-vl-7b · success",
                        columns=real.columns,
                        rows=[["all", "120", "45.0", "12.5", "3", "0", "1", "1234", "8"]]
                        + [[label, "40", "45.0", NA, "3", "0", "1", "1234", "8"]
                           for label in labels])
    out = io.StringIO()
    print_summary(wide, Console(width=80, file=out, color_system=None))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[1].split() == ["group", "n", "acc%", "intr%", "invalid", "failed",
                                "excluded", "tok", "in", "images"]  # headers whole
    firsts = [line.split()[0] for line in lines[2:]]
    assert firsts == ["all", "paradigm=", "divided_attention", "memory_interference",
                      "condition=", "repeat_interferer", "proactive"]
    assert lines[-1].split() == ["proactive", "40", "45.0", NA, "3", "0", "1", "1234", "8"]


def test_report_sections_show_the_headline_intervals(log, tmp_path):
    """``m3kit report``'s M3Eval sections end with every headline number of each logged system
    as ``value [lo, hi] (n units)``: one probe video, so no interval (see test_m3eval_table)."""
    from m3kit.benchmarks import benchmark_named
    from m3kit.report.build import benchmark_sections
    from m3kit.report.logs import read_run

    m3eval = benchmark_named("m3eval")
    assert m3eval is not None
    (section,) = [s for s in benchmark_sections(m3eval, [read_run(log)], tmp_path)
                  if s.title == "M3Eval · Confidence intervals"]
    (table,) = section.tables
    assert table.caption == (
        "95 % intervals, 2000 resamples of source video pair (the probe video where no pair "
        "is known), seed 0. A number on fewer than 10 units has an unreliable interval (the "
        "percentile cluster bootstrap undercovers with few units), and on fewer than 2 none")
    cells = {row[0]: row[1] for row in table.rows}
    # the suite's conditions (far, near, plain) are none of the paper's directions: only the
    # overall numbers are defined, and only they have rows
    assert list(cells) == ["accuracy", "intrusion_rate"]
    # as the quickstart's section prints an interval: one string per interval on a page
    assert cells["accuracy"] == "25.0 (1 unit)"
    assert cells["intrusion_rate"] == "33.3 (1 unit)"


def test_every_summary_line_fits_80_columns(tmp_path, probe_video, make_q, m3exam_persona,
                                            monkeypatch, capsys):
    """What ``m3kit eval`` prints for each benchmark's summary (the table, the intervals and
    the card line, whose m3kit/builtin frame policy alone runs past 80 characters) fits 80
    columns, the long lines wrapped at word boundaries."""
    from ..benchmarks.videomme_v2.conftest import write_release

    monkeypatch.setenv("COLUMNS", "80")
    suite = _suite(tmp_path / "suite", probe_video, make_q)
    runs = {
        # the builtin's default frames: "frames uniform (96, 144 for repetition, 8 per
        # N-Back clip)" makes the card line 100-odd characters
        "synth_interference": ["-T", f"suite={suite}"],
        "m3exam": ["-T", f"data={m3exam_persona}", "-T", "regime=oracle-text", "--limit", "2"],
        "videomme_v2": ["-M", "ocr=false", "-T",
                        f"data={write_release(tmp_path / 'rel', probe_video)}",
                        "--limit", "4"],
    }
    for task, args in runs.items():
        code = main(["eval", task, "--model", "m3kit/builtin", *args, "--log-dir",
                     str(tmp_path / "logs" / task)])
        out = capsys.readouterr().out
        assert code == 0, out
        # the summary: everything before the skips and the log's path (paths are as long
        # as they are)
        lines = out.splitlines()
        end = next(i for i, line in enumerate(lines) if line.startswith(("skipped ", "log: ")))
        summary = lines[:end]
        assert max(len(line) for line in summary) <= 80, (task, summary)
        run = next(i for i, line in enumerate(summary) if line.startswith("run: "))
        card = " ".join(line.strip() for line in summary[run:] if line.strip())
        assert "· data " in card, (task, card)  # the card's last field, whole
        if task == "synth_interference":
            assert len(card) > 80 and "frames uniform (96, 144 for repetition, 8 per N-Back " \
                "clip)" in card


def test_summary_titles_differ_with_memory_and_blind():
    """`m3kit eval` with --memory rag, --blind or neither never prints the same title."""
    from m3kit.report.summary import summary_title
    from m3kit.schema.card import FramePolicyCard, ReproCard

    frames = FramePolicyCard(policy="uniform", count=24)
    plain = ReproCard(model="m", frames=frames)
    titles = [summary_title("synth_nback", "m", card, "success") for card in (
        plain, plain.model_copy(update={"memory": "rag"}),
        plain.model_copy(update={"blind": True, "frames": FramePolicyCard(policy="none")}))]
    assert titles == ["synth_nback · m · no memory · frames 24 uniform · success",
                      "synth_nback · m · memory rag · frames 24 uniform · success",
                      "synth_nback · m · no memory · frames none · blind · success"]
    assert summary_title("t", "m", None, "error") == "t · m · error"
    oracle = plain.model_copy(update={"settings": {"regime": "oracle-text"}})
    assert summary_title("m3exam", "m", oracle, "success") == (
        "m3exam · m · no memory · frames 24 uniform · regime oracle-text · success")
