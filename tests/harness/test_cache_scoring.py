"""Cache policies, redaction and the scorer's decisions, without running an eval (cache scopes:
``test_cache_scope``)."""

from __future__ import annotations

from m3kit.benchmarks.m3eval.item import score_answer
from m3kit.harness.cache import response_cache, stable_hash
from m3kit.models.redact import one_line, redact


def test_response_cache_policy():
    policy = response_cache(True, {"m3kit": "abc"})
    assert policy.scopes == {"m3kit": "abc"} and policy.per_epoch
    assert response_cache(False, {"m3kit": "abc"}) is False
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})


def test_redaction(monkeypatch):
    monkeypatch.setenv("LOCAL_API_KEY", "sk-very-secret-value")
    text = "401 for sk-very-secret-value at https://user:pw@host/v1 Bearer abc.def"
    out = redact(text)
    assert "sk-very-secret-value" not in out and "user:pw" not in out and "abc.def" not in out
    assert "\n" not in one_line("a\nb\n  c") and one_line("x" * 500).endswith("…")


def test_score_answer_statuses(make_q, probe_video):
    q = make_q(1, probe_video)
    correct = score_answer(q, "The final answer is A")
    assert (correct.status, correct.answer, correct.role) == ("correct", "A", "correct")
    intrusion = score_answer(q, "Blue, I think.\nThe final answer is B")
    assert (intrusion.status, intrusion.role) == ("incorrect", "intrusion")
    invalid = score_answer(q, "The final answer is D")
    assert invalid.status == "invalid" and "D" in invalid.reason
    failed = score_answer(q, "", failure="model: boom")
    assert failed.status == "failed" and failed.reason == "model: boom"
    assert correct.groups == {"paradigm": "interference", "condition": "near"}


def test_score_yes_no_maps_to_the_letter(make_q, probe_video):
    q = make_q(1, probe_video, nback=True, k=4)
    assert score_answer(q, "The final answer is yes").answer == "A"
    no = score_answer(q, "No")
    assert (no.status, no.answer) == ("incorrect", "B")
    assert score_answer(q, "The final answer is A").status == "invalid"
