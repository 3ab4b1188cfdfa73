"""The suite is SuperMemory-VQA's released layout, field by field (issue 12, seed 003 D.1/D.2)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from m3kit.media.info import video_info
from m3kit.schema.supermemory import (
    ABSTAIN_TEXT,
    SKILLS,
    AlignedTranscript,
    WhisperTranscript,
    aligned_transcript_path,
    video_path,
    whisper_transcript_path,
)
from m3kit.synth.ego import EgoSuite

RECORD_KEYS = {
    "question_id", "subject", "question", "choices", "choice_types", "correct_answer",
    "correct_option_index", "is_answerable", "metadata", "video_ids", "start_time",
    "question_evidence", "answer_evidence",
}


def _raw(root: Path) -> list[dict]:
    return json.loads((root / "data/json/all_qa.json").read_text("utf-8"))


def test_every_record_has_the_released_fields(ego_root: Path) -> None:
    records = _raw(ego_root)
    assert records
    for r in records:
        assert set(r) == RECORD_KEYS
        assert isinstance(r["question_id"], int) and isinstance(r["subject"], int)
        assert len(r["choices"]) == 4 and len(r["choice_types"]) == 4
        assert set(r["choice_types"]) <= {"correct", "vague", "incorrect"}
        assert r["choices"].count(ABSTAIN_TEXT) == 1
        assert len(set(r["choices"])) == 4
        gold = r["correct_option_index"]
        assert r["correct_answer"] == r["choices"][gold]
        assert r["choice_types"][gold] == "correct"
        assert r["is_answerable"] == (r["choices"][gold] != ABSTAIN_TEXT)
        if r["is_answerable"]:  # appendix D.1: one correct, one vague, one incorrect
            assert sorted(r["choice_types"]) == ["correct", "incorrect", "incorrect", "vague"]
            assert r["answer_evidence"]["evidence_list"]
        else:
            assert sorted(r["choice_types"]) == ["correct", "incorrect", "incorrect", "incorrect"]
        meta = r["metadata"]
        assert set(meta) == {"skill", "primary_video_id", "primary_video_start_time"}
        assert meta["skill"] in SKILLS
        assert meta["primary_video_id"] in r["video_ids"]
        assert r["start_time"] == meta["primary_video_start_time"]
        for span in r["question_evidence"]["time_spans"]:
            assert set(span) == {"start_time", "end_time", "video_id", "video_start_time_unix"}
            assert span["video_id"] == meta["primary_video_id"]
            assert span["video_start_time_unix"] == r["start_time"]
            assert 0 <= span["start_time"] < span["end_time"]
        for item in r["answer_evidence"]["evidence_list"]:
            assert set(item) == {"video_id", "time_span"}
            assert item["video_id"] in r["video_ids"]
            assert set(item["time_span"]) == {"start_time", "end_time"}
        assert isinstance(r["answer_evidence"]["text"], str) and r["answer_evidence"]["text"]
    assert len({r["question_id"] for r in records}) == len(records)


def test_files_are_where_the_release_puts_them(ego_suite: EgoSuite) -> None:
    root = ego_suite.root
    transcript_only = []
    for person in ego_suite.manifest.persons:
        for s in person.sessions:
            mp4 = root / video_path(person.subject, s.video_id)
            assert mp4.parent.name == f"Person_{person.subject}"
            aligned = root / aligned_transcript_path(person.subject, s.video_id)
            assert aligned.name == f"{s.video_id.lower()}_gemini_aligned_transcript.json"
            assert aligned.parent.name == f"person_{person.subject}"
            transcript = AlignedTranscript.model_validate_json(aligned.read_text("utf-8"))
            assert {line.person for line in transcript.transcript} >= {"User", "A", "B", None}
            assert {line.kind for line in transcript.transcript} == {"speech", "sound"}
            whisper = WhisperTranscript.model_validate_json(
                (root / whisper_transcript_path(person.subject, s.video_id)).read_text("utf-8"))
            # diarisation labels, not the questions' person labels
            assert all(seg.speaker.startswith("SPEAKER_") for seg in whisper.segments)
            if s.has_video:
                info = video_info(mp4)
                assert (info.width, info.height) == (256, 256)
                assert abs(info.duration - s.duration) < 1e-6
            else:
                assert not mp4.exists()
                transcript_only.append(s.video_id)
    assert transcript_only == ["P1_D2"]


def test_spans_lie_inside_their_sessions_and_evidence_precedes_the_question(
        ego_suite: EgoSuite) -> None:
    durations = {s.video_id: s.duration for p in ego_suite.manifest.persons for s in p.sessions}
    starts = {s.video_id: s.start_unix for p in ego_suite.manifest.persons for s in p.sessions}
    for q in ego_suite.questions:
        question_time = q.start_time + max(s.end_time for s in q.question_evidence.time_spans)
        question_start = q.start_time + min(s.start_time for s in q.question_evidence.time_spans)
        assert ego_suite.truth(q.question_id).question_time_unix == question_time
        for span in q.question_evidence.time_spans:
            assert span.end_time <= durations[span.video_id]
        for item in q.answer_evidence.evidence_list:
            assert 0 <= item.time_span.start_time < item.time_span.end_time
            assert item.time_span.end_time <= durations[item.video_id]
            # appendix D.2: the evidence for an answer always occurs before the question
            assert starts[item.video_id] + item.time_span.end_time <= question_start


def test_skills_answerability_and_gold_letters_are_balanced(ego_suite: EgoSuite) -> None:
    questions = ego_suite.questions
    assert {q.metadata.skill for q in questions} == set(SKILLS)
    answerable = Counter(q.is_answerable for q in questions)
    assert answerable[True] > answerable[False] > 0
    golds = Counter(q.correct_option_index for q in questions)
    assert set(golds) == {0, 1, 2, 3}
    assert max(golds.values()) - min(golds.values()) <= 1
    # each person is asked about every skill
    for subject in (1, 2):
        assert {q.metadata.skill for q in questions if q.subject == subject} == set(SKILLS)
    # sessions on different days, questions asked on several of them
    days = {q.start_time // 86_400 for q in questions}
    assert len(days) >= 4


def test_the_benchmark_loader_reads_it_all(ego_suite: EgoSuite) -> None:
    """The SuperMemory-VQA loader takes every question and session, skipping nothing."""
    from m3kit.benchmarks.supermemory.load import load_supermemory

    loaded = load_supermemory(ego_suite.root)
    assert loaded.skipped == []
    assert len(loaded.questions) == len(ego_suite.questions)
    sessions = {(s.subject, s.video_id) for p in ego_suite.manifest.persons for s in p.sessions}
    assert {(subject, s.video_id) for subject, ss in loaded.sessions.items() for s in ss} == \
        sessions
    # the question time the loader derives is the suite's
    for q in loaded.questions:
        assert q.time == ego_suite.truth(int(q.id)).question_time_unix
