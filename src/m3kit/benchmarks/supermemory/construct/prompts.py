"""Stage 2's prompts: the planner (drafts one QA pair), the verifier (scores it), the enhancer
(rewrites what failed). m3kit's own wording of the release's rules (seed 003 §3.4, appendix D;
the release's ``prompts/qa_generation.py``, ``verification.py``, ``enhancement.py``): the six
skills, rationale-first replies in the order answer → question → metadata, three choices
(correct / vague / incorrect when answerable, three incorrect when not: the abstain option is
added in code), times in seconds local to a ``video_id``, evidence strictly before the
question. Each prompt opens with its role line, which names the stage to a reader of the call
cache (and to the tests' scripted model).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from m3kit.benchmarks.supermemory.construct.records import CRITERIA, QADraft
from m3kit.schema.supermemory import ABSTAIN_TEXT, SKILLS

__all__ = [
    "ENHANCER_ROLE",
    "PLANNER_ROLE",
    "SKILL_DEFINITIONS",
    "VERIFIER_ROLE",
    "draft_text",
    "enhancer_prompt",
    "planner_prompt",
    "verifier_prompt",
]

PLANNER_ROLE = "ROLE: planner of memory questions for a wearable-camera benchmark."
VERIFIER_ROLE = "ROLE: verifier of memory questions for a wearable-camera benchmark."
ENHANCER_ROLE = "ROLE: editor who repairs memory questions for a wearable-camera benchmark."

SKILL_DEFINITIONS: dict[str, str] = {
    "object_location_memory":
        "where the wearer last put or saw an object; the evidence follows the object through "
        "its moves, the question comes when the wearer is looking for it or comes back for it.",
    "conversational_memory":
        "what was said, promised or agreed in a conversation (or said aloud to oneself); the "
        "question comes when the wearer needs that detail again.",
    "visual_recall":
        "a small visual detail seen in passing: text on a sign, a label, a screen, a number, "
        "a colour; the question comes when the detail is needed.",
    "in_context_retrieval":
        "two hops: one remembered fact is needed to find another (who said where, then what "
        "is there); needs at least two pieces of evidence at different times.",
    "timeline_reconstruction":
        "when things happened or in what order, asked as a person would ask it (never "
        "'order these events'); needs at least two pieces of evidence at different times.",
    "intent_recall":
        "an intention the wearer stated or implied earlier, recalled at the moment it "
        "becomes due; the question is the wearer's own trigger ('is there anything I meant to "
        "do here?') and must not state the intention itself.",
}
assert tuple(SKILL_DEFINITIONS) == SKILLS  # one definition per skill, in the paper's order

_TIMES = ("Times are seconds (numbers, not MM:SS) local to the recording named by video_id; "
          "the ledger gives each event's local span first, then its clock time.")

_SHAPE = {
    "answer": {
        "evidence_list": [{"reason": "why this moment answers the question", "video_id": "...",
                           "time_span": {"start_time": 0.0, "end_time": 0.0}}],
        "is_answerable": True,
        "answer_choices": [
            {"explanation": "why it is right", "choice_type": "correct", "text": "..."},
            {"explanation": "why it is too unspecific", "choice_type": "vague",
             "text": "..."},
            {"explanation": "why it is wrong", "choice_type": "incorrect", "text": "..."}],
        "text": "the correct choice's text, exactly",
    },
    "question": {"question_reasoning": "when and why the wearer asks, and how long after the "
                                       "evidence", "text": "...",
                 "time_spans": [{"video_id": "...", "start_time": 0.0, "end_time": 0.0}]},
    "metadata": {"skill_reasoning": "why the pair tests this skill", "skill": "..."},
}


def _shape() -> str:
    return json.dumps(_SHAPE, indent=1)


def _skills() -> str:
    return "\n".join(f"- {name}: {text}" for name, text in SKILL_DEFINITIONS.items())


def _draft_rules() -> str:
    return f"""Rules for a QA pair:
- Reason first: fill the fields in the order shown (answer, then question, then metadata);
  each reasoning field comes before what it justifies.
