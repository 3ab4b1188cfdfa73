"""The whole synthesis: persona + core event (+ an image pool, + a document pool of PDFs) →
a persona folder in the released M3Exam layout (``timeline_<name>.json``, ``images/``,
``pdfs/``, ``sessions.json``, ``question.json``).

Resumable: each stage writes its output, and a rerun skips what is written: the timeline,
the document and image assignments, every finished round (``_synthesis/rounds.jsonl``, one
per line), the audited ``sessions.json``, and the questions already in ``question.json``.
Every backend call is also kept in ``_synthesis/calls.jsonl`` and replayed on a rerun, so a
resumed run makes the same dataset as an uninterrupted one. Quality-control edits, rejected
questions and skipped documents are documented in ``_synthesis/``; rendered PDF pages are
cached in ``_synthesis/pages/``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.m3exam.construct.dialogue import (
    DialogueConfig,
    audit_dialogue,
    generate_round,
    plan_rounds,
    to_sessions,
)
from m3kit.benchmarks.m3exam.construct.documents import (
    NumberedDocument,
    assign_documents,
    load_document_pool,
)
from m3kit.benchmarks.m3exam.construct.errors import SynthesisError
from m3kit.benchmarks.m3exam.construct.images import NumberedImage, assign_images, load_pool
from m3kit.benchmarks.m3exam.construct.questions import generate_questions
from m3kit.benchmarks.m3exam.construct.records import (
    PersonaSpec,
    QCEdit,
    QuestionItem,
    RoundRecord,
    SessionRecord,
)
from m3kit.benchmarks.m3exam.construct.timeline import (
    generate_timeline,
    released_timeline,
    timeline_from_released,
)
from m3kit.files import atomic_write_text
from m3kit.models.backend import TextBackend
from m3kit.models.call_cache import CachedBackend

__all__ = ["ProgressHook", "SynthesisConfig", "SynthesisResult", "read_spec", "synthesize"]

ProgressHook = Callable[[str, int, int], None]
"""Called as ``hook(stage, done, total)`` while a stage works (the CLI draws rich bars)."""

WORK = "_synthesis"
# A reply's token cap: a timeline, a dialogue turn or a batch of questions fits well inside it.
MAX_REPLY_TOKENS = 2048
_BANK_SETTINGS = {"questions", "questions_per_call", "max_attempts_per_type"}


class SynthesisConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    images_per_event: int = Field(default=2, ge=0)
    documents_per_event: int = Field(default=1, ge=0)
    max_document_pages: int = Field(default=4, ge=1)  # pages of a document a round shows
    document_page_images: bool = True  # also send rendered pages (a vision backend)
    rounds_per_event: int = Field(default=2, ge=1)
    max_rounds_per_session: int = Field(default=10, ge=1)
    memory_window: int = Field(default=12, ge=0)
    audit_chunk: int = Field(default=6, ge=1)
    questions: dict[str, int] = Field(
        default_factory=lambda: {t: 4 for t in ("ss", "ms", "tr", "mr", "fm", "th", "ii", "fj")}
    )
    questions_per_call: int = Field(default=2, ge=1)
    max_attempts_per_type: int = Field(default=10, ge=1)
    retries: int = Field(default=2, ge=0)

    def dialogue(self) -> DialogueConfig:
        return DialogueConfig(self.rounds_per_event, self.max_rounds_per_session,
                              self.memory_window, self.audit_chunk, self.retries)


class SynthesisResult(BaseModel):
    out_dir: Path
    events: int
    sessions: int
    rounds: int
    images: int
    documents: int = 0
    skipped_documents: list[str] = Field(default_factory=list)
    questions: dict[str, int]
    rejected_questions: int
    qc_edits: int


def read_spec(path: Path) -> PersonaSpec:
    """A persona spec from a JSON or YAML file (``name``, ``persona``, ``core_event``,
    ``start_date``, optional ``n_core_events``, ``n_distractor_events``)."""
    import yaml
    from pydantic import ValidationError

    from m3kit.errors import SchemaError

    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))  # YAML reads JSON too
    except OSError as exc:
        raise SchemaError(f"cannot read the spec: {exc.strerror}", path=path) from exc
    except yaml.YAMLError as exc:
        raise SchemaError(f"not JSON or YAML: {exc}", path=path) from exc
    if not isinstance(raw, dict):
        raise SchemaError("expected an object with name, persona, core_event, start_date",
                          path=path)
    try:
        return PersonaSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SchemaError(first["msg"], path=path, record=str(raw.get("name", "")) or None,
                          field=".".join(str(p) for p in first["loc"])) from exc


def _write(path: Path, value: object) -> None:
    # atomic: a kill mid-write never leaves a half file that looks finished
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _read(path: Path) -> Any:
    """A JSON file this pipeline wrote (resume); each caller reads it into its records."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SynthesisError(f"invalid JSON: {exc.msg} (delete it to redo the stage)",
                             path=path) from exc


