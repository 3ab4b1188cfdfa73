"""Evidence as short text units, and the word tokens the lexical score compares.

A unit is one line of text, or one sentence of a long line, from the conversation (history,
transcripts, retrieved memory, captions) or one image's OCR. Units are what the builtin
provider scores options against and what it quotes back as the supporting span.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Long lines are split into sentences so one unit states roughly one fact.
_LONG_LINE = 160
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
# Digits apart from letters: OCR often glues them ("ROOM42"), prompts often do not.
_TOKEN = re.compile(r"[0-9]+|[^\W\d_]+")

_STOPWORDS = frozenset(
    [
        "a", "an", "the", "of", "to", "in", "on", "at", "for", "from", "by", "with", "without",
        "and", "or", "but", "nor", "so", "yet", "is", "are", "was", "were", "be", "been", "being",
        "am", "do", "does", "did", "doing", "done", "have", "has", "had", "having", "i", "me", "my",
        "mine", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "it", "its", "we",
        "us", "our", "ours", "they", "them", "their", "theirs", "this", "that", "these", "those",
        "there", "here", "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
        "whether", "if", "then", "than", "as", "into", "onto", "about", "over", "under", "after",
        "before", "during", "while", "up", "down", "out", "off", "again", "once", "all", "any",
        "both", "each", "few", "more", "most", "other", "some", "such", "only", "own", "same",
        "very", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "just",
        "also", "too", "not", "no", "yes", "s", "t", "d", "ll", "m", "re", "ve",
    ]
)


@dataclass(frozen=True)
class EvidenceUnit:
    """One piece of evidence text and where it came from (``"message 3"``, ``"image 2 (OCR)"``)."""

    text: str
    source: str


def normalise(text: str) -> str:
    """NFKC, lower case, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def tokens(text: str) -> list[str]:
    """Content-word tokens: lower-cased, stop words dropped, plural/tense endings trimmed."""
    return [_stem(t) for t in _TOKEN.findall(normalise(text)) if t not in _STOPWORDS]


def split_units(text: str, source: str) -> list[EvidenceUnit]:
    """Lines of ``text``; a line longer than ~160 characters is split into sentences."""
    units: list[EvidenceUnit] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        parts = _SENTENCE_END.split(line) if len(line) > _LONG_LINE else [line]
        units.extend(EvidenceUnit(part.strip(), source) for part in parts if part.strip())
    return units


def dedupe(units: Iterable[EvidenceUnit]) -> list[EvidenceUnit]:
    """Units with a text seen before dropped (first one kept); units without tokens dropped."""
    seen: set[str] = set()
    out = []
    for unit in units:
        key = normalise(unit.text)
        if key in seen or not tokens(unit.text):
            continue
        seen.add(key)
        out.append(unit)
    return out


def _stem(token: str) -> str:
    """A light suffix strip so "keys"/"key" and "left"/"leaving" are closer; not a real stemmer."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 5 and token.endswith("ing"):
        return token[:-3]
    if len(token) > 4 and token.endswith("ed"):
        return token[:-2]
    if len(token) > 3 and token.endswith("es") and token[-3] in "sxz":
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token
