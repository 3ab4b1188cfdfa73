"""Free-text answer matching as M3Exam scores it (paper Appendix B.2). Pure functions, no I/O.

Two normalisations:

- *sentence* (whole-string equality): lowercase, runs of whitespace to one space, strip leading
  and trailing characters that are not letters, digits or underscore;
- *SQuAD* (token overlap): lowercase, punctuation to spaces, drop the articles a/an/the,
  split on whitespace.

Rules: graded EM ``1/2**i`` for the first answer-list entry ``i`` equal to the prediction; fj:
the same graded EM of the *whole* prediction against the gold letter, as the paper defines it
(Appendix B.2: fj is "scored under EM with a single-letter gold answer"), so ``"The answer is
C"`` scores 0 against ``C`` while ``"(c)"`` and ``"C."`` normalise to ``c`` and score 1; reading
the letter the prediction states (``fj_rule="letter"``) is m3kit's addition, an opt-in; fm with
an ``img_<n>`` gold: 1 when the
gold id is among the prediction's ids and no other candidate id of the answer list is, else 0;
fm with a text gold: 1 on a full match of any candidate, no discount; token F1 and BLEU-1 (with
brevity penalty) against the canonical ``label``, not computed for fj or image-fm items.

LoCoMo's adversarial questions (category 5, ``question_type == "5"``; M3Exam's own types are
letter codes, so the two never clash) ask about something the conversation never says. The
released evaluation (snap-research/locomo ``task_eval/evaluation.py``) credits such an item
with 1 only when the lowercased output contains ``"no information available"`` or ``"not
mentioned"``, else 0; the dataset's ``adversarial_answer`` is the trap, never the gold. m3kit
applies that rule to EM, F1 and BLEU-1 alike (kind ``"abstention"``), and no judge is asked.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ABSTENTION_PHRASES",
    "ABSTENTION_TYPE",
    "FJ_RULES",
    "AnswerScores",
    "FjRule",
    "ItemKind",
    "abstention_score",
    "bleu1",
    "extract_choice_letter",
    "fj_em",
    "fm_em",
    "graded_em",
    "image_id",
    "image_ids",
    "item_kind",
    "normalize_sentence",
    "score_text_answer",
    "squad_tokens",
    "token_f1",
]

_EDGE = re.compile(r"^\W+|\W+$")
_SPACE = re.compile(r"\s+")
_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")
_ARTICLES = frozenset({"a", "an", "the"})
# ``img_12``, ``IMG_12``, ``img_12.jpg``; the id is the number, so ``img_012`` is ``img_12``.
_IMG = re.compile(r"(?<![A-Za-z0-9])img_(\d+)(?!\d)", re.IGNORECASE)


def normalize_sentence(text: str) -> str:
    """Sentence normalisation: lowercase, collapse whitespace, strip non-word characters at the
    ends (``\\W``: anything but letters, digits and underscore)."""
    text = _SPACE.sub(" ", text.lower()).strip()
    return _EDGE.sub("", text)


def squad_tokens(text: str) -> list[str]:
    """SQuAD normalisation then whitespace tokens: lowercase, punctuation to spaces, no
    articles.

    Punctuation becomes a space (not nothing), so ``"3-4"`` is two tokens ``3`` and ``4``
    rather than ``34``.
    """
    spaced = _PUNCT.sub(" ", text.lower())
    return [tok for tok in spaced.split() if tok not in _ARTICLES]


def graded_em(prediction: str, answers: Sequence[str]) -> float:
    """``1 / 2**i`` for the first ``answers[i]`` equal to ``prediction`` after sentence
    normalisation; 0 when none is (or there are no answers)."""
    pred = normalize_sentence(prediction)
    for i, answer in enumerate(answers):
        if normalize_sentence(answer) == pred:
            return 1.0 / (2**i)
    return 0.0


def image_id(text: str) -> str | None:
    """The normalised ``img_<n>`` id ``text`` is (``"IMG_07.jpg"`` -> ``"img_7"``), or
    ``None`` when it holds no id or more than one."""
    ids = image_ids(text)
    return ids[0] if len(ids) == 1 else None


def image_ids(text: str) -> list[str]:
    """Every ``img_<n>`` id in ``text``, normalised, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in _IMG.finditer(text):
        seen.setdefault(f"img_{int(match.group(1))}", None)
    return list(seen)


def fm_em(prediction: str, answers: Sequence[str]) -> float:
    """File-matching EM.

    Gold ``answers[0]`` an image id: 1 when it is among the ids in the prediction and no other
    candidate id from ``answers`` (a hard negative) is, else 0. The released code credits a
    prediction that names any candidate; m3kit does not (a listing of every candidate would
    otherwise score 1). Gold not an image id: 1 when the prediction fully matches any answer
    (sentence-normalised), with no discount for later entries, else 0.
    """
    if not answers:
        return 0.0
    gold = image_id(answers[0])
    if gold is None:
        pred = normalize_sentence(prediction)
        return 1.0 if any(normalize_sentence(a) == pred for a in answers) else 0.0
    predicted = set(image_ids(prediction))
    negatives = {i for a in answers[1:] if (i := image_id(a)) is not None} - {gold}
    return 1.0 if gold in predicted and not (predicted & negatives) else 0.0


_LETTER_ONLY = re.compile(r"^\(?([A-Za-z])\)?$")
_LETTER_LEAD = re.compile(r"^\s*[(\[]?([A-Z])[)\].:](?:\s|$)")
# Only the keyword is case-insensitive: "the answer is a lamp" must not read as option A.
_LETTER_STATED = re.compile(r"\b(?i:answer|option|choice)\s*(?i:is|:)?\s*[(\[]?([A-Z])\b")


