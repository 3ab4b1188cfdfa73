"""The M3Exam answering prompt (paper Appendix E, "Retrieval-augmented generation").

The base template asks for a short, direct answer and is shared by every question type. For
file-matching (fm) questions, whose gold is an image file name, it adds an instruction that
names the candidate files actually attached to the context, so the model picks one of them and
cannot answer with an invented name or the literal placeholder ``img_<number>``.

The wording is m3kit's own (the released template is not reproduced); what carries over from
the paper is what each part asks for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from m3kit.schema import Attachment, Question

__all__ = [
    "ANSWER_INSTRUCTION",
    "attachment_name",
    "fm_instruction",
    "prompt_template",
    "question_prompt",
]

ANSWER_INSTRUCTION = (
    "Answer the question using the conversation history above. Reply with a short, direct "
    "answer only: a few words or a single phrase, no explanation."
)

_IMG_NAME = re.compile(r"^img_\d+$")


def attachment_name(attachment: Attachment) -> str:
    """The name a question uses for an attachment: its id (M3Exam ``img_60``), else the file
    name without its extension; PDF pages keep their id (``report.pdf#page=2``)."""
    if attachment.id:
        return attachment.id
    path = attachment.media.path
    return re.sub(r"\.[A-Za-z0-9]+$", "", path.rsplit("/", 1)[-1])


def fm_instruction(candidates: Sequence[str]) -> str:
    """The extra instruction of an fm question: answer with one of ``candidates``."""
    images = [c for c in candidates if _IMG_NAME.match(c)]
    if not images:
        return (
            "This question asks for an image file, but no image is attached above: say that "
            "you cannot tell. Do not invent a file name and never write the placeholder "
            "img_<number>."
        )
    return (
        "This question asks for an image file. Answer with exactly one of the file names "
        f"attached above, written as listed: {', '.join(images)}. Do not invent a file name "
        "and never write the placeholder img_<number>."
    )


def question_prompt(question: Question, candidates: Sequence[str] | None = None) -> str:
    """The text that closes the prompt: the question, the answer instruction and, for fm
    questions, the candidate image file names (``candidates``: names of the images whose
    pixels or descriptions the context holds)."""
    parts = [f"Question: {question.text.strip()}", "", ANSWER_INSTRUCTION]
    if question.question_type == "fm":
        parts.append(fm_instruction(candidates or []))
    return "\n".join(parts)


def prompt_template() -> str:
    """The prompt's wording after the context, with placeholders: the question prompt, then the
    fm instruction with an image attached (``img_0`` standing for the candidates) and without
    one; its sha256 (on the reproducibility card) changes whenever the wording does."""
    question = Question(id="template", benchmark="m3exam", text="{question}", answer="")
    return "\n\n".join([question_prompt(question), fm_instruction(["img_0"]),
                         fm_instruction([])])
