"""Stage 1 of the annotation pipeline on a tiny synthetic egocentric suite (real rendering, real
OCR, inspect's real ``mockllm/model`` for the model path): captions, registry, resume, the
window and registry in the prompt, and every kind of bad input named and skipped."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

from m3kit.benchmarks.supermemory.construct.captions import (
    CaptionResult,
    CaptionSettings,
    ChunkJob,
    ModelCaptioner,
    SurrogateCaptioner,
    annotate_captions,
    chunk_spans,
)
from m3kit.benchmarks.supermemory.construct.records import (
    PersonRegistry,
    SessionCaptions,
    captions_path,
    registry_path,
)
from m3kit.benchmarks.supermemory.construct.sessions import SessionInputs
from m3kit.models.backend import InspectBackend
from m3kit.perception.captions import SURROGATE_LABEL
from m3kit.schema.supermemory import aligned_transcript_path, video_path
from m3kit.synth.ego import EgoSuite, EgoSuiteConfig, build_ego_suite

# 1 person × 3 days of 8 scenes of 6 s at 1 fps (48 s each); the second day is
# transcript-only. Chunks of 10 s: 5 per session (the last 8 s is over ``merge_below``).
TINY = EgoSuiteConfig(seed=5, persons=1, sessions=3, segments=8, fps=1.0, size=256,
                      answerable_per_skill=1, unanswerable=0)
SETTINGS = CaptionSettings(chunk_seconds=10, merge_below_seconds=5)
OFFLINE = SessionInputs(transcribe_missing=False)
CORRUPTED = Path("/work/shared/data/videos/corrupted.mp4")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("ego"), TINY)


@pytest.fixture(scope="module")
def captioned(suite: EgoSuite, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("root")
    report = annotate_captions([suite.root], root, SurrogateCaptioner(), SETTINGS, OFFLINE)
    return root, report


def _read(root: Path, video_id: str) -> SessionCaptions:
    return SessionCaptions.model_validate_json(
        (root / captions_path(1, video_id)).read_bytes())


def test_chunks_follow_the_release_rule() -> None:
    release = CaptionSettings()  # 120 s, a remainder under 90 s merged
    assert chunk_spans(300, release) == [(0, 120), (120, 300)]
    assert chunk_spans(48, release) == [(0, 48)]
    assert chunk_spans(48, SETTINGS) == [(0, 10), (10, 20), (20, 30), (30, 40), (40, 48)]
    assert chunk_spans(44, SETTINGS) == [(0, 10), (10, 20), (20, 30), (30, 44)]


def test_surrogate_captions_cover_every_session_in_order(suite: EgoSuite, captioned) -> None:
    root, report = captioned
    person = suite.person(1)
    assert report.sessions == 3 and report.chunks_captioned == 15
    assert report.chunks_reused == report.chunks_skipped == 0 and report.skipped == []
    assert "surrogate" in report.summary()
    for script in person.sessions:
        captions = _read(root, script.video_id)
        assert captions.start_time == script.start_unix
        assert captions.duration == pytest.approx(script.duration, abs=1.0)
        spans = [(c.start_time, c.end_time) for c in captions.chunks]
        assert [c.chunk_index for c in captions.chunks] == list(range(5))
        assert spans[0][0] == 0 and spans[-1][1] == pytest.approx(captions.duration)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
        for chunk in captions.chunks:
            assert chunk.captioner == "surrogate-caption"
            assert chunk.caption.overall_summary.startswith(SURROGATE_LABEL)
            segs = chunk.caption.segments
            assert segs[0].time_span.start_time == chunk.start_time
            assert segs[-1].time_span.end_time == chunk.end_time
        heard = {(s.speaker, s.transcript) for c in captions.chunks
                 for seg in c.caption.segments for s in seg.description.audio_transcript}
        spoken = {(x.person, x.text) for x in script.transcript if x.kind == "speech"}
        assert spoken <= heard  # every line, with its speaker
        if not script.has_video:
            assert captions.video_path is None
            continue
        assert captions.video_path == video_path(1, script.video_id)
        # the same file (a hard link, no copy, no symbolic link the loader would refuse)
        assert (root / captions.video_path).samefile(suite.root / captions.video_path)
        assert not (root / captions.video_path).is_symlink()
        seen = " | ".join(seg.description.visible_text for c in captions.chunks
                          for seg in c.caption.segments)
        rooms = {s.label for s in script.scenes if s.kind == "chore"}
        assert rooms and all(room in seen for room in rooms), (rooms, seen)


def test_registry_keeps_each_voice(captioned) -> None:
    root, _ = captioned
    registry = PersonRegistry.model_validate_json((root / registry_path(1)).read_bytes())
    assert "User" in registry.people
    assert set(registry.first_seen) == set(registry.people)
    assert all(re.fullmatch(r"P1_D\d@[\d.]+", v) for v in registry.first_seen.values())


class _Counting:
    """The surrogate captioner, counting what it really computes."""

    def __init__(self) -> None:
        self.inner = SurrogateCaptioner()
        self.name = self.inner.name
        self.calls = 0

    def settings(self) -> dict[str, Any]:
        return self.inner.settings()

    def caption(self, job: ChunkJob) -> CaptionResult:
        self.calls += 1
        return self.inner.caption(job)


def test_second_run_reuses_every_chunk(suite: EgoSuite, captioned) -> None:
    root, _ = captioned
    before = _read(root, "P1_D3")
    counting = _Counting()
    report = annotate_captions([suite.root], root, counting, SETTINGS, OFFLINE)
    assert counting.calls == 0
    assert (report.chunks_reused, report.chunks_captioned) == (15, 0)
    assert _read(root, "P1_D3") == before


# -- the model captioner: inspect's real mockllm, replies chosen from the prompt -----------------

_CHUNK = re.compile(r"Recording (P\d+_D\d+), chunk (\d+):")


class Script:
    """Replies with a caption naming its chunk; person A's description grows each chunk;
    chunk 2 of the first day always gets prose (never JSON)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def reply(self, prompt: str) -> str:
        self.prompts.append(prompt)
        found = _CHUNK.search(prompt)
        assert found is not None, prompt[-300:]
        video, index = found.groups()
        if (video, index) == ("P1_D1", "2"):
            return "Sure! Here is what happens in the video."
        n = len(self.prompts)
        return json.dumps({
            "overall_summary": f"summary of {video} chunk {index}",
            "segments": [{
                "time_span": {"start_time": "00:00", "end_time": "00:09"},
                "description": {
                    "activities": "walks", "environment": "a kitchen",
                    "objects": ["passport"], "visible_text": "KITCHEN",
                    "audio_transcript": [{"speaker": "User", "transcript": "hello"}],
                    "people": [{"person": "A", "description": "a man " + "tall " * n}]}}]})

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=self.reply(messages[-1].text))
        # fixed usage: mockllm would otherwise count tokens with tiktoken (a download)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out


