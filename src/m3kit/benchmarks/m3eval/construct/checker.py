"""The deterministic design checker for generated M3Eval items.

M3Eval's question prompts (paper, Appendix C.1.3) ask the model to build each item to an exact
design and to report that design (``storyline_2x2_design`` anchors, ``option_role_by_letter``,
``intrusion_option_letter``) "so a checker can verify" it. This module is that checker. It reads
the draft as the model returned it (option A the correct one, before any shuffle) and rejects
every draft that breaks its design; nothing here is a judgement call, every rule is a string test.

Rules (``Violation.rule``):

- ``option_count``: four options (source memory: two), lettered A, B, ... in order.
- ``distinct_options``: no two option texts equal (whitespace and case ignored).
- ``role_map``: ``option_role_by_letter`` names every letter once with the roles the design
  prescribes (storyline: A=correct, B/C/D=the error family; interference: one correct, two
  intrusion, one irrelevant_distractor; source memory: A=video1_only, B=video2_only).
- ``answer``: a stated answer letter is the correct one (A for storylines before the shuffle).
- ``target``: ``target_video`` is one the design allows; the storyline stem names that video.
- ``anchors``: 2×2 swap-in designs (source_confusion, content_forgetting): each slot's correct
  anchor is verbatim present exactly once where that slot is correct and absent where it is
  incorrect, and the other way round for its incorrect anchor.
- ``slot_grid``: B differs from A only at slot 1, C only at slot 2, D at both: putting the
  correct anchors back into B, C, D gives A character for character.
- ``slot_overlap``: the four anchors are distinct, none inside another, and the two slots do not
  overlap in A.
- ``order_swap``: order_disruption: each slot's incorrect order is its correct order reversed,
  every option holds each of the four clauses exactly once, the order of each slot follows the
  grid, the two clauses of a slot sit in one sentence, and B, C, D are A with exactly those
  clauses exchanged in place.
- ``intrusion_letter``: ``intrusion_option_letter`` is one of the intrusion letters.
- ``source_labels``: source memory options are exactly "Video 1", "Video 2"; false source
  attribution options are exactly Video 1 / Video 2 / Both videos / Neither video.
- ``absent_detail``: where captions are given, a detail designed to be in neither video
  (content_forgetting's incorrect anchors, false source's ``stem_anchor``) is not in them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, field_validator

from m3kit.synth.questions import FALSE_SOURCE_LABELS, SOURCE_MEMORY_LABELS

__all__ = [
    "FAILURE_MODES",
    "STORYLINE_MODES",
    "CheckResult",
    "DraftItem",
    "FailureMode",
    "OrderSlot",
    "SwapSlot",
    "Violation",
    "check_item",
]

FailureMode = Literal[
    "source_confusion",
    "order_disruption",
    "content_forgetting",
    "false_source_attribution",
    "memory_interference",
    "source_memory",
]
FAILURE_MODES: tuple[FailureMode, ...] = get_args(FailureMode)
STORYLINE_MODES: tuple[FailureMode, ...] = (
    "source_confusion", "order_disruption", "content_forgetting")

_GRID = {"A": (True, True), "B": (False, True), "C": (True, False), "D": (False, False)}
_STEM = re.compile(
    r"which of the following options most accurately describes what happened in video\s*(\d)",
    re.IGNORECASE,
)
# A sentence ends at . ! ? followed by whitespace; the two clauses of an order slot must not
# straddle one (the prompt: "reverse the two clauses inside the same local sentence window").
_SENTENCE_END = re.compile(r"[.!?](\s|$)")


class SwapSlot(BaseModel):
    """A 2×2 slot of the swap-in designs: the true detail and the wrong one put in its place."""

    correct: str
    incorrect: str


class OrderSlot(BaseModel):
    """An order_disruption slot: two clauses in true order, and the same two reversed."""

    correct_anchors: list[str]
    incorrect_anchors: list[str]


class DraftItem(BaseModel):
    """One generated item as the model designed it (option A correct, before the shuffle)."""

    failure_mode: FailureMode
    question: str
    options: dict[str, str]  # letter -> option text without the "A. " prefix
    option_role_by_letter: dict[str, str] = Field(default_factory=dict)
    target_video: str = ""
    answer: str | None = None
    slot_1: SwapSlot | OrderSlot | None = None
    slot_2: SwapSlot | OrderSlot | None = None
    intrusion_option_letter: str | None = None
    stem_anchor: str | None = None  # false source: the detail that is in neither video

    @field_validator("options", mode="before")
    @classmethod
    def _options_from_list(cls, value: Any) -> Any:
        """Accept the released ``["A. text", ...]`` list as well as a letter -> text map."""
        if isinstance(value, list):
            out: dict[str, str] = {}
            for i, raw in enumerate(value):
                text = str(raw)
                m = re.match(r"^\s*([A-Z])[.)]\s*(.*)$", text, re.DOTALL)
                letter, body = (m.group(1), m.group(2)) if m else (chr(65 + i), text)
                out[letter if letter not in out else chr(65 + i)] = body.strip()
            return out
        return value


class Violation(BaseModel):
    rule: str
    message: str


class CheckResult(BaseModel):
    violations: list[Violation] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def rules(self) -> set[str]:
        return {v.rule for v in self.violations}

    def summary(self) -> str:
        return "ok" if self.ok else "; ".join(f"{v.rule}: {v.message}" for v in self.violations)


def check_item(item: DraftItem, *, captions: Mapping[str, str] | None = None) -> CheckResult:
    """Every violation of ``item``'s design; an empty result means the item passes.

    ``captions`` maps ``video1`` / ``video2`` to all caption text of that video; when given, the
    details designed to be absent from both videos are checked against it.
    """
    out: list[Violation] = []

    def bad(rule: str, message: str) -> None:
        out.append(Violation(rule=rule, message=message))

    mode = item.failure_mode
    want = 2 if mode == "source_memory" else 4
    letters = [chr(65 + i) for i in range(want)]
    if sorted(item.options) != letters:
        bad("option_count", f"options are {sorted(item.options)}, the design needs {letters}")
        return CheckResult(violations=out)  # every later rule reads options by letter
    texts = [item.options[k] for k in letters]
    norm = [_norm(t) for t in texts]
    if any(not t for t in norm):
        bad("distinct_options", "an option is empty")
    if len(set(norm)) != len(norm):
        bad("distinct_options", "two options have the same text")

    if mode in STORYLINE_MODES:
        _check_storyline(item, bad)
        if mode == "order_disruption":
            _check_order(item, bad)
        else:
            _check_swap(item, bad, captions)
    elif mode == "memory_interference":
        _check_interference(item, bad)
    elif mode == "source_memory":
        _check_source_memory(item, bad)
    else:
        _check_false_source(item, bad, captions)
    return CheckResult(violations=out)


# -- per design ----------------------------------------------------------------------------


def _check_storyline(item: DraftItem, bad: Any) -> None:
    roles = item.option_role_by_letter
    expected = {"A": "correct", "B": item.failure_mode, "C": item.failure_mode,
                "D": item.failure_mode}
    if roles != expected:
        bad("role_map", f"option_role_by_letter is {roles}, the design needs {expected}")
    if item.answer is not None and item.answer != "A":
        bad("answer", f"answer is {item.answer!r}; option A is the correct one before shuffling")
    if item.target_video not in ("video1", "video2"):
        bad("target", f"target_video {item.target_video!r} is not video1 or video2")
    m = _STEM.search(item.question)
    if m is None:
        bad("target", "the stem does not ask which option describes what happened in Video X")
    elif item.target_video in ("video1", "video2") and f"video{m.group(1)}" != item.target_video:
        bad("target", f"the stem asks about Video {m.group(1)}, target_video is "
                      f"{item.target_video}")


def _check_swap(item: DraftItem, bad: Any, captions: Mapping[str, str] | None) -> None:
    s1, s2 = item.slot_1, item.slot_2
    if not isinstance(s1, SwapSlot) or not isinstance(s2, SwapSlot):
        bad("anchors", "storyline_2x2_design needs slot_1 and slot_2 with correct/incorrect")
        return
    anchors = [s1.correct, s1.incorrect, s2.correct, s2.incorrect]
    if any(not a.strip() for a in anchors):
        bad("anchors", "an anchor is empty")
        return
    if _nested(anchors):
        bad("slot_overlap", "the four anchors must be distinct and none inside another")
        return
    a_text = item.options["A"]
    for letter, (ok1, ok2) in _GRID.items():
        text = item.options[letter]
        for slot_no, slot, ok in ((1, s1, ok1), (2, s2, ok2)):
            present, absent = (slot.correct, slot.incorrect) if ok else (slot.incorrect,
                                                                          slot.correct)
            n = text.count(present)
            if n != 1:
                bad("anchors", f"option {letter}: slot {slot_no} anchor {present!r} occurs {n} "
                               "times, the design needs exactly 1")
            if absent in text:
                bad("anchors", f"option {letter}: slot {slot_no} anchor {absent!r} must be absent")
    i1, i2 = a_text.find(s1.correct), a_text.find(s2.correct)
    if i1 >= 0 and i2 >= 0 and _spans_overlap(i1, len(s1.correct), i2, len(s2.correct)):
        bad("slot_overlap", "slot 1 and slot 2 overlap in option A")
    restored = {
        "B": item.options["B"].replace(s1.incorrect, s1.correct),
        "C": item.options["C"].replace(s2.incorrect, s2.correct),
        "D": item.options["D"].replace(s1.incorrect, s1.correct).replace(s2.incorrect,
                                                                         s2.correct),
    }
    where = {"B": "slot 1", "C": "slot 2", "D": "slots 1 and 2"}
    for letter, text in restored.items():
        if text != a_text:
            bad("slot_grid", f"option {letter} differs from A outside {where[letter]}")
    if item.failure_mode == "content_forgetting" and captions:
        for slot_no, slot in ((1, s1), (2, s2)):
            for video, text in captions.items():
                if _norm(slot.incorrect) in _norm(text):
                    bad("absent_detail", f"slot {slot_no}'s fabricated detail "
                                         f"{slot.incorrect!r} appears in {video}'s captions")


def _check_order(item: DraftItem, bad: Any) -> None:
    s1, s2 = item.slot_1, item.slot_2
    if not isinstance(s1, OrderSlot) or not isinstance(s2, OrderSlot):
        bad("order_swap", "storyline_2x2_design needs slot_1 and slot_2 with ordered anchors")
        return
    for no, slot in ((1, s1), (2, s2)):
        if len(slot.correct_anchors) != 2 or any(not c.strip() for c in slot.correct_anchors):
            bad("order_swap", f"slot {no} needs exactly two non-empty clauses")
            return
        if slot.incorrect_anchors != list(reversed(slot.correct_anchors)):
            bad("order_swap", f"slot {no}'s incorrect order is not its two clauses reversed")
            return
    clauses = [*s1.correct_anchors, *s2.correct_anchors]
    if _nested(clauses):
        bad("slot_overlap", "the four anchor clauses must be distinct and none inside another")
        return
    for letter, text in item.options.items():
        for clause in clauses:
            n = text.count(clause)
            if n != 1:
                bad("order_swap", f"option {letter}: clause {clause!r} occurs {n} times, "
                                  "the design needs exactly 1")
    a_text = item.options["A"]
    if any(a_text.count(c) != 1 for c in clauses):
        return  # already reported; positions are undefined
    for letter, (ok1, ok2) in _GRID.items():
        text = item.options[letter]
        if any(text.count(c) != 1 for c in clauses):
            continue
        for no, slot, ok in ((1, s1, ok1), (2, s2, ok2)):
            x, y = slot.correct_anchors
            if (text.index(x) < text.index(y)) != ok:
                bad("order_swap", f"option {letter}: slot {no} is in the "
                                  f"{'reversed' if ok else 'true'} order, the grid needs the "
                                  f"{'true' if ok else 'reversed'} one")
    windows = []
    for no, slot in ((1, s1), (2, s2)):
        x, y = slot.correct_anchors
        lo, hi = a_text.index(x), a_text.index(y) + len(y)
        if lo >= hi - len(y):
            continue  # order already reported
        if _SENTENCE_END.search(a_text[lo + len(x):hi - len(y)]):
            bad("order_swap", f"slot {no}'s two clauses are in different sentences of A")
        windows.append((lo, hi))
    if len(windows) == 2 and _spans_overlap(windows[0][0], windows[0][1] - windows[0][0],
                                            windows[1][0], windows[1][1] - windows[1][0]):
        bad("slot_overlap", "slot 1 and slot 2 overlap in option A")
    slot1_swapped = _swap(a_text, s1.correct_anchors)
    expected = {
        "B": slot1_swapped,
        "C": _swap(a_text, s2.correct_anchors),
        "D": (_swap(slot1_swapped, s2.correct_anchors) if slot1_swapped is not None
              else None),
    }
    where = {"B": "slot 1", "C": "slot 2", "D": "slots 1 and 2"}
    for letter, swapped in expected.items():
        if swapped is not None and item.options[letter] != swapped:
            bad("order_swap", f"option {letter} is not A with {where[letter]} swapped in place")


def _check_interference(item: DraftItem, bad: Any) -> None:
    roles = item.option_role_by_letter
    counts = {r: sum(1 for v in roles.values() if v == r)
              for r in ("correct", "intrusion", "irrelevant_distractor")}
    if sorted(roles) != sorted(item.options) or counts != {
        "correct": 1, "intrusion": 2, "irrelevant_distractor": 1
    }:
        bad("role_map", f"option_role_by_letter is {roles}; the design needs every letter with "
                        "one correct, two intrusion and one irrelevant_distractor")
    correct = [k for k, v in roles.items() if v == "correct"]
    if item.answer is not None and correct and item.answer != correct[0]:
        bad("answer", f"answer {item.answer!r} is not the correct option {correct[0]!r}")
    intrusions = sorted(k for k, v in roles.items() if v == "intrusion")
    if item.intrusion_option_letter not in intrusions:
        bad("intrusion_letter", f"intrusion_option_letter {item.intrusion_option_letter!r} is "
                                f"not one of the intrusion letters {intrusions}")
    if item.target_video not in ("video1", "video2"):
        bad("target", f"target_video {item.target_video!r} is not video1 or video2")


def _check_source_memory(item: DraftItem, bad: Any) -> None:
    if [item.options[k] for k in ("A", "B")] != list(SOURCE_MEMORY_LABELS):
        bad("source_labels", "source memory options must be exactly 'Video 1', 'Video 2'")
    expected = {"A": "video1_only", "B": "video2_only"}
    if item.option_role_by_letter != expected:
        bad("role_map", f"option_role_by_letter is {item.option_role_by_letter}, the design "
                        f"needs {expected}")
    if item.target_video not in ("video1", "video2"):
        bad("target", f"target_video {item.target_video!r} is not video1 or video2")
    elif item.answer is not None and item.answer != {"video1": "A", "video2": "B"}[
        item.target_video
    ]:
        bad("answer", f"answer {item.answer!r} does not name target {item.target_video}")


def _check_false_source(item: DraftItem, bad: Any, captions: Mapping[str, str] | None) -> None:
    by_label = {_norm(t): k for k, t in item.options.items()}
    if sorted(by_label) != sorted(_norm(t) for t in FALSE_SOURCE_LABELS):
        bad("source_labels", "options must be exactly Video 1 / Video 2 / Both videos / "
                             "Neither video")
    if item.target_video != "neither":
        bad("target", f"target_video is {item.target_video!r}; a false source item targets "
                      "'neither'")
    neither = by_label.get(_norm("Neither video"))
    if item.answer is not None and neither is not None and item.answer != neither:
        bad("answer", f"answer {item.answer!r} is not the 'Neither video' option {neither!r}")
    if item.option_role_by_letter and neither is not None and (
        item.option_role_by_letter.get(neither) != "correct"
        or sum(v == "correct" for v in item.option_role_by_letter.values()) != 1
    ):
        bad("role_map", "only the 'Neither video' option may be correct")
    if captions and item.stem_anchor:
        for video, text in captions.items():
            if _norm(item.stem_anchor) in _norm(text):
                bad("absent_detail", f"the asked-about detail {item.stem_anchor!r} appears in "
                                     f"{video}'s captions")


# -- helpers --------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _nested(anchors: list[str]) -> bool:
    """True when two anchors are equal or one contains the other (then presence is ambiguous)."""
    for i, a in enumerate(anchors):
        for j, b in enumerate(anchors):
            if i != j and (a == b or a in b):
                return True
    return False


def _spans_overlap(i: int, n: int, j: int, m: int) -> bool:
    return i < j + m and j < i + n


def _swap(text: str, clauses: list[str]) -> str | None:
    """``text`` with its two clauses exchanged in place (``None`` if they do not occur once)."""
    x, y = clauses
    if text.count(x) != 1 or text.count(y) != 1:
        return None
    ix, iy = text.index(x), text.index(y)
    if ix > iy:
        x, y, ix, iy = y, x, iy, ix
    return text[:ix] + y + text[ix + len(x):iy] + x + text[iy + len(y):]
