"""Typed question bank: sample a context window per type, prompt for items, validate each
(M3Exam §2.2 "Question Bank Synthesis", A.3, A.4).

Validation keeps an item only when it is well formed, obeys its type's construction
constraint, and cites supporting facts inside the sampled window, so every retained question
is answerable from the evidence it cites. Rejected items are returned with their reason.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from m3kit.benchmarks.m3exam.construct import prompts
from m3kit.benchmarks.m3exam.construct.documents import (
    MAX_DOCUMENT_CHARS,
    document_text,
    entry_pages,
    render_pages,
)
from m3kit.benchmarks.m3exam.construct.records import (
    QuestionDraft,
    QuestionItem,
    RoundRecord,
    SessionRecord,
)
from m3kit.benchmarks.m3exam.load import QUESTION_TYPES, QuestionType
from m3kit.models.backend import BackendRequest, MalformedReplyError, TextBackend, call_json

__all__ = ["Rejection", "Window", "generate_questions", "sample_window", "validate_item"]

_IMG = re.compile(r"^img_(\d+)$")
_FJ_SUFFIX = "Output only the letter of the correct option (A, B, C, or D)."
_FM_SUFFIX = "Return the image file name in the format img_<number>."
_MAX_TURN_CHARS = 1500  # long assistant turns are cut in prompts: the window must fit a context


@dataclass(frozen=True)
class Window:
    """A sampled context: per session, the consecutive rounds shown to the generator.

    ``documents`` holds, per document-bearing round id, the bounded text of its documents;
    ``focus`` is the round an mr/fm window was centred on and ``modality`` what it carries
    there (``"image"`` or ``"document"``)."""

    window_id: str
    qtype: QuestionType
    parts: tuple[tuple[SessionRecord, tuple[RoundRecord, ...]], ...]
    documents: Mapping[str, str] = field(default_factory=dict)
    focus: str | None = None
    modality: str | None = None

    @property
    def rounds(self) -> dict[str, RoundRecord]:
        return {r.round: r for _, rounds in self.parts for r in rounds}

    def render(self) -> str:
        lines = []
        for session, rounds in self.parts:
            lines.append(f"Session {session.session_id} (date {session.date.isoformat()})")
            for r in rounds:
                lines.append(f"[{r.round}] User: {r.user}")
                for file_name, image_id, desc in zip(r.img_file, r.img_id, r.img_description,
                                                    strict=False):
                    lines.append(f"  Attached img_{image_id} ({file_name}): {desc}")
                if r.round in self.documents:
                    lines.extend("    " + line if line.strip() else ""
                                 for line in self.documents[r.round].splitlines())
                lines.append(f"Assistant: {r.assistant[:_MAX_TURN_CHARS]}")
        return "\n".join(lines)


class Rejection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    window: str
    question: str
    reason: str


def _slice(rng: random.Random, session: SessionRecord, low: int, high: int,
           center: int | None = None) -> tuple[RoundRecord, ...]:
    rounds = session.dialogues
    size = min(len(rounds), rng.randint(low, high))
    if center is None:
        start = rng.randint(0, len(rounds) - size)
    else:
        start = max(0, min(center - size // 2, len(rounds) - size))
    return tuple(rounds[start:start + size])


def sample_window(
    qtype: QuestionType,
    sessions: list[SessionRecord],
    rng: random.Random,
    window_id: str,
    documents: Mapping[str, str] | None = None,
) -> Window | None:
    """A window for ``qtype`` as A.3 describes its sampling; ``None`` when the dataset cannot
    support the type (one session only, no image rounds...). An mr window centres on an
    image round or, for PDF sessions, on a document round (the kind drawn first, evenly, so
    that rare documents still get their share); ``documents`` is the text shown for
    document rounds."""
    def pick(k: int) -> list[SessionRecord]:
        chosen = rng.sample(range(len(sessions)), k)
        return [sessions[i] for i in sorted(chosen)]  # chronological order

    n = len(sessions)
    if n == 0:
        return None
    focus = modality = None
    if qtype == "ss":
        s = rng.choice(sessions)
        parts = [(s, _slice(rng, s, 3, 6))]
    elif qtype == "th":
        s = rng.choice(sessions)
        parts = [(s, _slice(rng, s, 6, 10))]
    elif qtype in ("ms", "tr", "ii", "fj"):
        low, high, size = {"ms": (2, 3, (2, 4)), "tr": (2, 4, (2, 3)),
                           "ii": (2, 5, (2, 2)), "fj": (2, 3, (3, 3))}[qtype]
        if n < 2:
            return None
        parts = [(s, _slice(rng, s, *size)) for s in pick(rng.randint(low, min(high, n)))]
    elif qtype in ("mr", "fm"):
        need = 1 if qtype == "mr" else 2
        kinds = {"image": [(s, i) for s in sessions for i, r in enumerate(s.dialogues)
                           if len(r.img_id) >= need]}
        if qtype == "mr":
            kinds["document"] = [(s, i) for s in sessions for i, r in enumerate(s.dialogues)
                                 if r.pdf_file]
        kinds = {k: v for k, v in kinds.items() if v}
        if not kinds:
            return None
        # a single kind draws nothing extra: image-only datasets sample as before
        modality = rng.choice(sorted(kinds)) if len(kinds) > 1 else next(iter(kinds))
        s, i = rng.choice(kinds[modality])
        focus = s.dialogues[i].round
        parts = [(s, _slice(rng, s, 3, 3, center=i))]
    else:
        raise ValueError(f"unknown question type {qtype!r}")
    shown = {r.round for _, rounds in parts for r in rounds}
    docs = {k: v for k, v in (documents or {}).items() if k in shown}
    return Window(window_id, qtype, tuple(parts), docs, focus, modality)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def validate_item(draft: QuestionDraft, window: Window) -> QuestionItem:
    """The item as released, or ``ValueError`` naming the rule it breaks."""
    shown = window.rounds
    outside = [f for f in draft.supporting_facts if f not in shown]
    if outside:
        raise ValueError(f"supporting facts {outside} fall outside the sampled window")
    facts = draft.supporting_facts
    sessions = {f.split(":")[0] for f in facts}
    question, answer = draft.question, draft.answer
    qtype = window.qtype
    if qtype == "ss" and len(facts) != 1:
        raise ValueError("ss cites exactly one round")
    if qtype == "ms" and len(sessions) < 2:
        raise ValueError("ms cites rounds from at least two sessions")
    if qtype == "ii":
        if len(facts) < 2:
            raise ValueError("ii cites at least two rounds")
        if re.fullmatch(r"[\d\s.,]+(times)?", answer[0].lower()):
            raise ValueError("ii answers are qualitative, not counts")
    if qtype == "th" and len(answer) < 2:
        raise ValueError("th stores the answer hierarchically (full, short, keyword)")
    if qtype == "mr":
        cited = [shown[f] for f in facts]
        if window.modality == "document":
            # the question is about the document's pages: its round must be evidence
            if not any(r.pdf_file for r in cited):
                raise ValueError("an mr item over a document cites the document round")
        elif not any(r.img_id or r.pdf_file for r in cited):
            raise ValueError("mr cites an image-bearing round")
        if any(_norm(answer[0]) in _norm(f"{r.user} {r.assistant}") for r in cited):
            raise ValueError("the mr answer is stated in the dialogue text, not only visible")
    if qtype == "fm":
        ids = []
        for entry in answer:
            match = _IMG.match(entry.strip().lower().removesuffix(".jpg"))
            if not match:
                raise ValueError(f"fm answer entry {entry!r} is not an img_<number> id")
            ids.append(int(match.group(1)))
        candidates = {i for r in shown.values() for i in r.img_id}
        if len(ids) < 2 or len(set(ids)) != len(ids):
            raise ValueError("fm lists the matching image and at least one other candidate")
        if not set(ids) <= candidates:
            raise ValueError(f"fm names images not shown in the window: "
                             f"{sorted(set(ids) - candidates)}")
        if not any(ids[0] in shown[f].img_id for f in facts):
            raise ValueError("the fm gold image is not attached to a cited round")
        answer = [f"img_{i}" for i in ids]
        if "img_" not in question:
            question = f"{question} {_FM_SUFFIX}"
    if qtype == "fj":
        if len(answer) != 1 or answer[0].strip("() .").upper() not in {"A", "B", "C", "D"}:
            raise ValueError("fj answers with a single letter A-D")
        answer = [answer[0].strip("() .").upper()]
        if not all(f"({c})" in question for c in "ABCD"):
            raise ValueError("fj writes options (A) to (D) in the question")
        if "letter" not in question.lower():
            question = f"{question}\n{_FJ_SUFFIX}"
    return QuestionItem(question=question, answer=answer, label=answer[0],
                        supporting_facts=",".join(facts), type=qtype)


def generate_questions(
    sessions: list[SessionRecord],
    backend: TextBackend,
    targets: dict[str, int],
    *,
    seed: int,
    images_dir: str,
    pdfs_dir: str | None = None,
    pages_dir: str | None = None,
    existing: list[QuestionItem] | None = None,
    per_call: int = 2,
    max_attempts: int = 10,
    retries: int = 2,
    on_item: Callable[[QuestionItem], None] | None = None,
) -> tuple[list[QuestionItem], list[Rejection]]:
    """Fill each type up to its target, resuming from ``existing`` (a partial bank): windows
    are drawn from a seeded generator per (type, attempt), at most ``max_attempts`` per type.
    Malformed batches (after retries) and invalid items are rejected, never raised.

    Document rounds show their text layer (read from ``pdfs_dir``, bounded) in every window;
    an mr window over a document also sends its rendered pages (into ``pages_dir``)."""
    bank = list(existing or [])
    documents = _document_texts(sessions, Path(pdfs_dir)) if pdfs_dir else {}
    seen = {_norm(q.question) for q in bank}
    rejected: list[Rejection] = []
    for qtype in QUESTION_TYPES:
        target = targets.get(qtype, 0)
        for attempt in range(max_attempts):
            have = sum(q.type == qtype for q in bank)
            if have >= target:
                break
            window_id = f"{qtype}-{attempt}"
            window = sample_window(qtype, sessions, random.Random(f"{seed}:{window_id}"),
                                   window_id, documents)
            if window is None:
                rejected.append(Rejection(type=qtype, window=window_id, question="",
                                          reason="the dataset cannot support this type"))
                break
            images: tuple[Path, ...] = ()
            if qtype in ("mr", "fm"):  # the generator sees the pixels it writes about
                images = tuple(Path(images_dir) / f for r in window.rounds.values()
                               for f in r.img_file)
            if qtype == "mr" and pdfs_dir and pages_dir:
                images += _page_images(window, Path(pdfs_dir), Path(pages_dir))
            instruction = prompts.QUESTION_INSTRUCTIONS[qtype]
            if window.modality is not None and qtype == "mr":
                instruction += " " + prompts.QUESTION_FOCUS[window.modality].format(
                    round_id=window.focus)
            request = BackendRequest(f"questions.{qtype}", window_id,
                                     prompts.QUESTION_COMMON.format(
                                         context=window.render(), qtype=qtype,
                                         instruction=instruction,
                                         n=min(per_call, target - have)), images)
            try:
                # the batch must be a JSON array of objects; each item is then judged alone,
                # so one malformed item does not cost the others
                raw_items = call_json(backend, request, list[dict[str, Any]], retries=retries)
            except MalformedReplyError as exc:
                rejected.append(Rejection(type=qtype, window=window_id, question="",
                                          reason=str(exc)))
                continue
            for raw in raw_items:
                question = str(raw.get("question", ""))
                try:
                    draft = QuestionDraft.model_validate(raw)
                    item = validate_item(draft, window)
                    if _norm(item.question) in seen:
                        raise ValueError("duplicate of a question already in the bank")
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first["loc"])
                    rejected.append(Rejection(type=qtype, window=window_id, question=question,
                                              reason=f"malformed item: {where}: {first['msg']}"))
                    continue
                except ValueError as exc:
                    rejected.append(Rejection(type=qtype, window=window_id,
                                              question=question, reason=str(exc)))
                    continue
                if sum(q.type == qtype for q in bank) >= target:
                    break
                bank.append(item)
                seen.add(_norm(item.question))
                if on_item:
                    on_item(item)
    return bank, rejected


def _round_documents(r: RoundRecord, pdfs_dir: Path) -> list[tuple[Path, list[int]]]:
    """A round's ``pdf_file`` entries grouped by file, pages in order."""
    grouped: dict[Path, list[int]] = {}
    for entry in r.pdf_file:
        path, pages = entry_pages(entry, pdfs_dir)
        grouped.setdefault(path, []).extend(p for p in pages if p not in grouped.get(path, []))
    return list(grouped.items())


def _document_texts(sessions: list[SessionRecord], pdfs_dir: Path) -> dict[str, str]:
    """Per document round, what a window shows of its documents: a header naming each file
    and its pages, then its bounded text layer (one bound shared by the round's documents)."""
    texts = {}
    for session in sessions:
        for r in session.dialogues:
            docs = _round_documents(r, pdfs_dir)
            if not docs:
                continue
            budget = MAX_DOCUMENT_CHARS // len(docs)
            blocks = []
            for path, pages in docs:
                span = ", ".join(str(p + 1) for p in pages)
                blocks.append(f"Attached document {path.name} (pages {span}):\n"
                              f"{document_text(path, pages, budget)}")
            texts[r.round] = "\n".join(blocks)
    return texts


def _page_images(window: Window, pdfs_dir: Path, pages_dir: Path) -> tuple[Path, ...]:
    return tuple(image for r in window.rounds.values()
                 for path, pages in _round_documents(r, pdfs_dir)
                 for image in render_pages(path, pages, pages_dir))
