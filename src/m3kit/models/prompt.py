"""Reading a benchmark prompt as text: the question, the lettered options, the answer format.

Pure functions over strings, used by the builtin text-surrogate provider. Prompts differ by
benchmark, so the rules are few and explicit:

- options: lines ``A. text`` / ``A) text`` / ``(A) text`` / ``A: text`` (letters A-H, in order
  from A; the last such block wins), or ``- Yes`` / ``- No`` bullets;
- the question: the last line with a ``?`` before the options (else the last plain line);
- the answer format the prompt asks for, checked in this order: ``ANSWER: $LETTER`` (inspect's
  ``multiple_choice``), ``The final answer is X`` (M3Eval), ``Final Answer: X``, the letter alone
  (Video-MME-v2: "answer with the option's letter"), else ``The final answer is X``; before
  them all, a ranking of every option (``Ranking: B > D > A > C``, SuperMemory-VQA);
- everything else in the prompt that is not an instruction is context (transcripts, retrieved
  memory) and counts as evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_OPTION = re.compile(
    r"^\s*(?:option\s+)?(?:\(([A-H])\)|([A-H])\s*[.)\]:：])\s*(\S.*?)\s*$", re.IGNORECASE
)
_YES_NO_BULLET = re.compile(r"^\s*[-*•]\s*(yes|no)\s*\.?\s*$", re.IGNORECASE)
_HEADER = re.compile(
    r"^\s*(options|choices|candidates|answer choices)\s*[:：]?\s*$", re.IGNORECASE
)
_QUESTION_LABEL = re.compile(r"^\s*(question|q|query)\s*[:：.]\s*", re.IGNORECASE)

# Lines that tell the model what to do rather than what happened. Only the prompt's own lines
# are tested (the last user message and the system message), never conversation history.
_INSTRUCTION = re.compile(
    r"(^\s*(please\s+)?(answer|respond|reply|select|choose|pick|output|return|provide|give|"
    r"format|think|only|do not|don't|note\b|instruction|your (final )?(answer|response)|"
    r"the (entire )?(content|final answer)|end your|make sure|you (are|will|must|should)|"
    r"the following \d* ?(images|frames)))"
    r"|final answer|the letter|letter only|option'?s letter|\$letter|\$answer|yes or no|yes/no",
    re.IGNORECASE,
)

_ABSTAIN = re.compile(
    r"\b(neither|none of (the )?(above|these|them|options|the options)|n/?a\b|"
    r"not (mentioned|applicable|answerable|enough|sure|shown|visible|stated|possible|"
    r"determinable|known|specified|provided|given|present)|"
    r"can ?not (be )?(determined|answered|tell|know|say)|"
    r"can'?t (be )?(determined|answered|tell|say)|"
    r"(i )?(do not|don'?t) know|unanswerable|no (answer|information|evidence|mention)|"
    r"insufficient|unclear from|no way to (tell|know))",
    re.IGNORECASE,
)


class FormatKind(StrEnum):
    """Which answer template a prompt asks for."""

    ANSWER_COLON = "answer_colon"  # "ANSWER: X" (inspect's multiple_choice template)
    FINAL_ANSWER_IS = "final_answer_is"  # "The final answer is X" (M3Eval)
    FINAL_ANSWER_COLON = "final_answer_colon"  # "Final Answer: X"
    BARE = "bare"  # the letter (or word) alone (Video-MME-v2)
    RANKING = "ranking"  # "Ranking: B > D > A > C", every option best first (SuperMemory-VQA)


@dataclass(frozen=True)
class AnswerFormat:
    """The answer template, and whether the prompt asked for it or it is the default."""

    kind: FormatKind
    explicit: bool

    def render(self, answer: str) -> str:
        """The completion for ``answer`` (a letter, Yes/No, or a free-form span)."""
        match self.kind:
            case FormatKind.ANSWER_COLON:
                return f"ANSWER: {answer}"
            case FormatKind.FINAL_ANSWER_IS:
                return f"The final answer is {answer}"
            case FormatKind.FINAL_ANSWER_COLON:
                return f"Final Answer: {answer}"
            case FormatKind.RANKING:
                return f"Ranking: {answer}"
            case _:
                return answer


@dataclass(frozen=True)
class Option:
    """One option of the prompt. ``letter`` is None for bulleted Yes/No options."""

    letter: str | None
    text: str
    abstain: bool

    @property
    def label(self) -> str:
        """What the answer names: the letter, or the text of an unlettered option."""
        return self.letter if self.letter is not None else self.text


@dataclass(frozen=True)
class ParsedPrompt:
    """What the builtin provider reads from a prompt."""

    question: str
    options: tuple[Option, ...]
    yes_no: bool  # the options (or, without options, the instructions) are Yes / No
    answer_format: AnswerFormat
    context: tuple[str, ...]  # prompt lines that are evidence, not question/options/instructions

    @property
    def multiple_choice(self) -> bool:
        return bool(self.options)


def parse_prompt(prompt: str, instructions: str = "") -> ParsedPrompt:
    """Parse the last user message's text; ``instructions`` (the system message) only informs
    the answer format and the Yes/No mode."""
    lines = prompt.splitlines()
    block = _option_block(lines)
    options: tuple[Option, ...] = ()
    yes_no = False
    used: set[int] = set()
    if block is not None:
        options = tuple(
            Option(letter=letter, text=text, abstain=is_abstain(text)) for _, letter, text in block
        )
        used = {n for n, _, _ in block}
        yes_no = {o.text.lower().rstrip(".") for o in options} == {"yes", "no"}
    else:
        bullets = [(n, m.group(1).capitalize()) for n, line in enumerate(lines)
                   if (m := _YES_NO_BULLET.match(line))]
        if {word for _, word in bullets} == {"Yes", "No"}:
            options = tuple(Option(letter=None, text=word, abstain=False) for _, word in bullets)
            used = {n for n, _ in bullets}
            yes_no = True

    first_option = min(used) if used else len(lines)
    question_at = _question_line(lines, used, first_option)
    question = "" if question_at is None else _QUESTION_LABEL.sub("", lines[question_at]).strip()
    context = tuple(
        line.strip() for n, line in enumerate(lines)
        if n not in used and n != question_at and line.strip()
        and not is_instruction(line) and not _HEADER.match(line)
    )
    text = f"{instructions}\n{prompt}"
    if not options and re.search(r"\byes or no\b|\byes/no\b", text, re.IGNORECASE):
        yes_no = True
    return ParsedPrompt(
        question=question, options=options, yes_no=yes_no,
        answer_format=detect_format(text), context=context,
    )


def detect_format(text: str) -> AnswerFormat:
    """The answer template the text asks for (``FINAL_ANSWER_IS``, not explicit, when none)."""
    if re.search(r"ranking\s*:\s*\(?[A-H]\)?\s*>", text, re.IGNORECASE):
        return AnswerFormat(FormatKind.RANKING, True)
    if re.search(r"ANSWER\s*:\s*\$", text):
        return AnswerFormat(FormatKind.ANSWER_COLON, True)
    if re.search(r"the final answer is", text, re.IGNORECASE):
        return AnswerFormat(FormatKind.FINAL_ANSWER_IS, True)
    if re.search(r"final answer\s*:", text, re.IGNORECASE):
        return AnswerFormat(FormatKind.FINAL_ANSWER_COLON, True)
    if re.search(
        r"option'?s letter|letter of (the|your)|(only|just|single)\b[^.\n]{0,40}\bletter|"
        r"letter only|letter \(a|with the letter|only (answer|respond|reply) with (yes|no)|"
        r"(answer|respond|reply) (only )?with (only )?(\"?yes\"? or \"?no\"?)",
        text, re.IGNORECASE,
    ):
        return AnswerFormat(FormatKind.BARE, True)
    return AnswerFormat(FormatKind.FINAL_ANSWER_IS, False)


def is_abstain(text: str) -> bool:
    """Whether an option's text declines to answer ("Neither video", "Not mentioned", "N/A")."""
    return _ABSTAIN.search(text) is not None