def test_model_captioner_window_registry_and_malformed_reply(suite: EgoSuite,
                                                               tmp_path: Path) -> None:
    script = Script()
    backend = InspectBackend(get_model("mockllm/model", custom_outputs=script))
    settings = SETTINGS.model_copy(update={"context_chunks": 2, "frames_per_chunk": 3})
    try:
        report = annotate_captions([suite.root], tmp_path, ModelCaptioner(backend, settings),
                                   settings, OFFLINE)
    finally:
        backend.close()
    # the malformed chunk: asked ``attempts`` times, then skipped and named; the rest go on
    bad = [p for p in script.prompts if "Recording P1_D1, chunk 2:" in p]
    assert len(bad) == settings.attempts
    assert "Your previous answer was rejected" in bad[-1]
    assert report.chunks_skipped == 1 and report.chunks_captioned == 14
    (skip,) = report.skipped
    assert skip.record is not None and skip.record.startswith("P1_D1#2")
    assert "not captioned" in skip.reason and "malformed" in skip.reason
    day1 = _read(tmp_path, "P1_D1")
    assert [c.chunk_index for c in day1.chunks] == [0, 1, 3, 4]
    # chunk-relative reply times written local to the recording
    assert day1.chunks[1].caption.segments[0].time_span.start_time == 10.0
    assert day1.chunks[1].caption.segments[0].time_span.end_time == 19.0
    # the window: the last two captioned chunks, across days, the skipped one left out
    prompt = next(p for p in script.prompts if "Recording P1_D2, chunk 0:" in p)
    assert "summary of P1_D1 chunk 4" in prompt and "summary of P1_D1 chunk 3" in prompt
    assert "summary of P1_D1 chunk 1" not in prompt
    first = next(p for p in script.prompts if "Recording P1_D1, chunk 0:" in p)
    assert "(this is the person's first chunk)" in first and "(nobody registered yet)" in first
    # the registry: person A with the longest description so far
    assert re.search(r"\| A \| a man (tall ){3,} \|", prompt)
    registry = PersonRegistry.model_validate_json((tmp_path / registry_path(1)).read_bytes())
    # the longest description: the last reply's (each reply's grows by one word)
    assert registry.people["A"].count("tall") == len(script.prompts)
    assert registry.first_seen["A"] == "P1_D1@0"
    # the transcript lines and the timing reach the prompt
    assert "] User: " in first and "Time spans must not exceed 00:10" in first
    # cost: one call, its tokens and its frames per captioned chunk; three for the bad one
    chunk = day1.chunks[0]
    assert chunk.captioner == "mockllm/model"
    assert (chunk.cost.calls, chunk.cost.input_tokens, chunk.cost.output_tokens,
            chunk.cost.images) == (1, 10, 5, 3)
    day2 = _read(tmp_path, "P1_D2")  # transcript-only: no frames
    assert day2.video_path is None and day2.chunks[0].cost.images == 0
    assert report.cost.calls == 14


