"""Clip captions and summaries: EgoButler's memory bank (EgoLife, Yang et al., 2025).

EgoGPT captions each 30-second window of egocentric video at 1 fps with its audio; EgoRAG
summarises the captions into hour- and day-level digests with an LLM. Here both are protocols:
a ``ClipCaptioner`` turns one window's evidence into a caption, a ``Summarizer`` turns a list
of texts into one; a vision-language model fills either by implementing the protocol. The
offline defaults below need no model and say so: the caption
is *built* from what OCR read, what was said and what the detector saw, and is labelled
``SURROGATE_LABEL``; the summary is extractive (first sentences, in order, within a word
budget).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

SURROGATE_LABEL = "[surrogate caption: OCR, speech and detector text; no captioning model]"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class ClipEvidence(BaseModel):
    """What one window of video holds for its caption: its frames (image files, 1 fps), its
    transcript, and what perception read in its keyframes (OCR lines, detector scene text)."""

    model_config = ConfigDict(frozen=True)

    clip_id: str
    start: float
    end: float
    frames: tuple[str, ...] = ()
    transcript: str = ""
    ocr: tuple[str, ...] = ()
    objects: tuple[str, ...] = ()


@runtime_checkable
class ClipCaptioner(Protocol):
    """A caption of one window of video."""

    name: str

    def caption_clip(self, clip: ClipEvidence) -> str: ...


@runtime_checkable
class Summarizer(Protocol):
    """One summary of ``texts`` (time order) at ``level`` (``hour``, ``day``)."""

    name: str

    def summarize(self, texts: Sequence[str], level: str) -> str: ...


class SurrogateClipCaptioner:
    """The offline default captioner: the window's OCR, speech and detector text, labelled as
    a surrogate, never as what a captioning model saw."""

    name = "surrogate-caption"

    def caption_clip(self, clip: ClipEvidence) -> str:
        parts = [SURROGATE_LABEL]
        ocr = list(dict.fromkeys(t for t in clip.ocr if t.strip()))
        if ocr:
            parts.append("On screen: " + " | ".join(ocr) + ".")
        if clip.transcript.strip():
            parts.append("Heard: " + clip.transcript.strip())
        objects = list(dict.fromkeys(t for t in clip.objects if t.strip()))
        if objects:
            parts.append("Seen: " + " ".join(objects))
        if len(parts) == 1:
            parts.append("nothing read, heard or detected.")
        return " ".join(parts)


class ExtractiveSummarizer:
    """The offline default summariser: the first sentence of each text, without the surrogate
    label and without repeats, in order, cut at ``max_words`` words."""

    name = "extractive"

    def __init__(self, *, max_words: int = 120) -> None:
        if max_words <= 0:
            raise ValueError(f"max_words must be positive, got {max_words}")
        self.max_words = max_words

    def summarize(self, texts: Sequence[str], level: str) -> str:
        firsts: list[str] = []
        for text in texts:
            body = text.replace(SURROGATE_LABEL, "").strip()
            sentence = _SENTENCE_END.split(body, maxsplit=1)[0].strip() if body else ""
            if sentence and sentence not in firsts:
                firsts.append(sentence)
        words = " ".join(firsts).split()
        return " ".join(words[: self.max_words])