def is_instruction(line: str) -> bool:
    """Whether a prompt line is an instruction to the model rather than content."""
    return _INSTRUCTION.search(line) is not None


def _option_block(lines: list[str]) -> list[tuple[int, str, str]] | None:
    """The last run of lettered lines A, B, C, ... (at least two), blank lines allowed between."""
    blocks: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    for n, line in enumerate(lines):
        match = _OPTION.match(line)
        if match:
            letter = (match.group(1) or match.group(2)).upper()
            expected = chr(ord("A") + len(current))
            if letter == expected:
                current.append((n, letter, match.group(3)))
                continue
            if letter == "A":
                blocks.append(current)
                current = [(n, letter, match.group(3))]
                continue
        if line.strip():
            blocks.append(current)
            current = []
    blocks.append(current)
    found = [block for block in blocks if len(block) >= 2]
    return found[-1] if found else None


def _question_line(lines: list[str], used: set[int], first_option: int) -> int | None:
    """The line holding the question: the last '?' line before the options (any line when
    there are none), else the last plain line before them."""
    candidates = [
        n for n, line in enumerate(lines)
        if n not in used and line.strip() and not _HEADER.match(line)
        and (not is_instruction(line) or "?" in line)
    ]
    before = [n for n in candidates if n < first_option]
    pool = before or candidates
    asked = [n for n in pool if "?" in lines[n]]
    if asked:
        return asked[-1]
    plain = [n for n in pool if not is_instruction(lines[n])]
    return plain[-1] if plain else None