# -- bad input ------------------------------------------------------------------------------------


def test_corrupted_video_is_a_named_skip(suite: EgoSuite, tmp_path: Path) -> None:
    broken = tmp_path / "in" / "broken.mp4"
    broken.parent.mkdir()
    shutil.copy(CORRUPTED, broken)
    inputs = SessionInputs(person=1, starts={"broken": 1.7e9}, transcribe_missing=False)
    report = annotate_captions([suite.root, broken], tmp_path / "root", SurrogateCaptioner(),
                               SETTINGS, inputs)
    # its header and first frame read, so it is found; its frames past 27 do not decode: its
    # chunk is skipped and named, the other sessions are captioned
    assert report.sessions == 4 and report.chunks_captioned == 15
    assert report.chunks_skipped == 1
    (skip,) = [s for s in report.skipped if s.field != "transcript"]
    assert skip.record == "broken#0 (0-5 s)" and skip.field == "caption"
    assert "does not decode" in skip.reason and skip.file.endswith("broken.mp4")
    assert _read(tmp_path / "root", "broken").chunks == []
    # a file that is no video at all is named where it is found
    junk = tmp_path / "in" / "junk.mp4"
    junk.write_bytes(b"\x00not a video" * 10)
    report = annotate_captions([junk], tmp_path / "root2", SurrogateCaptioner(), SETTINGS,
                               inputs)
    (skip,) = report.skipped
    assert report.sessions == 0 and skip.file == str(junk)
    assert "cannot be decoded" in skip.reason


def test_loose_video_without_start_or_person_is_named(suite: EgoSuite, tmp_path: Path) -> None:
    video = suite.root / video_path(1, "P1_D1")
    alone = SessionInputs(transcribe_missing=False)
    report = annotate_captions([video], tmp_path, SurrogateCaptioner(), SETTINGS, alone)
    assert report.sessions == 0 and "--person" in report.skipped[0].reason
    report = annotate_captions([video], tmp_path, SurrogateCaptioner(), SETTINGS,
                               alone.model_copy(update={"person": 2}))
    assert report.sessions == 0 and "--starts" in report.skipped[0].reason


def test_loose_video_without_audio_is_captioned_without_transcript(suite: EgoSuite,
                                                                   tmp_path: Path) -> None:
    video = suite.root / video_path(1, "P1_D1")
    inputs = SessionInputs(person=2, starts={"P1_D1": 1.7e9})  # faster-whisper on
    report = annotate_captions([video], tmp_path, SurrogateCaptioner(), SETTINGS, inputs)
    assert report.sessions == 1 and report.chunks_captioned == 5
    (skip,) = report.skipped
    assert skip.field == "transcript" and "no audio" in skip.reason
    assert (tmp_path / video_path(2, "P1_D1")).samefile(video)


def test_garbage_transcript_is_a_named_skip(suite: EgoSuite, tmp_path: Path) -> None:
    data = tmp_path / "release"
    shutil.copytree(suite.root / "data", data / "data")
    aligned = data / aligned_transcript_path(1, "P1_D1")
    aligned.write_text("{this is not json", encoding="utf-8")
    # its start was in the aligned transcript only: the session is left out, by name
    report = annotate_captions([data], tmp_path / "a", SurrogateCaptioner(), SETTINGS, OFFLINE)
    assert report.sessions == 2
    reasons = [(Path(s.file).name, s.reason) for s in report.skipped]
    assert any(name == aligned.name and "whisper_transcript.json is read instead" in why
               for name, why in reasons)
    assert any("P1_D1" in why and "start" in why for _, why in reasons)
    # with its start given, it is captioned from the Whisper transcript (diarisation labels)
    start = suite.person(1).sessions[0].start_unix
    given = SessionInputs(starts={"P1_D1": start}, transcribe_missing=False)
    report = annotate_captions([data], tmp_path / "b", SurrogateCaptioner(), SETTINGS, given)
    assert report.sessions == 3 and report.chunks_captioned == 15
    speakers = {s.speaker for c in _read(tmp_path / "b", "P1_D1").chunks
                for seg in c.caption.segments for s in seg.description.audio_transcript}
    assert speakers and all(s.startswith("SPEAKER_") for s in speakers)


def test_cli_captions_offline(suite: EgoSuite, tmp_path: Path) -> None:
    from m3kit.cli.main import app

    args = ["supermemory", "annotate", "captions", str(suite.root), "--out", str(tmp_path),
            "--chunk-seconds", "10", "--merge-below", "5", "--no-transcribe", "--quiet"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "3 sessions" in first.output and "15 chunks captioned, 0 reused" in first.output
    assert "surrogate" in first.output and str(tmp_path / "annotations" / "captions") in \
        first.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "0 chunks captioned, 15 reused" in again.output
    assert _read(tmp_path, "P1_D1").chunks