def extract_choice_letter(prediction: str) -> str | None:
    """The option letter a judgement (fj) answer states, uppercased, or ``None``.

    Accepted: the letter alone (``C``, ``(c)``, ``C.``), a leading ``C)`` / ``(C)`` / ``C.``
    followed by the option text, or ``answer/option/choice is C``. A stray capital inside a
    sentence is not taken as an answer.
    """
    text = prediction.strip()
    stripped = normalize_sentence(text)
    if len(stripped) == 1 and stripped.isalpha():
        return stripped.upper()
    if match := _LETTER_ONLY.match(text):
        return match.group(1).upper()
    if match := _LETTER_LEAD.match(text):
        return match.group(1)
    matches = _LETTER_STATED.findall(text)
    return matches[-1].upper() if matches else None


FjRule = Literal["exact", "letter"]
FJ_RULES: tuple[FjRule, ...] = ("exact", "letter")


def fj_em(prediction: str, answers: Sequence[str], rule: FjRule = "exact") -> float:
    """Judgement (fj) EM.

    ``"exact"`` (the paper's rule): graded EM of the whole sentence-normalised prediction, so
    only an answer that is the letter alone (``C``, ``(c)``, ``C.``) is credited. ``"letter"``
    (m3kit's addition): graded EM on the letter the prediction states
    (``extract_choice_letter``), 0 when it states none.
    """
    if rule == "exact":
        return graded_em(prediction, answers)
    if rule != "letter":
        raise ValueError(f"fj rule {rule!r} is not one of {', '.join(FJ_RULES)}")
    letter = extract_choice_letter(prediction)
    return graded_em(letter, answers) if letter is not None else 0.0


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 over multisets; 1 when both sides have no tokens, 0 when one side has
    none."""
    pred, ref = squad_tokens(prediction), squad_tokens(gold)
    if not pred or not ref:
        return 1.0 if not pred and not ref else 0.0
    overlap = sum((Counter(pred) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    """Unigram BLEU with brevity penalty (Papineni et al. 2002) against one reference.

    ``p1 = sum_w min(c_pred(w), c_ref(w)) / |pred|``; ``BP = 1`` when ``|pred| > |ref|``, else
    ``exp(1 - |ref| / |pred|)``; BLEU-1 = ``BP * p1``. Empty sides as in ``token_f1``.
    """
    pred, ref = squad_tokens(prediction), squad_tokens(gold)
    if not pred or not ref:
        return 1.0 if not pred and not ref else 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    bp = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return bp * precision


# LoCoMo's adversarial category, and the phrases its released scorer accepts as "the
# conversation does not say" (substring of the lowercased output).
ABSTENTION_TYPE = "5"
ABSTENTION_PHRASES: tuple[str, ...] = ("no information available", "not mentioned")


def abstention_score(prediction: str) -> float:
    """1 when ``prediction`` says the information is not available (contains one of
    ``ABSTENTION_PHRASES``, case-insensitive), else 0: LoCoMo's category-5 rule."""
    text = prediction.lower()
    return 1.0 if any(phrase in text for phrase in ABSTENTION_PHRASES) else 0.0


ItemKind = Literal["text", "fj", "fm_image", "fm_text", "abstention"]


def item_kind(question_type: str | None, answers: Sequence[str]) -> ItemKind:
    """Which rule family an item falls under: fj, fm with an image-id gold, fm with a text
    gold, LoCoMo's adversarial abstention, or plain text."""
    if question_type == ABSTENTION_TYPE:
        return "abstention"
    if question_type == "fj":
        return "fj"
    if question_type == "fm":
        return "fm_image" if answers and image_id(answers[0]) is not None else "fm_text"
    return "text"


class AnswerScores(BaseModel):
    """One item's lexical scores. ``f1``/``bleu1`` are ``None`` where the rule does not apply
    (fj, image fm); ``judged`` says whether an LLM judge applies to the item; ``in_total``
    whether its soft scores enter the TOTAL averages (not for any fm or fj item). An
    abstention item is not ``judged``: its judge score is the rule's score (``em``)."""

    model_config = ConfigDict(frozen=True)

    kind: ItemKind
    em: float
    f1: float | None
    bleu1: float | None
    judged: bool
    in_total: bool


def score_text_answer(
    prediction: str,
    answers: Sequence[str],
    label: str | None,
    question_type: str | None,
    fj_rule: FjRule = "exact",
) -> AnswerScores:
    """EM, F1 and BLEU-1 for one item under its type's rule (see the module docstring).

    ``label`` is the canonical gold that F1/BLEU-1/judge score against (``answers[0]`` when
    ``None``); ``fj_rule`` is how a judgement item's EM reads the prediction (``fj_em``).
    """
    kind = item_kind(question_type, answers)
    gold = label if label is not None else (answers[0] if answers else "")
    if kind == "abstention":
        value = abstention_score(prediction)
        return AnswerScores(kind=kind, em=value, f1=value, bleu1=value, judged=False,
                            in_total=True)  # fmt: skip
    if kind == "fj":
        return AnswerScores(
            kind=kind, em=fj_em(prediction, answers, fj_rule), f1=None, bleu1=None, judged=False,
            in_total=False,
        )  # fmt: skip
    if kind == "fm_image":
        return AnswerScores(
            kind=kind, em=fm_em(prediction, answers), f1=None, bleu1=None, judged=False,
            in_total=False,
        )  # fmt: skip
    em = fm_em(prediction, answers) if kind == "fm_text" else graded_em(prediction, answers)
    return AnswerScores(
        kind=kind,
        em=em,
        f1=token_f1(prediction, gold),
        bleu1=bleu1(prediction, gold),
        judged=True,
        in_total=kind == "text",
    )
