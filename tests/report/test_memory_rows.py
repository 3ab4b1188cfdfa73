"""Who a memory table's row is: the class rule (text-based / multimodal), one rule at a time,
and the flag on rows whose answer model is not the table's."""

from __future__ import annotations

import pytest

from m3kit.benchmarks import benchmark_named
from m3kit.report.memory_rows import FLAG, flag_models, memory_class, model_note, run_identity
from m3kit.schema import LoggedSample, Usage
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import LoggedRun

WITH_IMAGE = [LoggedSample(id="a"), LoggedSample(id="b", usage=Usage(images_sent=2))]
TEXT_ONLY = [LoggedSample(id="a"), LoggedSample(id="b", usage=Usage(prompt_tokens=9))]


@pytest.mark.parametrize(("memory", "config", "samples", "expected"), [
    # 1. no memory: the direct reference
    (None, None, WITH_IMAGE, ("none", "no memory: answered directly")),
    # 2. the memory's settings decide, whatever its name or what it sent
    ("context", {"send_images": False}, WITH_IMAGE, ("text", "memory_config send_images=False")),
    ("rag-text", {"send_images": True}, TEXT_ONLY,
     ("multimodal", "memory_config send_images=True")),
    ("mem0", {"vision": True}, TEXT_ONLY, ("multimodal", "memory_config vision=True")),
    # 3. the name's ending, whatever was sent
    ("rag-mm", None, TEXT_ONLY, ("multimodal", "the name 'rag-mm' ends in -mm")),
    ("mem0-Vision", {"send_images": "yes"}, TEXT_ONLY,  # not a boolean: rule 2 does not apply
     ("multimodal", "the name 'mem0-Vision' ends in -vision")),
    ("context-text", None, WITH_IMAGE, ("text", "the name 'context-text' ends in -text")),
    # 4. what reached the answer model
    ("context", None, WITH_IMAGE, ("multimodal", "it sent images to the answer model")),
    ("rag", {"k": 5}, TEXT_ONLY, ("text", "it sent no image to the answer model")),
])
def test_class_rule(memory, config, samples, expected) -> None:
    assert memory_class(memory, config, samples) == expected


def _run(model: str, memory: str | None, args: dict | None = None) -> LoggedRun:
    card = ReproCard(model=model, model_args=args or {}, memory=memory)
    regime = f"memory={memory}" if memory else "oracle"
    return LoggedRun(task="m3exam", model=model, status="success", card=card,
                     metadata={"m3kit_regime": regime}, task_args={"data": "/d/Pat"})


def test_identity_reads_the_card_and_labels_as_the_benchmark() -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    row = run_identity(m3exam, _run("m3kit/builtin", "rag"))
    assert (row.system, row.model, row.memory, row.memory_class) == (
        "m3kit/builtin · m3exam/Pat · memory=rag", "m3kit/builtin", "rag", "text")
    # a log without a card: the memory from the task's metadata and arguments
    bare = LoggedRun(task="m3exam", model="m", status="success",
                     metadata={"m3kit_memory": "context", "m3kit_regime": "memory=context"},
                     task_args={"memory_config": {"send_images": True}})
    assert run_identity(m3exam, bare).memory_class == "multimodal"


def test_rows_of_another_answer_model_are_flagged() -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    rows = flag_models([run_identity(m3exam, run) for run in (
        _run("a", "rag"), _run("b", "context"), _run("a", "context"),
        _run("a", "proctor", {"temperature": 0.5}))])
    # "a" without arguments is the model most rows use; other weights or arguments are flagged
    assert [r.model_differs for r in rows] == [False, True, False, True]
    assert rows[1].label == f"b · m3exam/Pat · memory=context {FLAG}"
    assert rows[0].label == "a · m3exam/Pat · memory=rag"
    note = model_note(rows)
    assert note is not None and note.startswith(f"{FLAG} answer model other than the one most "
                                                "rows use (a): ")
    assert "memory=proctor (a (temperature=0.5))" in note
    # one model: nobody flagged, no note
    same = flag_models([run_identity(m3exam, _run("a", m)) for m in ("rag", "context")])
    assert not any(r.model_differs for r in same) and model_note(same) is None
    # a tie: the first-seen model is the reference
    tie = flag_models([run_identity(m3exam, _run(m, "rag")) for m in ("x", "y")])
    assert [r.model_differs for r in tie] == [False, True]
