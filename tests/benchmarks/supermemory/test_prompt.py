"""The SuperMemory-VQA prompt asks for a ranking of all four options, and a text-surrogate
model (``m3kit.models.prompt``, read by ``m3kit/builtin``) sees it as such: the question, four
options with the abstain one marked, the ranking format, and no instruction taken as evidence."""

from __future__ import annotations

from m3kit.benchmarks.supermemory.prompt import (
    direct_text,
    memory_text,
    prompt_template,
    question_block,
)
from m3kit.models.prompt import FormatKind, is_abstain, parse_prompt
from m3kit.schema import Choice, Question

QUESTION = Question(id="1", benchmark="supermemory", text="Where is the kettle?", answer="A",
                    choices=[Choice(letter="A", text="In the pantry."),
                             Choice(letter="B", text="In the garage."),
                             Choice(letter="C", text="This question can not be answered."),
                             Choice(letter="D", text="On the roof.")])


def test_the_ranking_request_is_read_as_one() -> None:
    parsed = parse_prompt(question_block(QUESTION))
    assert parsed.question == "Where is the kettle?"
    assert [o.abstain for o in parsed.options] == [False, False, True, False]
    assert parsed.answer_format.kind is FormatKind.RANKING
    assert parsed.answer_format.render("B > A > C > D") == "Ranking: B > A > C > D"
    assert parsed.context == ()  # the instructions are not evidence
    assert is_abstain("This question cannot be answered.")


def test_direct_text_keeps_the_transcript_as_evidence() -> None:
    text = direct_text(QUESTION, now="2023-11-14 22:13:30",
                       transcript="What was heard in this recording up to now (time, speaker: "
                                  "words):\n[22:13:23] User: I put the kettle in the pantry.",
                       blind=False)
    parsed = parse_prompt(text)
    assert any("kettle in the pantry" in line for line in parsed.context)
    assert not any("asked on" in line for line in parsed.context)  # the moment is no evidence
    assert "asked on 2023-11-14 22:13:30" in memory_text(QUESTION, now="2023-11-14 22:13:30")
    assert parse_prompt(direct_text(QUESTION, now=None, transcript="", blind=True)).context == ()


def test_the_template_names_its_parts() -> None:
    assert "{frames}" in prompt_template(blind=False, memory=False)
    assert "{what the memory retrieved}" in prompt_template(blind=False, memory=True)
    assert "{frames}" not in prompt_template(blind=True, memory=False)