- Evidence first, question later: every evidence span must END BEFORE the question's moment
  (the end of the question's last span on its video). Prefer a gap of many minutes or another
  day between the evidence and the question.
- The question is asked by the wearer, in the first person, at the moment given by
  question.time_spans (a stretch of the ledger when it makes sense to ask).
- {_TIMES}
- Exactly three answer_choices. Answerable: one "correct", one "vague" (true but too
  unspecific to help), one "incorrect" (plausible but false); answer.text equals the correct
  choice's text character for character. Unanswerable (the ledger does not hold the answer):
  three "incorrect" choices, answer.text says why it cannot be answered, evidence_list holds
  the nearest misleading moments (may be empty). Do not write the option
  "{ABSTAIN_TEXT}": it is added to every question.
- Choices alike in length, specificity and style, so none can be guessed without memory; no
  invented people or places the ledger never shows.
- No personal identifiers: no licence plates, ID or card numbers, passwords, addresses.
- Use only what the ledger says."""


def planner_prompt(ledger: str, *, skill: str, answerable: bool, scope: str,
                   anchor: str | None) -> str:
    """The prompt drafting one QA pair of ``skill`` over ``ledger`` (the ledger text of the
    pair's scope: the whole record, or one day); ``anchor`` an event line to build it around."""
    kind = ("ANSWERABLE: the ledger holds the answer" if answerable else
            "UNANSWERABLE: ask about a detail the ledger never records, with a premise close "
            "to what it does record")
    where = "the whole record (several days)" if scope == "global" else "one day"
    around = (f"\nBuild it around this event (the evidence, or for an unanswerable question "
              f"the misleading context), asking later:\n{anchor}\n" if anchor else "")
    return f"""{PLANNER_ROLE}

A person wore a camera for days. Below is their Super Ledger ({where}): every stretch of their
recordings, described. Write ONE question-answer pair that tests their memory.

The six skills:
{_skills()}

Skill to test: {skill}
Kind: {kind}
{around}
{_draft_rules()}

Reply with one JSON object, nothing else, in this shape:
{_shape()}

{ledger}"""


def draft_text(draft: QADraft) -> str:
    """A draft as the verifier and the enhancer read it (its JSON)."""
    return draft.model_dump_json(indent=1)


def verifier_prompt(draft: QADraft, *, spans: str, context: Sequence[str],
                    causality: str) -> str:
    """The prompt scoring ``draft``: ``spans`` lists its spans on the clock, ``context`` the
    ledger events the retriever found for it, ``causality`` the code's verdict on time."""
    found = "\n".join(context) or "(no event of the ledger matches)"
    scores = ", ".join(f'"{c}_score"' for c in CRITERIA)
    return f"""{VERIFIER_ROLE}

Judge one question-answer pair written from a person's camera record. The record's events
that matter for it are listed below (found by search, and those its spans cite); judge against
them, not against what you imagine. {_TIMES}

Score each criterion from 0 to 1 (1: fully meets it, 0.7: minor issue, 0.3: serious issue, 0:
fails), with your reasoning first:
- factual_correctness: the correct choice and the evidence agree with the record's events; for
  an unanswerable pair, the record really does not hold the answer.
- objective_correctness: the question is clear and has exactly one defensible answer among the
  choices; the correct / vague / incorrect roles are right.
- causal_answerability: the evidence comes before the question's moment and is enough to
  answer it then (the code's check: {causality}).
- naturalness: the wearer could really ask this, in these words, at that moment.
Also say whether the answer can be guessed without memory (is_guessable: a choice stands out
by length, detail or wording, or a choice is absurd), whether it contains personal identifiers
(contains_pii), whether a rewrite could fix what is wrong (is_salvageable), and what to change
(suggestions: short imperative notes, none when it is good).

The pair:
{draft_text(draft)}

Its spans on the clock:
{spans}

Record events:
{found}

Reply with one JSON object, nothing else, with these keys in this order:
"factual_correctness_reasoning", "objective_correctness_reasoning",
"causal_answerability_reasoning", "naturalness_reasoning", "guessability_reasoning",
{scores}, "is_guessable", "contains_pii", "is_salvageable", "suggestions"."""


def enhancer_prompt(draft: QADraft, *, problems: Sequence[str], suggestions: Sequence[str],
                    ledger: str) -> str:
    """The prompt rewriting ``draft`` to fix ``problems`` (what failed, and why) following the
    verifier's ``suggestions``; ``ledger`` is the text of the pair's scope."""
    listed = "\n".join(f"- {p}" for p in problems) or "- (none named)"
    asked = "\n".join(f"- {s}" for s in suggestions) or "- (none)"
    return f"""{ENHANCER_ROLE}

A question-answer pair about a person's camera record failed its checks. Rewrite it so that it
passes: change what the problems and suggestions name, keep the rest (the skill, the kind
answerable or not, the evidence that is right).

What failed:
{listed}

Suggestions:
{asked}

{_draft_rules()}

The pair:
{draft_text(draft)}

Reply with the whole repaired pair as one JSON object, nothing else, in this shape:
{_shape()}

{ledger}"""
