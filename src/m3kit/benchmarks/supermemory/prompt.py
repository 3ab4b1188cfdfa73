"""SuperMemory-VQA's prompt, in m3kit's words (the release ships no prompt; seed 003 §4.3 says
the models rank the four options, §4.1 that they receive the question and the four choices).

Direct: the frames of the question's session up to the question (``FRAMES_PREAMBLE``), what
was said in it up to then, the question's moment, then the question, options A-D and the
request to rank all four, ending with ``Ranking: B > D > A > C``. Blind: the question and the
options alone. Through a memory: the question block (the memory puts what it retrieved first).

What was said goes within a budget of tokens (``DEFAULT_TRANSCRIPT_TOKENS``, ``-T
transcript_tokens``): the lines heard last before the question, as many as fit
(``transcript_within``); a session's transcript can be far longer than any context.
"""

from __future__ import annotations

from collections.abc import Iterable

from m3kit.memory.context import TOKENS_PER_CHAR
from m3kit.schema import Question

__all__ = [
    "BLIND_PREAMBLE",
    "DEFAULT_TRANSCRIPT_TOKENS",
    "FRAMES_PREAMBLE",
    "RANK_INSTRUCTION",
    "TRANSCRIPT_HEADER",
    "TRANSCRIPT_META",
    "direct_text",
    "memory_text",
    "prompt_template",
    "question_block",
    "transcript_text",
    "transcript_within",
]

# The transcript a direct prompt carries at most, in estimated tokens: about 40 minutes of
# conversation, beside 32 frames in a 32k context (a 45-minute session's whole transcript).
DEFAULT_TRANSCRIPT_TOKENS = 8000
# Sample metadata: what a direct prompt carried of the transcript (lines heard by the question,
# lines kept, estimated tokens, the budget; ``timeline.RecentTranscript`` without its text).
TRANSCRIPT_META = "supermemory_transcript"

# Lines a text-surrogate model reads as instructions, not evidence, start with "The following
# ... frames", "Answer", "End your", "Note" (m3kit.models.prompt).
FRAMES_PREAMBLE = ("The following {n} frames are from your egocentric recording {session}, "
                   "oldest first, up to the moment of the question.")
BLIND_PREAMBLE = ("Answer the following question about the user's own recordings from the "
                  "question and its options alone: no recording is shown.")
TRANSCRIPT_HEADER = "What was heard in this recording up to now (time, speaker: words):"
NOW_LINE = "Note: the question is asked on {now} (UTC)."
RANK_INSTRUCTION = (
    "Answer by ranking all four options from most to least likely to be correct; choose the "
    "option saying the question can not be answered when what was recorded before the question "
    "does not support an answer.\n"
    "End your reply with one line of the form \"Ranking: B > D > A > C\" naming each letter "
    "once, best first."
)


def question_block(question: Question) -> str:
    """``Question: ...``, the options ``A. ...`` to ``D. ...``, the ranking request."""
    options = "\n".join(f"{c.letter}. {c.text}" for c in question.choices)
    return f"Question: {question.text}\n{options}\n{RANK_INSTRUCTION}"


def _line(when: str, text: str) -> str:
    return f"[{when}] {text}"


def transcript_text(lines: list[tuple[str, str]]) -> str:
    """The transcript heard so far, one ``[time] speaker: words`` line each (``lines``:
    ``(time label, text)``); empty when nothing was heard."""
    if not lines:
        return ""
    return "\n".join([TRANSCRIPT_HEADER, *(_line(when, text) for when, text in lines)])


def transcript_within(newest_first: Iterable[tuple[str, str]], budget_tokens: int
                      ) -> tuple[str, int]:
    """``transcript_text`` of the lines heard last that fit ``budget_tokens`` (estimated, header
    included), oldest first, and how many that is. ``newest_first``: ``(time label, text)``,
    the last line heard first; it is read only as far as the budget goes. The lines kept are
    the newest ones without a gap: a line that does not fit ends them."""
    budget_chars = budget_tokens / TOKENS_PER_CHAR
    used = len(TRANSCRIPT_HEADER)
    kept: list[tuple[str, str]] = []
    for when, text in newest_first:
        used += 1 + len(_line(when, text))  # the line and the newline before it
        if used > budget_chars:
            break
        kept.append((when, text))
    return transcript_text(kept[::-1]), len(kept)


def direct_text(question: Question, *, now: str | None, transcript: str, blind: bool) -> str:
    """The text after the frames: the transcript so far and the question's moment (unless
    blind), then the question block."""
    if blind:
        return f"{BLIND_PREAMBLE}\n{question_block(question)}"
    parts = [p for p in (transcript, NOW_LINE.format(now=now) if now else "") if p]
    return "\n".join([*parts, question_block(question)])


def memory_text(question: Question, *, now: str | None) -> str:
    """What a memory is asked (it puts what it retrieved first): the question's moment, then
    the question block."""
    moment = f"{NOW_LINE.format(now=now)}\n" if now else ""
    return f"{moment}{question_block(question)}"


def prompt_template(*, blind: bool, memory: bool) -> str:
    """The wording of a run's prompt with placeholders, for the reproducibility card."""
    block = f"Question: {{question}}\n{{options A-D}}\n{RANK_INSTRUCTION}"
    if blind:
        return f"{BLIND_PREAMBLE}\n{block}"
    now = NOW_LINE.replace("{now}", "{question moment}")
    if memory:
        return f"{{what the memory retrieved}}\n{now}\n{block}"
    lines = [FRAMES_PREAMBLE, "{frames}", TRANSCRIPT_HEADER, "{[time] speaker: words}", now]
    return "\n".join([*lines, block])
