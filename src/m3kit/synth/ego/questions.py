"""From drafts to released-layout questions: selection per person, option placement, truth.

Per person and skill ``answerable_per_skill`` answerable drafts are kept, their kinds
(``tag``) taken in turn so each skill mixes evidence from the question's own day and from
earlier days (and, with two or more, an object moved after the question); then
``unanswerable`` unanswerable drafts, taking in turn a fact after the cut in the question's
own session (the direct path's cut), a fact in a later session (the memory's cut) and a thing
never recorded.

Options (seed 003 appendix D.1): answerable — correct, vague, incorrect, and the abstain
option (incorrect); unanswerable — three incorrect and the abstain option (the gold, typed
``correct``). The gold position is balanced by construction over the whole suite (counts of
A, B, C, D differ by at most one); the other options are shuffled.
"""

from __future__ import annotations

import random
from collections import defaultdict

from pydantic import BaseModel, ConfigDict

from m3kit.schema.supermemory import (
    ABSTAIN_TEXT,
    SKILLS,
    AnswerEvidence,
    AnswerEvidenceItem,
    ChoiceType,
    LocalSpan,
    QAMetadata,
    QARecord,
    QuestionEvidence,
    QuestionSpan,
)
from m3kit.synth.ego.config import EgoSuiteConfig
from m3kit.synth.ego.drafts import Draft, person_drafts
from m3kit.synth.ego.world import PersonWorld

__all__ = ["QuestionTruth", "TruthSpan", "select_drafts", "suite_questions"]

_RECORD = ConfigDict(extra="forbid", frozen=True)
_UNANSWERABLE_TAGS = ("post_cut_same_session", "post_cut_later_session", "never_seen")


class TruthSpan(BaseModel):
    """A span on the person's absolute clock (unix seconds) and in its session."""

    model_config = _RECORD

    video_id: str
    start: float
    end: float
    start_unix: float
    end_unix: float


class QuestionTruth(BaseModel):
    """What the released record does not say: the draft's kind, the question time, the
    evidence on the absolute clock and, for a fact after the cut, where it is and which
    option a leak would pick."""

    model_config = _RECORD

    question_id: int
    subject: int
    skill: str
    tag: str
    is_answerable: bool
    question_time_unix: float
    evidence: list[TruthSpan]
    leak: TruthSpan | None = None
    leak_option_index: int | None = None


def select_drafts(drafts: list[Draft], config: EgoSuiteConfig, rng: random.Random) -> list[Draft]:
    """The drafts a person keeps (see the module doc)."""
    kept: list[Draft] = []
    for skill in SKILLS:
        pool = [d for d in drafts if d.answerable and d.skill == skill]
        # With two or more a skill, an object moved after the question is among them.
        first = (("moved_after_cut",) if skill == "object_location_memory"
                 and config.answerable_per_skill >= 2 else ())
        kept += _in_turn(pool, first, config.answerable_per_skill, rng, vary_skill=False)
    pool = [d for d in drafts if not d.answerable]
    kept += _in_turn(pool, _UNANSWERABLE_TAGS, config.unanswerable, rng, vary_skill=True)
    return sorted(kept, key=lambda d: (d.ask.cut_unix, d.skill, d.question))


def _in_turn(pool: list[Draft], first: tuple[str, ...], k: int, rng: random.Random, *,
             vary_skill: bool) -> list[Draft]:
    """Up to ``k`` drafts, one tag at a time (``first`` tags first, then the others in a
    seeded order), preferring skills not taken yet when ``vary_skill``."""
    by_tag: dict[str, list[Draft]] = defaultdict(list)
    for d in pool:
        by_tag[d.tag].append(d)
    for group in by_tag.values():
        rng.shuffle(group)
    rest = sorted(set(by_tag) - set(first))
    rng.shuffle(rest)
    order = [t for t in first if t in by_tag] + rest
    taken: list[Draft] = []
    while len(taken) < k and any(by_tag[t] for t in order):
        for tag in order:
            if len(taken) >= k or not by_tag[tag]:
                continue
            group = by_tag[tag]
            used = {d.skill for d in taken}
            pick = next((d for d in group if not vary_skill or d.skill not in used), group[0])
            group.remove(pick)
            taken.append(pick)
    return taken


