"""The M3Eval prompt: the question, its options, and the required form of the final line.

Lettered questions list options one per line as ``A. text``; Yes/No questions (N-Back) list
``- Yes`` / ``- No``. The instruction names the exact final line the strict parser accepts
(``m3kit.metrics.answers``), so an answer in any other form is the model's failure to follow it.
"""

from __future__ import annotations

# The scorer and the prompt must agree on the format: one definition, in the metrics layer.
from m3kit.metrics.answers import AnswerFormat, answer_format
from m3kit.schema import Choice, Question

__all__ = ["AnswerFormat", "answer_format", "build_prompt", "frames_preamble", "prompt_template"]


def _letters_phrase(letters: list[str]) -> str:
    if len(letters) <= 1:
        return "".join(letters)
    return ", ".join(letters[:-1]) + f" or {letters[-1]}"


def build_prompt(question: Question) -> str:
    """The text asked after the frames: question, options, answer instruction."""
    if not question.choices:
        raise ValueError(f"question {question.id!r} has no options: M3Eval prompts need options")
    if answer_format(question) == "yes_no":
        options = "\n".join(f"- {c.text.strip().capitalize()}" for c in question.choices)
        instruction = (
            "Answer Yes or No. The last line of your response must be exactly "
            '"The final answer is Yes" or "The final answer is No".'
        )
    else:
        options = "\n".join(f"{c.letter}. {c.text}" for c in question.choices)
        letters = _letters_phrase(question.letters)
        instruction = (
            "Answer with the letter of one option. The last line of your response must be "
            f'exactly "The final answer is X", where X is one uppercase option letter ({letters}).'
        )
    return f"{question.text.strip()}\n{options}\n{instruction}"


def frames_preamble(count: int) -> str:
    """The line shown before the frames, so a model knows they are one video in time order."""
    return f"The following {count} images are frames sampled from the video, in time order."


def prompt_template() -> str:
    """The prompt's wording with placeholders (``{count}``, ``{question}``, ``{option A}``):
    the frames' preamble, then a four-option lettered question and a Yes/No question, as
    ``build_prompt`` writes them; its sha256 (on the reproducibility card) changes whenever the
    wording does."""
    def placeholder(choices: list[Choice]) -> Question:
        return Question(id="template", benchmark="m3eval", text="{question}", choices=choices,
                        answer="A")

    lettered = placeholder([Choice(letter=x, text=f"{{option {x}}}") for x in "ABCD"])
    yes_no = placeholder([Choice(letter="A", text="Yes"), Choice(letter="B", text="No")])
    preamble = frames_preamble(0).replace("0", "{count}", 1)
    return "\n\n".join([preamble, build_prompt(lettered), build_prompt(yes_no)])
