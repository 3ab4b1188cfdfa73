"""Ground-truth questions of M3Eval's kinds, written from the scripts (no pixel is read).

One function per question kind; each takes the probe it is asked about (``ProbeContext``: its
id, paradigm, condition, media and the sentence that tells the model how the probe is laid out)
and returns ``schema.Question`` records with every option's role.

Every kind comes in two *evidence* variants, recorded as ``metadata["evidence"]``:

- ``"text"``: about captioned beats, options worded as the captions are — on-screen text
  suffices (an OCR reader can answer);
- ``"visual"``: about silent beats, options naming colours and shapes that no caption ever names
  — only the pixels tell.

Gold letters are balanced by construction (``m3kit.synth.options.gold_position``): each function
takes ``index``, its pair's position in the suite, numbers its items of one kind (question type
and evidence variant) across the pairs, and puts item ``i``'s answer at the ``i``-th position of
a seeded cycle over the letters; Yes/No N-back answers are balanced by the trial design
(``m3kit.synth.nback``).

Metadata keys (every question): ``paradigm``, ``question_type``, ``condition``,
``target_video``, ``evidence``, ``memory_key`` (= ``probe``, the probe id: one memory per
probe), ``probe``, ``pair``, ``item`` (the same for one question asked under several
conditions), ``option_role_by_letter``, ``seed`` and the probe's layout details (``swaps``,
``order``, ``segments``). Kind-specific keys are listed on each function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.schema.media import VideoRef
from m3kit.schema.question import ChoiceRole, Question
from m3kit.synth.nback import Attribute, NBackTrial
from m3kit.synth.options import LetteredOptions, Option, gold_position, item_rng, letter_options
from m3kit.synth.phrases import present, video_label
from m3kit.synth.script import Event, Evidence, SourcePair, VideoScript
from m3kit.synth.storyline import GRID_CELLS, Family, StorylineDesign, order_grid, substitution_grid
from m3kit.synth.vocab import ACTIONS, ACTOR_COLOURS, NAMES

__all__ = [
    "BENCHMARK",
    "FALSE_SOURCE_LABELS",
    "SOURCE_MEMORY_LABELS",
    "Paradigm",
    "ProbeContext",
    "false_memory_questions",
    "interference_questions",
    "nback_questions",
    "source_memory_questions",
    "storyline_questions",
]

BENCHMARK = "m3kit-synth"
Paradigm = Literal["divided_attention", "interference", "interleaved", "nback"]
Target = Literal["video1", "video2"]

# Storyline families → M3Eval question types and the role of their wrong options.
_FAMILIES: dict[Family, tuple[str, ChoiceRole]] = {
    "source_confusion": ("source_identification", ChoiceRole.SOURCE_CONFUSION),
    "order_disruption": ("order_understanding", ChoiceRole.ORDER_DISRUPTION),
    "content_forgetting": ("content_retention", ChoiceRole.CONTENT_FORGETTING),
}
# M3Eval's option texts for source-memory and false-memory questions (the released QA files).
SOURCE_MEMORY_LABELS: tuple[str, ...] = ("Video 1", "Video 2")
FALSE_SOURCE_LABELS: tuple[str, ...] = ("Video 1", "Video 2", "Both videos", "Neither video")


class ProbeContext(BaseModel):
    """The probe a question is asked about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    paradigm: Paradigm
    condition: str
    intro: str = Field(description="how the probe video is laid out, said to the model")
    media: list[VideoRef]
    pair: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


# -- storylines (divided attention, interleaved) ----------------------------------------------


def storyline_questions(
    pair: SourcePair,
    probe: ProbeContext,
    *,
    seed: int,
    targets: tuple[Target, ...] = ("video1", "video2"),
    evidence: tuple[Evidence, ...] = ("text", "visual"),
    families: tuple[Family, ...] = ("source_confusion", "order_disruption", "content_forgetting"),
    index: int = 0,
) -> list[Question]:
    """Source identification, order understanding and content retention: "which paragraph
    describes what happened in Video X?", four options on the 2×2 grid.

    Extra metadata: ``grid_cell_by_letter`` (``"cc"`` … ``"ii"``; before shuffling A=cc, B=ic,
    C=ci, D=ii), ``storyline`` (the design: true clauses, slot positions, the correct and the
    incorrect text of each slot).
    """
    out = []
    for t, target in enumerate(targets):
        script, other = pair.script(target), pair.other(target)
        for ev in evidence:
            for family in families:
                item = f"storyline-{family}-{target}-{ev}"
                rng = item_rng(seed, pair.id, item)
                design = _storyline_design(script, other, ev, family, rng)
                if design is None:
                    continue
                qtype, wrong_role = _FAMILIES[family]
                options = [
                    Option(design.options[cell], ChoiceRole.CORRECT if cell == "cc" else wrong_role,
                           cell)
                    for cell in GRID_CELLS
                ]
                slot = index * len(targets) + t
                lettered = letter_options(
                    options, rng, gold_position(slot, len(options), seed, family, ev))
                stem = _storyline_stem(target, ev)
                out.append(_question(
                    probe, item, qtype, target, ev, stem, lettered, seed,
                    grid_cell_by_letter=lettered.tag_by_letter,
                    storyline=design.model_dump(exclude={"options"}),
                ))
    return out


