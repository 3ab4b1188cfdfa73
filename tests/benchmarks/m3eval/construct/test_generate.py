"""Question generation end to end with a scripted inspect model: good drafts are shuffled and
written in the released layout, broken ones are rejected into the review file."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import m3eval_scripted as scripted  # registered by conftest.py
import pytest

from m3kit.benchmarks.m3eval.construct.checker import DraftItem, check_item
from m3kit.benchmarks.m3eval.construct.generate import (
    DraftFormatError,
    GenerationConfig,
    generate_questions,
    parse_draft,
    shuffle_options,
)
from m3kit.benchmarks.m3eval.construct.pairing import VideoPair, VideoSource
from m3kit.benchmarks.m3eval.construct.plan import (
    BuildConfig,
    BuildPlan,
    NBackClip,
    NBackInstance,
    PairPlan,
    valid_nback_combinations,
)
from m3kit.benchmarks.m3eval.construct.review import read_review, read_review_items, set_status
from m3kit.models.backend import BackendError, BackendRequest

CONDITIONS = ["retroactive", "proactive", "repeat_target", "repeat_interferer"]
SMALL = GenerationConfig(caption_batches=2, frames_per_batch=2, nback_frames_per_clip=2,
                         max_side=64)
OUTPUTS = ["qa_root/split_screen/m3kit_generated_qa.json",
           "qa_root/memory_interference/m3kit_generated_qa.json",
           "qa_root/interleaved/m3kit_generated_qa.json", "questions/nback_questions.jsonl",
           "review/review.csv"]


@pytest.fixture(scope="module")
def sources(pattern_video_factory: Callable[..., Path]) -> list[VideoSource]:
    return [VideoSource(id=f"v{i}", path=str(pattern_video_factory(hue=h)), text=f"video {i}")
            for i, h in enumerate((0.0, 0.25, 0.5, 0.75))]


def _hand_plan(sources: list[VideoSource]) -> BuildPlan:
    """A build plan written by hand: generation reads only the sources, not the probe files."""
    pairs = []
    for n, (a, b) in enumerate(((0, 1), (2, 3)), start=1):
        pid = f"pair{n:02d}"
        probes = {"swap0": f"videos/split_screen/{pid}_swap0.mp4",
                  "swap10": f"videos/split_screen/{pid}_swap10.mp4",
                  **{c: f"videos/memory_interference/{pid}_{c}.mp4" for c in CONDITIONS},
                  "interleaved": f"videos/interleaved/{pid}.mp4"}
        pairs.append(PairPlan(pair=VideoPair(id=pid, video1=sources[a], video2=sources[b],
                                             similarity=0.9), probes=probes))
    clips = [NBackClip(source=s.id, path=s.path, start=float(c), end=float(c + 1))
             for s in sources for c in range(3)]
    combos = valid_nback_combinations(range(2, 10), [1, 2, 3, 4], len(clips))
    instance = NBackInstance(id="nback01", attribute="action", clips=clips,
                             combinations=combos,
                             videos={k: f"videos/nback/nback01_k{k}.mp4" for k, _ in combos})
    return BuildPlan(config=BuildConfig(), pairs=pairs, nback=[instance])


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, sources: list[VideoSource]):
    root = tmp_path_factory.mktemp("generated")
    _hand_plan(sources).save(root)
    backend, script = scripted.scripted_backend()
    report = generate_questions(root, backend, config=SMALL)
    return root, report, script


def _qa(root: Path, folder: str) -> list[dict]:
    return json.loads((root / "qa_root" / folder / "m3kit_generated_qa.json").read_text())


def test_only_good_designs_are_written(generated) -> None:
    root, report, _ = generated
    # pair01 targets video1 (all good); pair02 targets video2: split + interleaved storylines
    # and source memory are broken (4 + 4 drafts); its interference (video1) and false source
    # items are good. Passed: pair01 3 + 1 + 1 + 5 = 10, pair02 1 + 1 = 2.
    assert report.passed == 12
    assert sorted(report.rejected) == sorted(
        [f"pair02_split_{m}" for m in ("source_confusion", "order_disruption",
                                        "content_forgetting", "source_memory")]
        + [f"pair02_interleaved_{m}" for m in ("source_confusion", "order_disruption",
                                                "content_forgetting", "source_memory")])
    assert "slot_grid" in report.rejected["pair02_split_source_confusion"]
    assert "order_swap" in report.rejected["pair02_split_order_disruption"]
    assert report.rejected["pair02_split_content_forgetting"].startswith("malformed")
    assert "answer" in report.rejected["pair02_split_source_memory"]
    # split: 3 storylines × (swap0, swap10) + 1 source memory; interference: 2 pairs × 4
    # orders; interleaved: pair01 5 + pair02 false source 1; N-back: 26 (K, N) combinations.
    assert report.files == {"qa_root/split_screen/m3kit_generated_qa.json": 7,
                            "qa_root/memory_interference/m3kit_generated_qa.json": 8,
                            "qa_root/interleaved/m3kit_generated_qa.json": 6,
                            "questions/nback_questions.jsonl": 26}
    for folder in ("split_screen", "memory_interference", "interleaved"):
        assert all(not r["id"].startswith("pair02_split_") or "source" not in r["id"]
                   for r in _qa(root, folder))


def test_shuffle_keeps_roles_and_is_identical_across_conditions(generated) -> None:
    root, _, _ = generated
    split = _qa(root, "split_screen")
    stories = [r for r in split if r["paper_v4_metric_detail"] == "storyline_reconstruction"]
    assert len(stories) == 6
    for rec in stories:
        body = {o[0]: o[3:] for o in rec["options"]}
        assert body[rec["answer"]] in (scripted.A_SWAP, scripted.A_ORDER)
        assert rec["option_role_by_letter"][rec["answer"]] == "correct"
        assert sorted(rec["option_role_by_letter"].values()).count(
            rec["storyline_error_type"]) == 3
        assert rec["source_dimension"] == "spatial"
    by_mode: dict[str, list[dict]] = {}
    for rec in stories:
        by_mode.setdefault(rec["storyline_error_type"], []).append(rec)
    for recs in by_mode.values():  # the swap0 and swap10 copies ask the very same item
        assert {r["paper_v4_metric_group"] for r in recs} == {"swap0", "swap10"}
        assert recs[0]["options"] == recs[1]["options"]
    inter = [r for r in _qa(root, "memory_interference") if r["pair_id"] == "pair01"]
    assert sorted(r["paper_v4_metric_group"] for r in inter) == sorted(CONDITIONS)
    for rec in inter:
        body = {o[0]: o[3:] for o in rec["options"]}
        assert body[rec["answer"]] == "Teal with white dots"
        assert body[rec["intrusion_option_letter"]] == "Orange and plain"
        assert rec["option_role_by_letter"][rec["intrusion_option_letter"]] == "intrusion"
        assert rec["options"] == inter[0]["options"]
    assert {r.get("interference_direction") for r in inter} == {"proactive", "retroactive",
                                                                None}
    fs = [r for r in _qa(root, "interleaved")
          if r["paper_v4_metric_detail"] == "false_source_attribution"]
    assert len(fs) == 2
    assert all({o[0]: o[3:] for o in r["options"]}[r["answer"]] == "Neither video" for r in fs)


def test_nback_answers_follow_the_running_labels(generated) -> None:
    root, _, script = generated
    lines = [json.loads(x) for x in (root / "questions/nback_questions.jsonl").read_text()
             .splitlines()]
    assert script.calls["label"] == 12
    assert {(r["k_value"], r["n_value"]) for r in lines} == set(
        valid_nback_combinations(range(2, 10), [1, 2, 3, 4]))
    # "CHOPPING vegetables" was mapped back to the list's exact phrase.
    phrases = {p for r in lines for p in r["labels"]}
    assert "CHOPPING vegetables" not in phrases and "chopping vegetables" in phrases
    for r in lines:
        k, n = r["k_value"], r["n_value"]
        same = r["labels"][k - 1] == r["labels"][k - 1 - n]
        assert r["answer"] == ("Yes" if same else "No")
        assert r["video"] == f"videos/nback/nback01_k{k}.mp4"
    assert {r["answer"] for r in lines} == {"Yes", "No"}


def test_review_file_lists_every_item_with_a_status(generated) -> None:
    root, _report, _ = generated
    statuses = read_review(root / "review" / "review.csv")
    # 7 + 8 + 6 written records and 26 N-back questions pending; 8 rejected drafts.
    assert sum(s == "pending" for s in statuses.values()) == 47
    assert sum(s == "rejected" for s in statuses.values()) == 8
    rejected = {i.id: i for i in read_review_items(root / "review" / "review.csv")
                if i.status == "rejected"}
    assert "slot_grid" in rejected["pair02_split_source_confusion"].checker
    assert (root / "review" / "review.html").read_text().count("<tr") == 1 + 55
    assert _report.n_rejected_rows == 8  # the summary's count is the file's
    assert _report.hint() is None  # questions were written


def test_every_rejection_the_summary_counts_is_a_review_row(sources, tmp_path: Path) -> None:
    """Captions that never parse and N-back clips that never get a label are
    rejected rows with reasons, as many as the summary says."""
    root = tmp_path / "failing"
    _hand_plan(sources).save(root)
    backend, _ = scripted.scripted_backend(always_malformed_captions=True,
                                           malformed_labels=True)
    report = generate_questions(root, backend, config=SMALL)
    # 4 videos × 2 caption batches; both pairs lose their questions; 12 N-back clips unlabelled
    assert (len(report.caption_failures), len(report.pairs_skipped),
            len(report.label_failures)) == (8, 2, 12)
    assert report.rejected == {} and report.caption_batches == 0  # no draft was ever made
    summary = report.summary()
    assert "0 drafts passed the checker, 0 drafts rejected" in summary
    assert "2 video pairs skipped (no usable captions)" in summary
    assert "0 N-back questions, 12 N-back clips unlabelled" in summary
    assert "0 caption batches parsed, 8 caption batches rejected" in summary
    hint = report.hint()
    assert hint is not None and "did not produce the caption schema" in hint
    assert "all 8 caption batches" in hint and "\n" not in hint
    items = read_review_items(root / "review" / "review.csv")
    assert all(i.status == "rejected" and i.checker != "ok" for i in items)
    assert len(items) == report.n_rejected_rows == 8 + 2 + 12
    by_id = {i.id: i for i in items}
    assert "no usable captions" in by_id["pair01"].checker
    assert "after 3 replies" in by_id["v0_caption_batch1"].checker
    assert by_id["v0_caption_batch1"].video == sources[0].path
    assert "has no label" in by_id["nback01_clip11_label"].checker


def test_hint_when_captions_parse_but_no_question_is_written() -> None:
    from m3kit.benchmarks.m3eval.construct.generate import GenerationReport

    # captions fine, every draft refused, no N-back: nothing written, a hint naming the counts
    report = GenerationReport(caption_batches=4, rejected={"q1": "bad", "q2": "bad"},
                              review_csv="r.csv")
    hint = report.hint()
    assert hint is not None and hint.startswith("no question was generated: 2 drafts rejected")
    assert "r.csv" in hint
    assert GenerationReport(caption_batches=4, files={"qa.json": 1}).hint() is None


def test_loader_reads_the_generated_layout(generated, tmp_path: Path) -> None:
    load = pytest.importorskip("m3kit.benchmarks.m3eval.load")
    root, _, _ = generated
    pending = load.load_m3eval(root)
    assert pending.questions == []  # nothing is accepted yet: the loader honours the review
    statuses = read_review(root / "review" / "review.csv")
    set_status(root, {i: "accepted" for i, s in statuses.items() if s == "pending"})
    loaded = load.load_m3eval(root)
    assert len(loaded.questions) == 47
    assert all(s.reason for s in loaded.skipped)
    by_paradigm: dict[str, int] = {}
    for q in loaded.questions:
        by_paradigm[q.metadata["paradigm"]] = by_paradigm.get(q.metadata["paradigm"], 0) + 1
    assert by_paradigm == {"divided_attention": 7, "interference": 8, "interleaved": 6,
                           "nback": 26}
    conditions = {q.metadata["condition"] for q in loaded.select("interference")}
    assert conditions == set(CONDITIONS)


def test_parse_draft_accepts_a_fenced_object_and_rejects_prose() -> None:
    body = json.dumps(scripted.storyline("source_confusion", "video1", False))
    draft = parse_draft(f"```json\n{body}\n```", "source_confusion")
    assert check_item(draft).ok
    with pytest.raises(DraftFormatError, match="not one JSON object"):
        parse_draft("Here it is: " + body, "source_confusion")
    with pytest.raises(DraftFormatError, match="not an object"):
        parse_draft("[1, 2]", "source_confusion")


def test_shuffle_is_seeded_and_keeps_roles() -> None:
    draft = DraftItem.model_validate(
        {"failure_mode": "memory_interference", **scripted.interference("video1")})
    first = shuffle_options(draft, random.Random("s:1"))
    assert first == shuffle_options(draft, random.Random("s:1"))
    options, answer, roles, intrusion = first
    text = {o[0]: o[3:] for o in options}
    assert text[answer] == "Teal with white dots" and roles[answer] == "correct"
    assert text[intrusion] == "Orange and plain" and roles[intrusion] == "intrusion"
    assert sorted(roles.values()) == ["correct", "intrusion", "intrusion",
                                      "irrelevant_distractor"]
    orders = {tuple(shuffle_options(draft, random.Random(f"s:{i}"))[0]) for i in range(20)}
    assert len(orders) > 1  # the shuffle really moves options
    sm = DraftItem.model_validate({"failure_mode": "source_memory",
                                   **scripted.source_memory("video2", False)})
    assert shuffle_options(sm, random.Random(0))[:2] == (["A. Video 1", "B. Video 2"], "B")


class _Recorder:
    """A ``GenerationProgress`` that keeps what it was told."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.reused: dict[str, int] = {}

    def stage(self, name: str, total: int) -> None:
        self.totals[name] = total

    def advance(self, name: str, *, reused: bool = False) -> None:
        counts = self.reused if reused else self.done
        counts[name] = counts.get(name, 0) + 1

    def message(self, text: str) -> None:
        pass


