"""Unbounded transcript text (issue 23, item 5): the direct prompt carries the lines heard last
before the question within a token budget (``-T transcript_tokens``), says what it cut (per
sample, in the score record, in the report), states the budget on the card, and each
transcript file is parsed once per run."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.protocol import ReportContext
from m3kit.benchmarks.supermemory import BENCHMARK
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.prompt import (
    NOW_LINE,
    TRANSCRIPT_HEADER,
    TRANSCRIPT_META,
    transcript_within,
)
from m3kit.benchmarks.supermemory.report import sections
from m3kit.benchmarks.supermemory.task import supermemory
from m3kit.memory.context import estimated_tokens
from m3kit.report.logs import read_run
from m3kit.schema.card import TASK_CARD_KEY

from .conftest import EARLY_FACT, LATE_FACT, aligned

P1_D1 = Path("data/transcripts/person_1/p1_d1_gemini_aligned_transcript.json")
OLDEST = "The oldest line of the day."
NEWEST = "The newest line before the question."
FILLER = 30_000  # lines of about 100 bytes: a transcript of about 3 MB


def _long_transcript(root: Path) -> Path:
    """P1_D1's transcript made long: ``OLDEST`` first, ``FILLER`` lines before the question's
    moment (10 s), ``NEWEST`` just before it, the late fact after it."""
    lines = [(0.1, 0.2, "User", OLDEST)]
    lines += [(0.5 + 9 * n / FILLER, 0.5 + 9 * n / FILLER, "A",
               f"filler {n:05d} " + "words " * 12) for n in range(FILLER)]
    lines += [(9.8, 9.9, "User", NEWEST), (14.0, 15.0, "A", LATE_FACT)]
    path = root / P1_D1
    path.write_text(json.dumps(aligned(lines)))
    assert path.stat().st_size > 3_000_000
    return path


def _prompt(sample: Any) -> str:
    content = sample.messages[0].content
    return content if isinstance(content, str) else " ".join(
        p.text for p in content if getattr(p, "text", None))


def _transcript_block(prompt: str) -> str:
    start = prompt.index(TRANSCRIPT_HEADER)
    return prompt[start:prompt.index("\n" + NOW_LINE.split("{")[0], start)]


def test_a_long_transcript_is_cut_to_its_budget_newest_first(
        make_release: Callable[..., Path], tmp_path: Path) -> None:
    root = make_release()
    _long_transcript(root)
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(root), "frames": 0, "transcript_tokens": 400},
                             log_dir=tmp_path / "logs", cache=False, sample_id=[1])
    assert log.status == "success", log.error
    [sample] = log.samples
    block = _transcript_block(_prompt(sample))
    assert estimated_tokens(block) <= 400
    kept = block.splitlines()[1:]
    assert kept[-1].endswith(NEWEST)  # the last line heard is kept, last
    assert "filler 29999" in kept[-2]  # then the ones before it, without a gap
    assert OLDEST not in block and LATE_FACT not in block
    note = sample.metadata[TRANSCRIPT_META]
    assert note["budget"] == 400 and note["lines"] == len(kept)
    assert note["heard"] == FILLER + 2 and note["cut"] == FILLER + 2 - len(kept)
    assert note["tokens"] == estimated_tokens(block)
    assert sample.scores["supermemory_answer"].metadata["transcript_cut"] == note["cut"]
    card = log.eval.metadata[TASK_CARD_KEY]
    assert card["settings"] == {"transcript_tokens": 400, "tokens_per_char": 0.25}
    [section] = sections(ReportContext(benchmark=BENCHMARK, runs=[read_run(log)],
                                      out_dir=tmp_path / "report"))
    assert any(f"{note['cut']} older line(s) left out" in n for n in section.notes)


def test_the_default_budget_bounds_the_prompt(make_release: Callable[..., Path],
                                              tmp_path: Path) -> None:
    root = make_release()
    _long_transcript(root)
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(root), "frames": 0},
                             log_dir=tmp_path / "logs", cache=False, sample_id=[1])
    [sample] = log.samples
    assert estimated_tokens(_transcript_block(_prompt(sample))) <= 8000
    assert len(_prompt(sample)) < 40_000  # 3 MB of transcript before the budget
    assert sample.metadata[TRANSCRIPT_META]["cut"] > 0


def test_a_short_transcript_is_whole_and_not_cut(make_release: Callable[..., Path],
                                                 tmp_path: Path) -> None:
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(make_release()), "frames": 0},
                             log_dir=tmp_path / "logs", cache=False, sample_id=[1])
    [sample] = log.samples
    assert EARLY_FACT in _prompt(sample)
    assert sample.metadata[TRANSCRIPT_META]["cut"] == 0
    assert sample.scores["supermemory_answer"].metadata["transcript_cut"] == 0


def test_each_transcript_is_parsed_once_per_run(make_release: Callable[..., Path],
                                                tmp_path: Path) -> None:
    """The run reads the loader's parse: a file rewritten after the task was made, with its
    size and modification time kept (the same identity), is not read again."""
    root = make_release()
    task = supermemory(data=str(root), frames=0, cache=False)
    path = root / P1_D1
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace(EARLY_FACT, "X" * len(EARLY_FACT)))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    log = run_benchmark_task(task, "m3kit/builtin", log_dir=tmp_path / "logs", sample_id=[1])
    assert EARLY_FACT in _prompt(log.samples[0])


def test_the_loader_reads_a_file_once_and_again_when_it_changes(
        make_release: Callable[..., Path]) -> None:
    """A session holds its transcript as read at load (what a run's samples share); a load
    after the file changed reads it again."""
    root = make_release()
    loaded = load_supermemory(root)
    session = loaded.session(1, "P1_D1")
    first = session.heard
    assert session.heard is first  # placed on the clock once
    assert any(line.text == EARLY_FACT for line in first.lines)
    path = root / P1_D1
    path.write_text(json.dumps(aligned([(1.0, 2.0, "A", "A new day.")])))
    os.utime(path, ns=(1, 1))  # another identity
    assert loaded.session(1, "P1_D1").lines == session.lines  # never read again
    assert [line.text for line in load_supermemory(root).session(1, "P1_D1").lines] == [
        "A new day."]


def test_transcript_within_keeps_the_newest_lines_that_fit() -> None:
    lines = [(f"00:00:{n:02d}", f"line {n}") for n in range(50)]
    text, kept = transcript_within(reversed(lines), 40)
    assert estimated_tokens(text) <= 40 and kept > 0
    assert text.splitlines()[1:] == [f"[{w}] {t}" for w, t in lines[-kept:]]
    assert transcript_within(reversed(lines), 0) == ("", 0)
    assert transcript_within([], 100) == ("", 0)
