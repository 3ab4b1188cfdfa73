"""Video-MME-v2's prompt, worded as the benchmark's released evaluation script words it.

After the frames (or, interleaved, after the frames and their subtitle lines) comes one text
naming what the images are (with the concatenated subtitles in that condition), then
``Question: <question>`` and the options as released, and the answer instruction: the letter
alone, or, in the reasoning variant, reasoning ending in ``Final Answer: <letter>``.
"""

from __future__ import annotations

from typing import Literal

from m3kit.schema import Question

__all__ = [
    "BLIND_PREAMBLE",
    "INSTRUCT_PROMPT",
    "SUBTITLES_ONLY_PROMPT",
    "THINK_PROMPT",
    "SubtitleMode",
    "options_text",
    "preamble",
    "prompt_template",
    "question_text",
]

SubtitleMode = Literal["none", "concat", "interleave"]

WO_SUB_PROMPT = "These are the frames of a video."
WITH_SUB_PROMPT = (
    "These are the frames of a video. This video's subtitles are listed below:\n{}\n"
)
WITH_SUB_PROMPT_INTERLEAVE = (
    "These are the frames of a video with corresponding subtitles shown between frames. "
    "The subtitles indicate what is being said during the time interval between adjacent frames."
)
# Blind mode (m3kit's, not the benchmark's): the same question with no video, said plainly so a
# model does not answer that it sees no frames.
BLIND_PREAMBLE = (
    "No video is shown. Answer the following question about a video from the question and its "
    "options alone."
)
# Subtitles without frames (``-T frames=0``; m3kit's wording): the released prompt would claim
# frames that are not there.
SUBTITLES_ONLY_PROMPT = (
    "No video frames are shown. This video's subtitles are listed below:\n{}\n"
)
THINK_PROMPT = (
    "Please perform a detailed reasoning based on the provided video frames to answer the "
    "following multiple-choice question selecting the best option from A through H and "
    "providing your final response strictly in the format: 'Final Answer: <letter>."
)
INSTRUCT_PROMPT = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, D, E, F, G, or H) of the correct option."
)


def options_text(question: Question) -> str:
    """The options as released (``metadata["options_text"]``), else ``A. text`` lines."""
    released = question.metadata.get("options_text")
    if isinstance(released, str) and released.strip():
        return released
    return "\n".join(f"{c.letter}. {c.text}" for c in question.choices)


def preamble(mode: SubtitleMode, subtitles: str = "", *, blind: bool = False,
             frames: bool = True) -> str:
    """The text after the frames: what they are, and the concatenated subtitles if any;
    ``frames=False`` (none attached): never a line about frames."""
    if blind or (not frames and mode == "none"):
        return BLIND_PREAMBLE
    if not frames:  # concat, or interleave with no frame to interleave with
        return SUBTITLES_ONLY_PROMPT.format(subtitles)
    if mode == "interleave":
        return WITH_SUB_PROMPT_INTERLEAVE
    if mode == "concat":
        return WITH_SUB_PROMPT.format(subtitles)
    return WO_SUB_PROMPT


def question_text(question: Question, *, reasoning: bool = False) -> str:
    """``Question: ...``, the options, and the answer instruction."""
    instruction = THINK_PROMPT if reasoning else INSTRUCT_PROMPT
    return f"Question: {question.text}\n{options_text(question)}\n{instruction}"


def prompt_template(mode: SubtitleMode, *, blind: bool = False, frames: bool = True,
                    reasoning: bool = False) -> str:
    """The prompt's wording for a run's settings, with placeholders (``{subtitles}``,
    ``{question}``, ``{options}``): the text after the frames, then the question and its
    instruction; its sha256 (on the reproducibility card) changes whenever the wording does."""
    question = Question(id="template", benchmark="videomme_v2", text="{question}", answer="A",
                        metadata={"options_text": "{options}"})
    return "\n\n".join([preamble(mode, "{subtitles}", blind=blind, frames=frames),
                         question_text(question, reasoning=reasoning)])