def _storyline_stem(target: str, evidence: Evidence) -> str:
    video = video_label(target)
    if evidence == "text":
        return (f"Which of the following options most accurately describes what the captions of "
                f"{video} narrate?")
    return (f"Which of the following options most accurately describes what the shapes did in "
            f"{video} while no caption was on screen?")


def _storyline_design(script: VideoScript, other: VideoScript, evidence: Evidence,
                      family: Family, rng) -> StorylineDesign | None:
    events = script.channel(evidence)
    clauses = [_clause(script, e, evidence) for e in events]
    if family == "order_disruption":
        return order_grid(clauses, rng)
    if family == "source_confusion":
        # The other video's beat at the same place in the storyline: the corresponding detail.
        theirs = other.channel(evidence)
        alternatives = [_clause(other, theirs[i], evidence) if i < len(theirs) else None
                        for i in range(len(events))]
    else:
        alternatives = [_fabricated(script, other, e, evidence, rng) for e in events]
    return substitution_grid(clauses, alternatives, family, rng)


def _clause(script: VideoScript, event: Event, evidence: Evidence) -> str:
    return script.text_clause(event) if evidence == "text" else script.visual_clause(event)


def _fabricated(script: VideoScript, other: VideoScript, event: Event, evidence: Evidence,
                rng) -> str | None:
    """The beat with an action its actor never performs in this video: plausible, and absent
    from both videos (the other video's actors have other names and colours)."""
    action = _fake_action(script, other, event, evidence, rng)
    if action is None:
        return None
    return _clause(script, event.model_copy(update={"action": action}), evidence)


def _fake_action(script: VideoScript, other: VideoScript, event: Event, evidence: Evidence,
                 rng) -> str | None:
    """An action ``event``'s actor never performs in ``script``.

    For the visual variant it is also an action no caption of either video names: true silent
    actions are never captioned, so a fake one drawn from captioned actions would be told apart
    by reading the captions alone, and the variant must need the pixels.
    """
    done = {e.action for e in script.events if e.actor == event.actor}
    pool = [a for a in ACTIONS if a not in done]
    if evidence == "visual":
        captioned = {e.action for s in (script, other) for e in s.channel("text")}
        pool = [a for a in pool if a not in captioned] or pool
    return rng.choice(pool) if pool else None


# -- source memory and false memory -----------------------------------------------------------


def source_memory_questions(
    pair: SourcePair,
    probe: ProbeContext,
    *,
    seed: int,
    per_evidence: int = 2,
    evidence: tuple[Evidence, ...] = ("text", "visual"),
    index: int = 0,
) -> list[Question]:
    """"In which video does the following happen: the fox jumps in the kitchen?" — Video 1 /
    Video 2 (M3Eval's source memory: spatial in a split screen, temporal in an interleaving).
    The options keep the paper's order; the target video, so the answer's letter, follows
    ``gold_position`` over the suite's items of each evidence variant. Extra metadata:
    ``event`` (script id and beat)."""
    out = []
    for ev in evidence:
        for q in range(per_evidence):
            slot = index * per_evidence + q
            target: Target = ("video1", "video2")[gold_position(slot, 2, seed, "source_memory",
                                                               ev)]
            item = f"source_memory-{ev}-{q}"
            rng = item_rng(seed, pair.id, item)
            script = pair.script(target)
            event = rng.choice(script.channel(ev))
            stem = f"In which video does the following happen: {_clause(script, event, ev)}?"
            options = [
                Option(label,
                       ChoiceRole.CORRECT if video == target else ChoiceRole.SOURCE_CONFUSION,
                       video)
                for label, video in zip(SOURCE_MEMORY_LABELS, ("video1", "video2"), strict=True)
            ]
            out.append(_question(
                probe, item, "source_memory", target, ev, stem, letter_options(options, None),
                seed, event={"script": script.id, "beat": event.index},
            ))
    return out