def _question_calls(job_ids: set[str]) -> int:
    """Model calls the scripted model needs for these question jobs: 1 each, except pair02's
    content_forgetting jobs (target video2), whose replies are never JSON: 3 attempts each."""
    return sum(3 if j.startswith("pair02") and j.endswith("content_forgetting") else 1
               for j in job_ids)


def _job_ids(root: Path) -> set[str]:
    return {p.stem for p in (root / "build/generation/questions").glob("*.json")}


def test_rerun_reuses_every_finished_unit(generated, tmp_path: Path) -> None:
    first, _, _ = generated
    root = tmp_path / "again"
    shutil.copytree(first, root)
    backend, script = scripted.scripted_backend()
    progress = _Recorder()
    report = generate_questions(root, backend, config=SMALL, progress=progress)
    assert script.calls == {}  # not one model call
    # 4 videos, 2 pairs × (3 split + 1 source memory + 1 interference + 5 interleaved) jobs,
    # 1 N-back instance.
    assert progress.totals == {"captions": 4, "questions": 20, "nback": 1}
    assert progress.reused == progress.totals and progress.done == {}
    assert report.reused == 25
    for rel in OUTPUTS:
        assert (root / rel).read_bytes() == (first / rel).read_bytes(), rel


def test_changed_settings_redo_only_what_they_touch(generated, tmp_path: Path) -> None:
    first, _, _ = generated
    root = tmp_path / "labels"
    shutil.copytree(first, root)
    backend, script = scripted.scripted_backend()
    # Another frame count per N-back clip changes the N-back key only.
    generate_questions(root, backend, config=SMALL.model_copy(
        update={"nback_frames_per_clip": 3}))
    assert script.calls == {"label": 12}


