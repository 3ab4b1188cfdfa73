"""A tiny M3Eval folder in the released layout (real, decodable videos), with good and bad
records, and the raw model outputs whose scores test_score.py computes by hand."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from m3kit.perception import MiniLMEmbedder


def _load_scripted() -> None:
    """Register ``scripted.py`` as the module ``m3eval_scripted`` (tests are not a package, so
    the test files import it by that name; conftest runs before them)."""
    if "m3eval_scripted" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location("m3eval_scripted",
                                                  Path(__file__).with_name("scripted.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["m3eval_scripted"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)


_load_scripted()

ROLES_A = {"A": "correct", "B": "intrusion", "C": "irrelevant_distractor", "D": "intrusion"}
ROLES_B = {"A": "intrusion", "B": "correct", "C": "intrusion", "D": "irrelevant_distractor"}
FOUR = ["A. the cook stirs the pot", "B. the cook chops onions", "C. the cook plates the dish",
        "D. the cook washes a pan"]
SOURCES = ["A. Video 1", "B. Video 2"]


def _mc(rid: str, video: str, answer: str, options: list[str] | None = None,
        **fields: Any) -> dict[str, Any]:
    return {"id": rid, "video": video, "question": f"Question {rid}?",
            "options": options or FOUR, "answer": answer, **fields}


def _story(rid: str, video: str, answer: str, group: str | None, error: str,
           dimension: str) -> dict[str, Any]:
    extra = {"paper_v4_metric_group": group} if group else {}
    return _mc(rid, video, answer, paper_v4_metric_detail="storyline_reconstruction",
               storyline_error_type=error, source_dimension=dimension, **extra)


def _source(rid: str, video: str, answer: str, dimension: str, **extra: Any) -> dict[str, Any]:
    return _mc(rid, video, answer, SOURCES, paper_v4_metric_detail="source_memory",
               source_dimension=dimension, **extra)


SPLIT = "videos/split_screen/pair1_swap0.mp4"
SPLIT10 = "videos/split_screen/pair1_swap10.mp4"
CONCAT = "videos/memory_interference/pair2_v1v2.mp4"
INTERLEAVED = "videos/interleaved/pair3.mp4"
NBACK = "videos/nback/seq1.mp4"
MISSING = "videos/split_screen/not_there.mp4"

SPLIT_RECORDS: list[Any] = [
    _story("ss-1", SPLIT, "A", "swap0", "source_confusion", "spatial"),
    _story("ss-2", SPLIT, "B", "swap0", "order_disruption", "spatial"),
    _story("ss-3", SPLIT, "C", "swap0", "content_forgetting", "spatial"),
    _story("ss-4", SPLIT10, "A", "swap10", "source_confusion", "spatial"),
    _story("ss-5", SPLIT10, "A", "swap10", "order_disruption", "spatial"),
    _story("ss-6", SPLIT10, "D", "swap10", "content_forgetting", "spatial"),
    _source("ss-7", SPLIT10, "A", "spatial", paper_v4_metric_group="swap10"),
    _source("ss-8", SPLIT10, "B", "spatial", paper_v4_metric_group="swap10"),
    _story("ss-9", SPLIT, "B", "swap0", "source_confusion", "spatial"),
    _source("ss-10", MISSING, "A", "spatial", paper_v4_metric_group="swap10"),
    _story("ss-11", SPLIT, "A", "swap0", "order_disruption", "spatial"),
    # bad records: each is skipped and named
    _story("bad-escape", "../outside.mp4", "A", "swap0", "source_confusion", "spatial"),
    _story("bad-absolute", "/etc/passwd", "A", "swap0", "source_confusion", "spatial"),
    _mc("bad-option", SPLIT, "A", ["A. fine", "B) fine", "no letter here", "D. fine"],
        paper_v4_metric_detail="storyline_reconstruction", storyline_error_type="order_disruption",
        paper_v4_metric_group="swap0"),
    {"video": SPLIT, "question": "no id?", "options": SOURCES, "answer": "A",
     "paper_v4_metric_detail": "source_memory"},
    _mc("bad-answer", SPLIT, "E", paper_v4_metric_detail="storyline_reconstruction",
        storyline_error_type="order_disruption", paper_v4_metric_group="swap0"),
]

INTERFERENCE_RECORDS: list[Any] = [
    _mc("mi-1", CONCAT, "A", paper_v4_metric_group="proactive", option_role_by_letter=ROLES_A,
        intrusion_option_letter="B"),
    _mc("mi-2", CONCAT, "B", paper_v4_metric_group="proactive", option_role_by_letter=ROLES_B),
    # no role map: the intrusion letter is the fallback
    _mc("mi-3", CONCAT, "A", paper_v4_metric_group="retroactive", intrusion_option_letter="C"),
    _mc("mi-4", CONCAT, "A", interference_direction="retroactive", option_role_by_letter=ROLES_A),
    # neither: the question counts for accuracy, not for intrusion rate
    _mc("mi-5", CONCAT, "A", paper_v4_metric_group="retroactive"),
    _mc("mi-6", CONCAT, "A", paper_v4_metric_group="proactive", option_role_by_letter=ROLES_A),
    # the gold letter annotated as an intrusion: a broken record
    _mc("bad-role", CONCAT, "B", paper_v4_metric_group="proactive",
        option_role_by_letter=ROLES_A),
]

# The authors' release has no repetition probes (its interference records are proactive or
# retroactive only); these are in the form m3kit's builder writes (its group label), and in the
# paper's bracket notation.
REPEAT_TARGET_RECORDS = [
    _mc("mt-1", CONCAT, "A", paper_v4_metric_group="repeat_target",
        option_role_by_letter=ROLES_A),
]
REPEAT_INTERFERER_RECORDS = [
    _mc("mt-2", CONCAT, "A", paper_v4_metric_group="V1,V2,V2", option_role_by_letter=ROLES_A),
    # a condition named nowhere in the record (not guessed from the file name): no table cell
    _mc("mt-3", CONCAT, "A", option_role_by_letter=ROLES_A),
]

INTERLEAVED_RECORDS = [
    _story("il-1", INTERLEAVED, "A", None, "source_confusion", "narrative"),
    _story("il-2", INTERLEAVED, "B", None, "order_disruption", "narrative"),
    _story("il-3", INTERLEAVED, "C", None, "content_forgetting", "narrative"),
    _mc("il-4", INTERLEAVED, "D", ["A. Video 1", "B. Video 2", "C. Both videos",
                                   "D. Neither video"],
        paper_v4_metric_detail="false_source_attribution", source_dimension="narrative"),
    _source("il-5", INTERLEAVED, "A", "narrative"),
    _source("il-6", INTERLEAVED, "B", "narrative"),
]


def _nb(qid: str, attribute: str, n: int, answer: str, k: int | None = None,
        **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"question_id": qid, "video": NBACK,
                              "question": f"Does the last clip match on {attribute}?",
                              "options": ["Yes", "No"], "answer": answer,
                              "attribute": attribute, "n_value": n, **extra}
    if k is not None:
        record["clip_count"] = k
    return record


NBACK_LINES = [
    json.dumps(_nb("nb-1", "action", 1, "Yes", 3)),
    json.dumps(_nb("nb-2", "action", 2, "No", 3)),
    json.dumps(_nb("nb-3", "scene", 1, "Yes", 4)),
    "",
    json.dumps(_nb("nb-4", "scene", 2, "No", 4)),
    json.dumps(_nb("nb-5", "scene", 3, "yes", k_value=4)),  # k_value, lowercase gold
    json.dumps(_nb("nb-6", "action", 1, "No", 4)),
    '{"question_id": "nb-broken", ',  # invalid JSON
    json.dumps(_nb("bad-n", "scene", 4, "No", 4)),  # N must be below K
]

# Raw outputs (score_outputs' input). Comments say what each counts as.
PREDICTIONS: dict[str, str] = {
    "ss-1": "The final answer is A",  # no swap, source id: correct
    "ss-9": "The final answer is A",  # no swap, source id: wrong (gold B)
    "ss-2": "The final answer is A",  # no swap, order: wrong
    "ss-11": "__VIDEO_INPUT_SKIPPED__: cannot decode",  # the authors' sentinel: excluded
    "ss-3": "c",  # no swap, content: invalid (lowercase)
    "ss-4": "A",  # swap, source id: correct (bare letter)
    "ss-5": "Because...\nThe final answer is A.",  # swap, order: correct
    "ss-6": "The final answer is E",  # swap, content: invalid (no option E)
    "ss-7": "The final answer is A",  # spatial source: correct
    "ss-8": "The final answer is A",  # spatial source: wrong
    "ss-10": "The final answer is A",  # excluded by the caller (unreadable video)
    "mi-1": "The final answer is D",  # proactive: wrong, intrusion
    "mi-2": "The final answer is B",  # proactive: correct
    "mi-6": "Answer: B",  # proactive: invalid (not an intrusion)
    "mi-3": "The final answer is C",  # retroactive: wrong, intrusion by intrusion_option_letter
    "mi-4": "The final answer is A",  # retroactive: correct
    "mi-5": "The final answer is B",  # retroactive: wrong, no role info
    "mt-1": "The final answer is A",  # repeat target: correct
    "mt-2": "The final answer is B",  # repeat interferer: wrong, intrusion
    "il-1": "The final answer is A",  # source id: correct
    "il-2": "The final answer is A",  # order: wrong
    # il-3 has no prediction: wrong, counted as missing
    "il-4": "The final answer is D",  # false memory: correct
    "il-5": "The final answer is A",  # temporal source: correct
    "il-6": "The final answer is A",  # temporal source: wrong
    "nb-1": "The final answer is yes",  # action N1 K3: correct
    "nb-2": "yes",  # action N2 K3: wrong
    "nb-3": "No",  # scene N1 K4: wrong
    "nb-4": "no",  # scene N2 K4: correct
    "nb-5": "The final answer is Yes.",  # scene N3 K4: correct
    "nb-6": "Maybe",  # action N1 K4: invalid
    "not-a-question": "The final answer is A",
}
EXCLUDED = {"ss-10"}


def write_released(root: Path, video: Path, nback_video: Path) -> Path:
    """The released layout under ``root`` with the records above and real videos."""
    for rel in (SPLIT, SPLIT10, CONCAT, INTERLEAVED):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(video, root / rel)
    (root / NBACK).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(nback_video, root / NBACK)
    qa = root / "qa_root"
    files = {
        qa / "split_screen" / "split_screen_qa.json": SPLIT_RECORDS,
        qa / "memory_interference" / "memory_interference_qa.json": INTERFERENCE_RECORDS,
        qa / "memory_interference" / "repeat_target_qa.json": REPEAT_TARGET_RECORDS,
        qa / "memory_interference" / "repeat_interferer_qa.json": REPEAT_INTERFERER_RECORDS,
        qa / "interleaved" / "interleaved_qa.json": INTERLEAVED_RECORDS,
    }
    for path, records in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    (root / "questions").mkdir(exist_ok=True)
    (root / "questions" / "nback_questions.jsonl").write_text(
        "\n".join(NBACK_LINES) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def released_root(
    tmp_path_factory: pytest.TempPathFactory, pattern_video_factory: Callable[..., Path]
) -> Path:
    """The released folder (read-only use: tests that edit copy it first)."""
    video = pattern_video_factory(seconds=1.0, fps=10.0, width=64, height=48, keyint=10,
                                  bframes=0)
    nback_video = pattern_video_factory(seconds=1.2, fps=10.0, width=64, height=48, keyint=10,
                                        bframes=0)
    return write_released(tmp_path_factory.mktemp("m3eval_release"), video, nback_video)


@pytest.fixture
def released_predictions() -> dict[str, str]:
    """Raw outputs for the released folder's questions (see PREDICTIONS)."""
    return dict(PREDICTIONS)


@pytest.fixture
def released_excluded() -> set[str]:
    """Ids the caller reports as unreadable."""
    return set(EXCLUDED)


@pytest.fixture
def predictions_file(tmp_path: Path) -> Path:
    path = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"id": k, "prediction": v}) for k, v in PREDICTIONS.items()]
    lines.insert(3, "not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """One MiniLM for the pairing and build tests."""
    return MiniLMEmbedder()