def false_memory_questions(
    pair: SourcePair,
    probe: ProbeContext,
    *,
    seed: int,
    per_evidence: int = 1,
    evidence: tuple[Evidence, ...] = ("text", "visual"),
    index: int = 0,
) -> list[Question]:
    """False memory discrimination: an event that fits the videos (a real character, a real
    scene, a real action) but happened in neither; options Video 1 / Video 2 / Both videos /
    Neither video, answer "Neither video". The paper writes them in that fixed order, so its
    answer is always the last letter; here "Neither video" moves through the four positions
    (``gold_position``; the other three keep their order), so a model that favours one letter
    gains nothing. Extra metadata: ``lure_video`` (whose character the fake event borrows),
    ``fake_event``."""
    out = []
    for ev in evidence:
        for q in range(per_evidence):
            slot = index * per_evidence + q
            lure: Target = "video1" if slot % 2 == 0 else "video2"
            item = f"false_memory-{ev}-{q}"
            rng = item_rng(seed, pair.id, item)
            script = pair.script(lure)
            # A character the channel shows, so the lure is relevant: its name was on screen
            # (text) or its colour and shape were seen in a silent beat (visual).
            event = rng.choice(script.channel(ev))
            action = _fake_action(script, pair.other(lure), event, ev, rng)
            if action is None:
                continue
            fake = event.model_copy(update={"action": action})
            stem = f"In which video does the following happen: {_clause(script, fake, ev)}?"
            options = [
                Option(label, ChoiceRole.CORRECT if label == "Neither video"
                       else ChoiceRole.DISTRACTOR, label.lower().replace(" ", "_"))
                for label in FALSE_SOURCE_LABELS
            ]
            out.append(_question(
                probe, item, "false_memory_discrimination", "neither", ev, stem,
                letter_options(options, None,
                               gold_position(slot, len(options), seed, "false_memory", ev)),
                seed, lure_video=lure,
                fake_event={"actor": event.actor, "action": action, "scene": event.scene},
            ))
    return out


# -- memory interference ----------------------------------------------------------------------


def interference_questions(
    pair: SourcePair,
    probe: ProbeContext,
    *,
    seed: int,
    per_evidence: int = 2,
    target: Target = "video1",
    evidence: tuple[Evidence, ...] = ("text", "visual"),
    index: int = 0,
) -> list[Question]:
    """A fine detail of one beat of the target video: one correct, two intrusion options from
    the competing video (first the detail of its beat with the same action, when it has one),
    one irrelevant option from neither video.

    text: "In Video 1, which character jumps?" → names (captions name them);
    visual: "In Video 1, what colour is the shape that jumps?" → colours (never captioned).
    The beats asked about are chosen per pair, not per condition, so the same questions are
    asked under every concatenation order. Extra metadata: ``intrusion_letters``,
    ``irrelevant_letter``, ``event`` (script id and beat).
    """
    script, other = pair.script(target), pair.other(target)
    out = []
    for ev in evidence:
        chooser = item_rng(seed, pair.id, "interference", target, ev)
        channel = script.channel(ev)
        for j, event in enumerate(chooser.sample(channel, min(per_evidence, len(channel)))):
            item = f"interference-{target}-{ev}-beat{event.index}"
            rng = item_rng(seed, pair.id, item)
            options = _interference_options(script, other, event, ev, rng)
            slot = index * per_evidence + j
            lettered = letter_options(
                options, rng, gold_position(slot, len(options), seed, "interference", target, ev))
            # Present tense, as captions narrate: the text variant's stem shares the caption's
            # verb form, so reading the captions is enough to find the beat.
            stem = (f"In {video_label(target)}, which character {present(event.action)}?"
                    if ev == "text" else
                    f"In {video_label(target)}, what colour is the shape that "
                    f"{present(event.action)}?")
            roles = lettered.role_by_letter
            out.append(_question(
                probe, item, "memory_interference", target, ev, stem, lettered, seed,
                intrusion_letters=[k for k, r in roles.items() if r == ChoiceRole.INTRUSION],
                irrelevant_letter=next(k for k, r in roles.items()
                                       if r == ChoiceRole.IRRELEVANT_DISTRACTOR),
                option_source_by_letter=lettered.tag_by_letter,
                event={"script": script.id, "beat": event.index},
            ))
    return out