def test_killed_run_resumes_without_redoing(generated, sources, tmp_path: Path) -> None:
    root = tmp_path / "killed"
    _hand_plan(sources).save(root)
    serial = SMALL.model_copy(update={"max_connections": 1})
    backend, script = scripted.scripted_backend(kill_at_question=6)
    # the backend reports a provider's exception as one typed BackendError line
    with pytest.raises((scripted.Killed, BackendError), match="killed at question call"):
        generate_questions(root, backend, config=serial)
    # Questions start once every caption is in: all 4 videos were saved before the kill. The
    # jobs saved are those whose replies all came before the run stopped (a job whose call was
    # killed, or still waiting for its turn, is not).
    assert len(list((root / "build/generation/captions").glob("*.json"))) == 4
    finished = _job_ids(root)
    assert 0 < len(finished) < 20
    assert _question_calls(finished) < script.calls["question"]
    nback_done = (root / "build/generation/nback/nback01.json").is_file()

    backend, script = scripted.scripted_backend()
    report = generate_questions(root, backend, config=serial)
    assert "caption" not in script.calls  # no video captioned again
    assert script.calls["question"] == _question_calls(_job_ids(root) - finished)
    assert script.calls.get("label", 0) == (0 if nback_done else 12)
    assert report.reused == 4 + len(finished) + nback_done
    first, _, _ = generated  # the resumed run wrote what an uninterrupted run writes
    for rel in OUTPUTS[:4]:
        assert (root / rel).read_bytes() == (first / rel).read_bytes(), rel


class _Gauge:
    """An async backend over the scripted replies that records the most calls in flight."""

    name = "gauge"

    def __init__(self) -> None:
        self.script = scripted.Script()
        self.in_flight = self.peak = 0

    def complete(self, request: BackendRequest) -> str:
        raise AssertionError("the pipeline awaits acomplete")

    async def acomplete(self, request: BackendRequest) -> str:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.005)  # hold the slot long enough for others to queue
        self.in_flight -= 1
        return self.script.reply(request.prompt)


def test_calls_run_concurrently_up_to_max_connections(sources, tmp_path: Path) -> None:
    _hand_plan(sources).save(tmp_path)
    gauge = _Gauge()
    report = generate_questions(tmp_path, gauge, config=SMALL.model_copy(
        update={"max_connections": 3}))
    # 8 caption batches (4 videos × 2) and the N-back labels start together: 3 at a time.
    assert gauge.peak == 3
    assert report.passed == 12 and report.nback_written == 26