def synthesize(
    spec: PersonaSpec,
    backend: TextBackend,
    out_root: Path,
    *,
    config: SynthesisConfig | None = None,
    image_pool: Path | None = None,
    document_pool: Path | None = None,
    progress: ProgressHook | None = None,
) -> SynthesisResult:
    """Run (or resume) the pipeline into ``out_root/<spec.name>/``.

    ``document_pool`` is a folder of PDFs (``descriptions.json`` optional); each lands on the
    event its text matches, and that event's opening round attaches it (``pdf_file``) instead
    of pool images. Unreadable PDFs are skipped and listed in the result."""
    config = config or SynthesisConfig()
    tick = progress or (lambda stage, done, total: None)
    out = Path(out_root) / spec.name
    work = out / WORK
    work.mkdir(parents=True, exist_ok=True)
    # The bank's settings may change between runs (a rerun with a higher target tops the bank
    # up); everything that shapes the timeline or the dialogue may not.
    shaping = config.model_dump(mode="json", exclude=_BANK_SETTINGS)
    setup = {"spec": spec.model_dump(mode="json"), "config": shaping,
             "image_pool": str(image_pool) if image_pool else None,
             "document_pool": str(document_pool) if document_pool else None}
    setup_path = work / "setup.json"
    if setup_path.exists() and _read(setup_path) != setup:
        raise SynthesisError(
            "this folder holds a synthesis from another persona spec, configuration or image "
            "pool; choose another output folder", path=setup_path)
    _write(setup_path, setup)
    backend = CachedBackend(backend, work / "calls.jsonl")
    edits: list[QCEdit] = []

    # 1. timeline
    timeline_path = out / f"timeline_{spec.name}.json"
    if timeline_path.exists():
        events = timeline_from_released(_read(timeline_path))
        edits += [QCEdit(**e) for e in _read(work / "timeline_qc.json")]
    else:
        tick("timeline", 0, 1)
        events, timeline_edits = generate_timeline(spec, backend, retries=config.retries)
        edits += timeline_edits
        _write(work / "timeline_qc.json", [e.model_dump() for e in timeline_edits])
        _write(timeline_path, released_timeline(spec, events))
        tick("timeline", 1, 1)

    # 2. documents, then images for the events without one
    documents_path = work / "documents.json"
    skipped_path = work / "skipped_documents.json"
    if documents_path.exists():
        raw = _read(documents_path)
        documents = {int(k): [NumberedDocument(**d) for d in v]
                     for k, v in raw.items()}
        skipped_documents = [str(x) for x in _read(skipped_path)]
    else:
        documents, skipped_documents = {}, []
        if document_pool:
            tick("documents", 0, 1)
            doc_pool, skipped_documents = load_document_pool(
                document_pool, max_pages=config.max_document_pages)
            documents = assign_documents(events, doc_pool, out / "pdfs",
                                         per_event=config.documents_per_event,
                                         max_pages=config.max_document_pages, seed=config.seed)
            tick("documents", 1, 1)
        _write(skipped_path, skipped_documents)
        _write(documents_path,
               {str(k): [d.model_dump() for d in v] for k, v in documents.items()})
    images_path = work / "images.json"
    if images_path.exists():
        raw = _read(images_path)
        images = {int(k): [NumberedImage(**im) for im in v]
                  for k, v in raw.items()}
    else:
        pool = load_pool(image_pool) if image_pool else []
        tick("images", 0, 1)
        images = assign_images(events, pool, backend, out / "images",
                               per_event=config.images_per_event, seed=config.seed,
                               retries=config.retries,
                               skip=frozenset(k for k, v in documents.items() if v))
        _write(images_path, {str(k): [im.model_dump() for im in v] for k, v in images.items()})
        tick("images", 1, 1)

    # 3. dialogue, then its audits
    sessions_path = out / "sessions.json"
    dialogue = config.dialogue()
    # rendered pages are a cache for the backend, not part of the released folder
    pages_dir = work / "pages" if config.document_page_images else None
    plans = plan_rounds(events, dialogue)
    if sessions_path.exists():
        sessions = [SessionRecord(**s) for s in _read(sessions_path)]
        edits += [QCEdit(**e) for e in _read(work / "dialogue_qc.json")]
    else:
        rounds_path = work / "rounds.jsonl"
        rounds: list[RoundRecord] = []
        if rounds_path.exists():
            for line in rounds_path.read_text(encoding="utf-8").splitlines():
                try:
                    rounds.append(RoundRecord(**json.loads(line)))
                except (json.JSONDecodeError, TypeError, ValueError):
                    break  # a line cut by a kill: regenerate from there
        rounds = rounds[:len(plans)]
        by_index = {e.index: e for e in events}
        with rounds_path.open("w", encoding="utf-8") as fh:
            for r in rounds:
                fh.write(_round_line(r))
            for n, plan in enumerate(plans[len(rounds):], len(rounds)):
                tick("dialogue", n, len(plans))
                r = generate_round(spec, plan, by_index, images, rounds, backend,
                                   str(out / "images"), dialogue, documents, out / "pdfs",
                                   pages_dir)
                rounds.append(r)
                fh.write(_round_line(r))
                fh.flush()
        tick("dialogue", len(plans), len(plans))
        n_chunks = -(-len(rounds) // dialogue.audit_chunk) + 1
        done = 0

        def step() -> None:
            nonlocal done
            done += 1
            tick("audit", done, n_chunks)

        rounds, dialogue_edits = audit_dialogue(spec, rounds, backend, dialogue, step)
        edits += dialogue_edits
        sessions = to_sessions(plans, rounds)
        _write(work / "dialogue_qc.json", [e.model_dump() for e in dialogue_edits])
        _write(sessions_path, [s.released() for s in sessions])

    # 4. question bank (tops up a partial bank)
    question_path = out / "question.json"
    bank = ([QuestionItem(**q) for q in _read(question_path)]
            if question_path.exists() else [])
    total = sum(config.questions.values())

    def keep(item: QuestionItem) -> None:
        bank.append(item)
        _write(question_path, [q.model_dump() for q in bank])
        tick("questions", min(len(bank), total), total)

    tick("questions", min(len(bank), total), total)
    final, rejected = generate_questions(
        sessions, backend, config.questions, seed=config.seed, images_dir=str(out / "images"),
        pdfs_dir=str(out / "pdfs") if (out / "pdfs").is_dir() else None,
        pages_dir=str(pages_dir) if pages_dir else None, existing=list(bank),
        per_call=config.questions_per_call,
        max_attempts=config.max_attempts_per_type, retries=config.retries, on_item=keep,
    )
    _write(question_path, [q.model_dump() for q in final])
    _write(work / "rejected_questions.json", [r.model_dump() for r in rejected])
    return SynthesisResult(
        out_dir=out, events=len(events), sessions=len(sessions),
        rounds=sum(len(s.dialogues) for s in sessions),
        images=sum(len(v) for v in images.values()),
        documents=sum(len(v) for v in documents.values()), skipped_documents=skipped_documents,
        questions=dict(Counter(q.type for q in final)), rejected_questions=len(rejected),
        qc_edits=len(edits),
    )


def _round_line(r: RoundRecord) -> str:
    return json.dumps(r.released() | {"summary": r.summary, "event_index": r.event_index},
                      ensure_ascii=False) + "\n"