def _interference_options(script: VideoScript, other: VideoScript, event: Event,
                          evidence: Evidence, rng) -> list[Option]:
    def detail(s: VideoScript, actor_id: str) -> str:
        a = s.actor(actor_id)
        return f"the {a.name}" if evidence == "text" else a.colour

    correct = detail(script, event.actor)
    # Competitors in preference order: the other video's actor of the same action, then its
    # actors seen in this channel, then any of its actors.
    same = other.event_with_action(event.action)
    ranked = ([same.actor] if same is not None else []) + \
        rng.sample([e.actor for e in other.channel(evidence)], len(other.channel(evidence))) + \
        rng.sample([a.id for a in other.actors], len(other.actors))
    intrusions: list[tuple[str, str]] = []
    for actor_id in ranked:
        text = detail(other, actor_id)
        if text != correct and text not in [t for t, _ in intrusions]:
            tag = "competitor_same_action" if same is not None and actor_id == same.actor \
                else "competitor_other"
            intrusions.append((text, tag))
        if len(intrusions) == 2:
            break
    used = {detail(s, a.id) for s in (script, other) for a in s.actors}
    pool = [f"the {n}" for n in NAMES] if evidence == "text" else list(ACTOR_COLOURS)
    irrelevant = rng.choice([x for x in pool if x not in used])
    return [
        Option(correct, ChoiceRole.CORRECT, "target"),
        *(Option(t, ChoiceRole.INTRUSION, tag) for t, tag in intrusions),
        Option(irrelevant, ChoiceRole.IRRELEVANT_DISTRACTOR, "neither"),
    ]


# -- N-back -----------------------------------------------------------------------------------


def nback_questions(
    trial: NBackTrial,
    probe: ProbeContext,
    *,
    seed: int,
    spans: Sequence[tuple[float, float]],
    attributes: tuple[Attribute, ...] = ("scene", "action"),
) -> list[Question]:
    """Yes/No: does the last clip match the clip N positions earlier on the attribute?

    ``spans`` are the clips' ``(start, end)`` seconds in the probe video. Extra metadata:
    ``n``, ``k``, ``attribute``, ``match``, ``clips`` (per clip: ``start`` and ``end`` on the
    probe's clock — the harness samples 8 frames in each — and its ``script`` id, ``scene`` and
    ``action``), ``compared_clip`` (1-based position of the clip N back).
    """
    if len(spans) != trial.k:
        raise ValueError(f"{len(spans)} clip spans for a trial of {trial.k} clips")
    out = []
    k, n = trial.k, trial.n
    earlier = k - n
    for attribute in attributes:
        match = trial.matches(attribute)
        if attribute == "scene":
            stem = (f"Does the last clip (clip {k}) take place in the same scene as clip "
                    f"{earlier}, {n} clip{'s' if n > 1 else ''} before it? Answer Yes or No.")
        else:
            stem = (f"Does the last clip (clip {k}) show the same action as clip {earlier}, "
                    f"{n} clip{'s' if n > 1 else ''} before it? Answer Yes or No.")
        options = [Option("Yes", ChoiceRole.CORRECT if match else ChoiceRole.WRONG, "yes"),
                   Option("No", ChoiceRole.WRONG if match else ChoiceRole.CORRECT, "no")]
        out.append(_question(
            probe, f"nback-{attribute}", "nback", None, trial.evidence, stem,
            letter_options(options, None), seed, n=n, k=k, attribute=attribute, match=match,
            compared_clip=earlier,
            clips=[{"start": start, "end": end, "script": c.script.id, "scene": c.scene,
                    "action": c.action}
                   for c, (start, end) in zip(trial.clips, spans, strict=True)],
        ))
    return out


# -- shared -----------------------------------------------------------------------------------


def _question(probe: ProbeContext, item: str, question_type: str, target: str | None,
              evidence: Evidence, stem: str, lettered: LetteredOptions, seed: int,
              **extra: Any) -> Question:
    metadata: dict[str, Any] = {
        "paradigm": probe.paradigm,
        "question_type": question_type,
        "condition": probe.condition,
        "target_video": target,
        "evidence": evidence,
        "memory_key": probe.id,
        "probe": probe.id,
        "pair": probe.pair,
        "item": item,
        "stem": stem,
        "option_role_by_letter": lettered.role_by_letter,
        "seed": seed,
        **probe.details,
        **extra,
    }
    return Question(
        id=f"{probe.id}/{item}",
        benchmark=BENCHMARK,
        text=f"{probe.intro} {stem}",
        choices=lettered.choices,
        answer=lettered.answer,
        question_type=question_type,
        media=list(probe.media),
        metadata=metadata,
    )
