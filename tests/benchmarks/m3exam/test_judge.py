"""The M3Exam judge through a real inspect OpenAI-compatible provider, against the scripted
server on loopback: rubric replies parsed, failures reported per item, replies cached, and the
agreement table (paper Table 3)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeserver import ScriptedServer
from m3kit.benchmarks.m3exam.judge import (
    HumanLabel,
    JudgeRequest,
    agreement_table,
    judge_agreement_report,
    judge_answers,
)

_ANSWER = re.compile(r"^Model's answer: (.*)$", re.MULTILINE)
# What the scripted judge says for each prediction.
_REPLIES = {
    "Medial Saphenous Vein": "The answer matches.\nScore: 1",
    "the saphenous vein": "Score: 0.75",
    "a leg vein": "Score: 0.25",
    "Cephalic Vein": '{"score": 0.5}',
    "banana": "Score: 0",
}


def _judge_reply(prompt: str) -> str:
    match = _ANSWER.search(prompt)
    return _REPLIES.get(match.group(1).strip() if match else "", "I am not sure about this one.")


@pytest.fixture
def judge_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    server = ScriptedServer(answer=_judge_reply, key_of=lambda p: _ANSWER.search(p).group(1))
    server.start()
    monkeypatch.setenv("JUDGESRV_BASE_URL", server.base_url)
    monkeypatch.setenv("JUDGESRV_API_KEY", "sk-test")
    yield server
    server.stop()


MODEL = "openai-api/judgesrv/scripted-judge"


def _requests() -> list[JudgeRequest]:
    q, gold = "Which vein is first choice for venipuncture in cats?", "Medial Saphenous Vein"
    preds = ["Medial Saphenous Vein", "the saphenous vein", "a leg vein", "Cephalic Vein",
             "banana", "something odd"]  # fmt: skip
    return [
        JudgeRequest(id=f"q{i}", question=q, gold=gold, prediction=p) for i, p in enumerate(preds)
    ]


def test_judge_levels_parse_and_cache(judge_model: ScriptedServer) -> None:
    verdicts = judge_answers(_requests(), MODEL)
    assert [v.id for v in verdicts] == [f"q{i}" for i in range(6)]
    assert [v.score for v in verdicts] == [1.0, 0.75, 0.25, 0.5, 0.0, 0.0]
    assert [v.parsed for v in verdicts] == [True, True, True, True, True, False]
    assert verdicts[5].reply == "I am not sure about this one."
    # The prompt the server saw carries the rubric and the gold.
    first = judge_model.requests_for("Medial Saphenous Vein")[0].prompt
    assert (
        "0.75: good / minor imperfection" in first and "Gold answer: Medial Saphenous Vein" in first
    )
    calls = len(judge_model.records)
    assert calls == 6
    # Same judge, same items: served from inspect's cache, no new calls.
    again = judge_answers(_requests(), MODEL)
    assert [v.score for v in again] == [v.score for v in verdicts]
    assert len(judge_model.records) == calls


def test_backend_failure_is_reported_per_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    server = ScriptedServer(answer=_judge_reply, key_of=lambda p: _ANSWER.search(p).group(1))
    base_url = server.start().base_url
    server.stop()  # nothing listens on its port any more
    monkeypatch.setenv("DEADSRV_BASE_URL", base_url)
    monkeypatch.setenv("DEADSRV_API_KEY", "sk-test")
    verdicts = judge_answers(_requests()[:1], "openai-api/deadsrv/x", cache=False, max_retries=0)
    assert verdicts[0].parsed is False and verdicts[0].score == 0.0
    assert verdicts[0].error


def _labels() -> list[HumanLabel]:
    q, gold = "Which vein?", "Medial Saphenous Vein"
    rows = [
        ("t1", "Medial Saphenous Vein", True, "text", 1.0),
        ("t2", "the saphenous vein", True, "text", 0.5),
        ("t3", "banana", False, "text", 0.0),
        ("i1", "Cephalic Vein", False, "image", 0.75),
        ("i2", "a leg vein", False, "image", 0.25),
    ]
    return [
        HumanLabel(id=i, question=q, gold=gold, prediction=p, human=h, group=g, judges={"file": s})
        for i, p, h, g, s in rows
    ]


def test_agreement_table_hand_counted() -> None:
    table = agreement_table(_labels(), {"file": {lab.id: lab.judges["file"] for lab in _labels()}})
    assert table["human"]["text"] == {
        "count": 3, "correct": 2, "incorrect": 1, "agree": 3, "accuracy": 1.0,
    }  # fmt: skip
    # text: scores 1, 0.5, 0 -> at 0.75: T, F, F (1 / 2); human T, T, F -> agree 2 of 3
    assert table["file"]["text"] == {
        "count": 3, "correct": 1, "incorrect": 2, "agree": 2, "accuracy": pytest.approx(2 / 3),
    }  # fmt: skip
    # image: 0.75, 0.25 -> T, F; human F, F -> agree 1 of 2
    assert table["file"]["image"]["accuracy"] == pytest.approx(0.5)
    assert (table["file"]["image"]["correct"], table["file"]["image"]["incorrect"]) == (1, 1)


def test_agreement_table_overall_ungrouped_and_empty_cells() -> None:
    labels = [
        *_labels(),
        HumanLabel(id="u1", human=True, judges={"file": 1.0}),  # no group
        HumanLabel(id="u2", human=False, judges={"file": 1.0}),  # no group
    ]
    # "late" scored only the text items: its image and (no group) cells compare nothing
    late = {"t1": 0.0, "t2": 1.0, "t3": 0.0}
    table = agreement_table(labels, {"file": {lab.id: lab.judges["file"] for lab in labels},
                                     "late": late})
    assert list(table["human"]) == ["image", "text", "(no group)", "overall"]
    # (no group): u1, u2 scored 1, 1 -> T, T; human T, F -> agree 1 of 2
    assert table["file"]["(no group)"] == {
        "count": 2, "correct": 2, "incorrect": 0, "agree": 1, "accuracy": 0.5,
    }  # fmt: skip
    # overall, all 7 items: agree text 2 + image 1 + ungrouped 1 = 4 of 7;
    # judged correct: t1, i1, u1, u2 = 4, incorrect 3
    assert table["file"]["overall"] == {
        "count": 7, "correct": 4, "incorrect": 3, "agree": 4, "accuracy": pytest.approx(4 / 7),
    }  # fmt: skip
    # human: correct t1, t2, u1 = 3 of 7
    assert table["human"]["overall"] == {
        "count": 7, "correct": 3, "incorrect": 4, "agree": 7, "accuracy": 1.0,
    }  # fmt: skip
    # late: 0/0 in image is no figure, not 0%; text 0, 1, 0 -> F, T, F vs T, T, F -> 2 of 3
    assert table["late"]["image"] == {
        "count": 0, "correct": 0, "incorrect": 0, "agree": 0, "accuracy": None,
    }  # fmt: skip
    assert table["late"]["overall"]["accuracy"] == pytest.approx(2 / 3)
    # nothing has a group: one overall column, no "(no group)" twin of it
    only = agreement_table(labels[-2:], {"file": {"u1": 1.0, "u2": 1.0}})
    assert list(only["file"]) == ["overall"]
    with pytest.raises(ValueError, match="reserved"):
        HumanLabel(id="x", human=True, group="overall")


def test_agreement_report_runs_a_judge_model(judge_model: ScriptedServer) -> None:
    report = judge_agreement_report(_labels(), [MODEL], threshold=0.75)
    table = report["table"]
    assert list(table) == ["human", "file", MODEL]
    # The scripted judge: t1 1, t2 0.75, t3 0 -> T, T, F = human T, T, F: 3 of 3
    assert table[MODEL]["text"]["accuracy"] == 1.0
    # i1 0.5, i2 0.25 -> F, F = human F, F: 2 of 2
    assert table[MODEL]["image"] == {
        "count": 2, "correct": 0, "incorrect": 2, "agree": 2, "accuracy": 1.0,
    }  # fmt: skip
    assert "judge_failures" not in report