def suite_questions(worlds: list[PersonWorld], config: EgoSuiteConfig
                    ) -> tuple[list[QARecord], list[QuestionTruth]]:
    """The records of ``all_qa.json`` and their truth, ids numbered from 1."""
    rng = random.Random(f"m3kit-ego-questions:{config.seed}")
    chosen: list[tuple[PersonWorld, Draft]] = []
    for world in worlds:
        drafts = person_drafts(world, random.Random(f"m3kit-ego-drafts:{config.seed}:"
                                                     f"{world.subject}"))
        chosen += [(world, d) for d in select_drafts(drafts, config, rng)]
    golds = [n % 4 for n in range(len(chosen))]
    rng.shuffle(golds)
    records, truths = [], []
    for qid, ((world, draft), gold) in enumerate(zip(chosen, golds, strict=True), start=1):
        record, truth = _record(qid, world, draft, gold, rng)
        records.append(record)
        truths.append(truth)
    return records, truths


def _record(qid: int, world: PersonWorld, draft: Draft, gold: int,
            rng: random.Random) -> tuple[QARecord, QuestionTruth]:
    if draft.correct is not None and draft.vague is not None:  # answerable
        gold_option: tuple[str, ChoiceType] = (draft.correct, "correct")
        others: list[tuple[str, ChoiceType]] = [
            (draft.vague, "vague"), (draft.wrong[0], "incorrect"), (ABSTAIN_TEXT, "incorrect")]
    else:
        gold_option = (ABSTAIN_TEXT, "correct")
        others = [(w, "incorrect") for w in draft.wrong[:3]]
    rng.shuffle(others)
    options = others[:gold] + [gold_option] + others[gold:]
    choices = [text for text, _ in options]
    if len(set(choices)) != 4:
        raise ValueError(f"question {qid}: options repeat: {choices}")
    ask = draft.ask
    session = world.session(ask.video_id)
    evidence_videos = [v for v, _ in draft.evidence]
    video_ids = sorted({ask.video_id, *evidence_videos},
                       key=lambda v: world.session(v).start_unix)
    record = QARecord(
        question_id=qid, subject=world.subject, question=draft.question, choices=choices,
        choice_types=[t for _, t in options], correct_answer=gold_option[0],
        correct_option_index=gold, is_answerable=draft.answerable,
        metadata=QAMetadata(skill=draft.skill, primary_video_id=ask.video_id,
                            primary_video_start_time=session.start_unix),
        video_ids=video_ids, start_time=session.start_unix,
        question_evidence=QuestionEvidence(time_spans=[QuestionSpan(
            start_time=ask.start, end_time=ask.end, video_id=ask.video_id,
            video_start_time_unix=session.start_unix)]),
        answer_evidence=AnswerEvidence(
            evidence_list=[AnswerEvidenceItem(video_id=v, time_span=LocalSpan(
                start_time=s.start, end_time=s.end)) for v, s in draft.evidence],
            text=draft.evidence_text),
    )
    leak = None
    if draft.leak is not None:
        leak = TruthSpan(video_id=draft.leak.video_id, start=draft.leak.span.start,
                         end=draft.leak.span.end,
                         start_unix=draft.leak.start_unix + draft.leak.span.start,
                         end_unix=draft.leak.start_unix + draft.leak.span.end)
    truth = QuestionTruth(
        question_id=qid, subject=world.subject, skill=draft.skill, tag=draft.tag,
        is_answerable=draft.answerable, question_time_unix=ask.cut_unix,
        evidence=[_truth_span(world, v, s.start, s.end) for v, s in draft.evidence],
        leak=leak,
        leak_option_index=choices.index(draft.leak.option) if draft.leak else None)
    return record, truth


def _truth_span(world: PersonWorld, video_id: str, start: float, end: float) -> TruthSpan:
    base = world.session(video_id).start_unix
    return TruthSpan(video_id=video_id, start=start, end=end, start_unix=base + start,
                     end_unix=base + end)
