"""Strict answer parsing, as M3Eval scores multiple-choice and Yes/No answers.

A response counts only when its answer is stated in the required form:

- lettered questions: a line ``The final answer is X`` (X one uppercase letter, optionally followed
  by one of ``. ! ? 。 ！ ？``), the last such line winning, or a response that is only the letter;
- Yes/No questions (N-Back): a line ``The final answer is Yes`` / ``... No`` (case-insensitive),
  or a response that is only ``Yes`` or ``No``.

Anything else is *invalid*, not wrong-by-guessing: a lowercase ``a``, a letter that is not one of
the options, ``**The final answer is A**`` in markdown, an empty response. Invalid answers are
scored as incorrect and counted separately, so a model that ignores the format is visible.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from pydantic import BaseModel, ConfigDict

__all__ = ["ParsedAnswer", "parse_choice", "parse_yes_no"]

_END = r"[.!?。！？]?"
_LETTER_LINE = re.compile(rf"^\s*The final answer is ([A-Z]){_END}\s*$")
_YES_NO_LINE = re.compile(rf"^\s*The final answer is (yes|no){_END}\s*$", re.IGNORECASE)
_ONLY_LETTER = re.compile(r"^[A-Z]$")
_ONLY_YES_NO = re.compile(r"^(yes|no)$", re.IGNORECASE)


class ParsedAnswer(BaseModel):
    """The answer read from a response.

    ``answer`` is the option letter (``"A"``) or ``"Yes"`` / ``"No"``; ``None`` when no answer in
    the required form was found. ``valid`` is false exactly when ``answer`` is ``None``;
    ``reason`` says why an answer is invalid (empty for a valid one).
    """

    model_config = ConfigDict(frozen=True)

    answer: str | None
    valid: bool
    reason: str = ""


def _invalid(reason: str) -> ParsedAnswer:
    return ParsedAnswer(answer=None, valid=False, reason=reason)


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for line in text.splitlines():
        match = pattern.match(line)
        if match is not None:
            found = match
    return found


def parse_choice(response: str, letters: Collection[str]) -> ParsedAnswer:
    """The option letter ``response`` states, checked against the question's ``letters``."""
    text = response.strip()
    if not text:
        return _invalid("empty response")
    if _ONLY_LETTER.match(text):
        letter = text
    else:
        match = _last_match(_LETTER_LINE, text)
        if match is None:
            return _invalid("no line 'The final answer is X' with X an uppercase letter")
        letter = match.group(1)
    if letter not in letters:
        options = ", ".join(sorted(letters))
        return _invalid(f"letter {letter} is not one of the options ({options})")
    return ParsedAnswer(answer=letter, valid=True)


def parse_yes_no(response: str) -> ParsedAnswer:
    """``"Yes"`` or ``"No"`` as ``response`` states it (case-insensitive), else invalid."""
    text = response.strip()
    if not text:
        return _invalid("empty response")
    match = _ONLY_YES_NO.match(text) or _last_match(_YES_NO_LINE, text)
    if match is None:
        return _invalid("no line 'The final answer is Yes|No'")
    return ParsedAnswer(answer=match.group(1).capitalize(), valid=True)
