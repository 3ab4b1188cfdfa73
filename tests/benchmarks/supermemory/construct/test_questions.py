"""Stage 2 on a tiny synthetic suite's truth-captions, with a scripted model (``qa_support``):
a good pair accepted, a pair with late evidence rejected by the causality check although the
verifier gives it 1.0, a weak pair enhanced then accepted, a bad one exhausting the loops, a
prose reply a named rejection; the written all_qa.json loads with zero skips; a rerun makes no
model call and writes the same files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sm_qa_support import TINY, release_root, scripted_backend

from m3kit.benchmarks.supermemory.construct.questions import (
    QuestionReport,
    QuestionSettings,
    annotate_questions,
    draft_format,
    plan_pairs,
)
from m3kit.benchmarks.supermemory.construct.records import PersonAnnotations, SuperLedger
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.cli.main import main
from m3kit.schema.supermemory import ABSTAIN_TEXT, ALL_QA_PATH, SKILLS
from m3kit.synth.ego import EgoSuite, build_ego_suite

# seven pairs: the six skills in turn, the seventh (object location again) unanswerable
SETTINGS = QuestionSettings(target=7, unanswerable_share=1 / 7, max_loops=2, retries=1,
                            max_connections=3)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("ego"), TINY)


@pytest.fixture(scope="module")
def run(suite: EgoSuite, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[Path, QuestionReport, dict[str, int]]:
    root = release_root(suite, tmp_path_factory.mktemp("root"))
    backend, script = scripted_backend(suite)
    report = annotate_questions(root, backend, settings=SETTINGS)
    backend.close()
    return root, report, dict(script.calls)


def _pairs(root: Path) -> dict[str, object]:
    annotations = PersonAnnotations.model_validate_json(
        (root / "annotations" / "qa" / "person_1.json").read_bytes())
    return {p.qa_id: p for p in annotations.pairs}


def test_plan_turns_skills_scopes_and_answerability(suite: EgoSuite, run) -> None:
    root, _, _ = run
    ledger = SuperLedger.model_validate_json(
        (root / "annotations" / "ledger" / "person_1.json").read_bytes())
    plans = plan_pairs(ledger, QuestionSettings(target=10))
    assert [p.skill for p in plans[:6]] == list(SKILLS)
    assert sum(p.scope == "global" for p in plans) == 5
    assert sum(not p.answerable for p in plans) == 4
    assert {p.day for p in plans if p.scope == "local"} == {
        "2026-03-02", "2026-03-03"}  # the suite's first person's two days
    # per minute: two 48 s sessions, 2 a minute
    assert len(plan_pairs(ledger, QuestionSettings())) == 3


def test_outcomes_and_reasons(run) -> None:
    root, report, calls = run
    pairs = _pairs(root)
    status = {qa_id: (p.status, p.rejection_reason) for qa_id, p in pairs.items()}
    assert status["p1_q001"] == ("accepted", "")
    assert status["p1_q002"][0] == "rejected"
    assert status["p1_q002"][1].startswith("causality: evidence after the question")
    # the verifier gave the late pair 1.0 on every criterion: the code rejected it anyway
    late = pairs["p1_q002"]
    assert all(c.passed for c in late.verdicts[-1] if c.name != "causality")
    assert late.causality is not None and not late.causality.passed
    assert status["p1_q003"] == ("accepted", "")
    assert len(pairs["p1_q003"].drafts) == 2  # enhanced once
    assert status["p1_q004"] == ("accepted", "")
    assert status["p1_q005"][1].startswith("max_loops_exhausted (verifier: factual_correctness "
                                           "0.3 < 0.6)")
    assert status["p1_q006"][1].startswith("malformed reply: planner: ")
    assert pairs["p1_q006"].drafts == []
    assert status["p1_q007"] == ("accepted", "")
    assert report.accepted == 4 and report.accepted_unanswerable == 1
    assert report.drafted == 6  # the prose reply drafted nothing
    assert report.enhanced == 2
    assert report.rejected == {"causality": 1, "max_loops_exhausted": 1, "malformed": 1}
    assert report.failures["factual_correctness"] == 3  # q003 once, q005 twice
    assert report.failures["causality"] == 1
    # 7 plans (+1 retry of the prose), 8 verifications, 2 enhancements
    assert calls == {"plan": 8, "verify": 8, "enhance": 2}
    assert report.calls == 18
    assert (report.input_tokens, report.output_tokens) == (180, 180)


def test_all_qa_loads_with_zero_skips(run) -> None:
    root, report, _ = run
    assert report.load_skipped_questions == []
    loaded = load_supermemory(root)
    assert loaded.skipped_question_ids == []
    assert [q.id for q in loaded.questions] == ["1", "2", "3", "4"]
    records = json.loads((root / ALL_QA_PATH).read_text())
    for record in records:
        assert ABSTAIN_TEXT in record["choices"] and len(record["choices"]) == 4
        gold = record["choices"][record["correct_option_index"]]
        if record["is_answerable"]:
            assert gold == "On the kitchen shelf"
            assert sorted(record["choice_types"]) == ["correct", "incorrect", "incorrect",
                                                      "vague"]
        else:
            assert gold == ABSTAIN_TEXT
            assert record["choice_types"][record["correct_option_index"]] == "correct"
        spans = record["question_evidence"]["time_spans"]
        assert all(s["video_start_time_unix"] for s in spans)
    ids = {r["metadata"]["qa_id"]: r["question_id"] for r in records}
    assert ids == {"p1_q001": 1, "p1_q003": 2, "p1_q004": 3, "p1_q007": 4}
    assert _pairs(root)["p1_q003"].question_id == 2


def test_rerun_makes_no_call_and_writes_the_same(suite: EgoSuite, run) -> None:
    root, report, _ = run
    before = {p: p.read_bytes() for p in [root / ALL_QA_PATH,
                                          root / "annotations" / "qa" / "person_1.json"]}
    backend, script = scripted_backend(suite)
    again = annotate_questions(root, backend, settings=SETTINGS)
    backend.close()
    assert script.total == 0
    assert again.reused == 7 and again.accepted == report.accepted
    assert again.rejected == report.rejected
    assert (root / ALL_QA_PATH).read_bytes() == before[root / ALL_QA_PATH]
    # every pair's story is the same; the cost counts the calls that made them, the tokens
    # this run's (none)
    first = PersonAnnotations.model_validate_json(before[root / "annotations" / "qa" /
                                                         "person_1.json"])
    second = PersonAnnotations.model_validate_json(
        (root / "annotations" / "qa" / "person_1.json").read_bytes())
    assert second.pairs == first.pairs and second.cost.calls == first.cost.calls == 18
    assert (second.cost.input_tokens, first.cost.input_tokens) == (0, 180)


@pytest.mark.usefixtures("isolated_dirs")
def test_cli_prints_the_figures(suite: EgoSuite, tmp_path: Path, capsys) -> None:
    root = release_root(suite, tmp_path / "root")
    # m3kit's offline builtin model answers in prose: every pair is a named malformed
    # rejection, the run finishes, prints the figures and says why nothing was accepted
    code = main(["supermemory", "annotate", "questions", str(root), "--model", "m3kit/builtin",
                 "--target", "2", "--attempts", "1", "--quiet"])
    captured = capsys.readouterr()
    assert code == 2
    assert "0 accepted (0 unanswerable), 2 rejected (2 malformed)" in captured.out
    assert "rejected p1_q001: malformed reply: planner: " in captured.out
    assert f"all_qa.json: {root / ALL_QA_PATH} (0 questions)" in captured.out
    assert "no QA pair was accepted (0 drafted)" in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.slow
def test_the_accepted_set_is_evaluated(run, tmp_path: Path) -> None:
    root, _, _ = run
    home = tmp_path / "home"
    env = {**os.environ, "INSPECT_CACHE_DIR": str(home / "inspect-cache"),
           "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
           "M3KIT_CACHE_DIR": str(home / "m3kit")}
    done = subprocess.run(
        [sys.executable, "-m", "m3kit", "eval", "supermemory", "-T", f"data={root}",
         "--model", "m3kit/builtin", "--limit", "2", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, env=env, timeout=280)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert list((tmp_path / "logs").glob("*.eval"))


def test_code_checks_name_what_is_wrong() -> None:
    from sm_qa_support import draft

    from m3kit.benchmarks.supermemory.construct.records import QADraft
    from m3kit.benchmarks.supermemory.construct.verify import code_checks

    def failed(raw: dict) -> set[str]:
        return {c.name for c in code_checks(QADraft.model_validate(raw)) if not c.passed}

    good = draft("good", "visual_recall", ["D1", "D2"])
    assert failed(good) == set()
    two_correct = json.loads(json.dumps(good))
    two_correct["answer"]["answer_choices"][1]["choice_type"] = "correct"
    assert failed(two_correct) == {"option_roles"}
    abstain = json.loads(json.dumps(good))
    abstain["answer"]["answer_choices"][2]["text"] = ABSTAIN_TEXT
    assert failed(abstain) == {"distinct_choices"}
    other_answer = json.loads(json.dumps(good))
    other_answer["answer"]["text"] = "Somewhere at home"
    assert failed(other_answer) == {"answer_text"}
    no_evidence = json.loads(json.dumps(good))
    no_evidence["answer"]["evidence_list"] = []
    assert failed(no_evidence) == {"evidence"}
    unanswerable = draft("good", "visual_recall", ["D1", "D2"], answerable=False)
    assert failed(unanswerable) == set()


def test_sessions_are_placed_by_the_records_when_transcripts_state_no_start(
        suite: EgoSuite, tmp_path: Path) -> None:
    # a person's own transcripts often say nothing of the clock (stage 1 had --starts): every
    # session an accepted pair names, by a question span or by evidence only, is placed by the
    # start the record states; one no record names is reported, never silently dropped
    root = release_root(suite, tmp_path / "root")
    for file in (root / "data" / "transcripts").rglob("*.json"):
        raw = json.loads(file.read_text())
        if isinstance(raw.get("metadata"), dict):
            raw["metadata"] = {k: v for k, v in raw["metadata"].items()
                               if "start" not in k}
            file.write_text(json.dumps(raw))
    backend, _ = scripted_backend(suite)
    report = annotate_questions(root, backend, settings=SETTINGS)
    backend.close()
    assert report.accepted == 4 and report.load_skipped_questions == []
    records = json.loads((root / ALL_QA_PATH).read_text())
    named = {s["video_id"] for r in records for s in r["question_evidence"]["time_spans"]}
    evidence = {e["video_id"] for r in records for e in r["answer_evidence"]["evidence_list"]}
    assert all("video_start_time_unix" in e for r in records
               for e in r["answer_evidence"]["evidence_list"])
    placed = {s.video_id for s in load_supermemory(root).sessions[1]}
    assert evidence - named  # a session holding only evidence: the case this is about
    assert named | evidence <= placed
    ledger = SuperLedger.model_validate_json(
        (root / "annotations" / "ledger" / "person_1.json").read_bytes())
    assert report.unplaced_sessions == [f"{s.video_id} (person 1)" for s in ledger.sessions
                                        if s.video_id not in placed]


def test_the_draft_format_names_only_the_persons_recordings() -> None:
    # a constraining server decodes a video id only among the person's recordings, every field
    # required in the release's order (evidence and reasons before what they justify)
    schema = draft_format(["P1_D1", "P1_D2"])
    answer = schema["properties"]["answer"]
    assert list(answer["properties"]) == ["evidence_list", "is_answerable", "answer_choices",
                                          "text"]
    assert answer["required"] == list(answer["properties"])
    evidence = answer["properties"]["evidence_list"]["items"]
    span = schema["properties"]["question"]["properties"]["time_spans"]["items"]
    for item in (evidence, span):
        assert item["properties"]["video_id"] == {"type": "string", "enum": ["P1_D1", "P1_D2"]}
    assert schema["properties"]["question"]["properties"]["time_spans"]["minItems"] == 1
    assert answer["properties"]["answer_choices"]["minItems"] == 3
