"""A SuperMemory-VQA folder in the released layout as a ``ReviewSource`` (``m3kit review DIR``):
the synthetic egocentric suite, stage 2's output, or any folder ``load_supermemory`` reads.

Each loaded question is one ``ReviewItem``: its four options with their roles (``correct``,
``vague``, ``incorrect``, the abstain option as ``abstain``), the question video at each
question span and at each answer-evidence span (a transcript-only session has no video: its
lines in the span are shown as evidence instead), the answer evidence's text, and, where stage
2 wrote ``annotations/qa/person_<n>.json`` (``PersonAnnotations``), the verifier's last verdicts
and the causality check of the accepted pair as checks.

``export`` writes the accepted records, the reviewer's edits applied (question, option texts,
a new gold: ``correct_option_index``, ``choice_types``, ``correct_answer`` and ``is_answerable``
kept consistent), as ``OUT/data/json/all_qa.json``, and the sessions' files under
``OUT/data/video`` and ``OUT/data/transcripts`` as hard links (never copies): the loader refuses
a symbolic link out of the data folder (``m3kit.paths.resolve_in_root``), and a hard link is the
same file. The export is then read back with ``load_supermemory``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from m3kit.benchmarks.supermemory.construct.records import (
    ANNOTATION_DIR,
    AnnotatedQA,
    PersonAnnotations,
)
from m3kit.benchmarks.supermemory.fields import SuperMemoryError, record_skip
from m3kit.benchmarks.supermemory.load import (
    BENCHMARK_NAME,
    SuperMemorySet,
    TimelineSession,
    find_qa_file,
    load_supermemory,
)
from m3kit.files import atomic_write_text, folder_replaced, link_or_copy
from m3kit.schema import Question
from m3kit.schema.review import (
    EXPORT_RECORD,
    ExportResult,
    ItemEdit,
    ReviewCheck,
    ReviewDecision,
    ReviewItem,
    ReviewMedia,
    ReviewOption,
    verdict_of,
)
from m3kit.schema.supermemory import ALL_QA_PATH, DATA_DIR, QARecord, is_abstain_text

__all__ = ["SuperMemoryReviewSource", "open_review_source"]

# Written into an export folder: a folder holding it may be exported into again (its data is
# replaced); any other non-empty folder is refused, never written over.
_QA_DIR = "qa"
_ABSTAIN_ROLE = "abstain"


def open_review_source(root: Path) -> SuperMemoryReviewSource | None:
    """The review source of the SuperMemory-VQA folder ``root`` (the folder holding
    ``data/json/all_qa.json``, or that ``data`` folder), ``None`` when ``root`` is not one."""
    root = Path(root)
    if not root.is_dir():
        return None
    try:
        find_qa_file(root)
    except SuperMemoryError:
        return None
    return SuperMemoryReviewSource(root)


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _iso(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


class SuperMemoryReviewSource:
    """The questions of one SuperMemory-VQA folder, for review and export."""

    benchmark: str = BENCHMARK_NAME

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.data: SuperMemorySet = load_supermemory(self.root)
        if self.data.root is None:  # find_qa_file found a folder, so the loader has it
            raise SuperMemoryError("no data folder", path=self.root)
        self._data_root = self.data.root
        self._annotations = _annotations(self.root)
        self._raw = _raw_records(self.data.qa_file)

    # -- items -------------------------------------------------------------------------------

    def items(self) -> list[ReviewItem]:
        return [self._item(question) for question in self.data.questions]

    def _rel(self, data_path: str) -> str:
        """A path under the data folder, relative to the source's root."""
        return (self._data_root / data_path).relative_to(self.root).as_posix()

    def _item(self, question: Question) -> ReviewItem:
        meta = question.metadata
        subject = int(meta["subject"])
        sessions = {s.video_id: s for s in self.data.sessions.get(subject, [])}
        media: list[ReviewMedia] = []
        evidence: list[str] = []
        for n, span in enumerate(meta["question_spans"], 1):
            media += self._span_media(sessions.get(span["video_id"]), span,
                                      f"question span {n}")
        answer_text = self._raw_answer_text(question.id)
        if answer_text:
            evidence.append(answer_text)
        for n, span in enumerate(meta["answer_spans"], 1):
            session = sessions.get(span["video_id"])
            media += self._span_media(session, span, f"evidence {n}")
            evidence += _heard(session, span, n)
        options = tuple(
            ReviewOption(letter=c.letter, text=c.text,
                         role=_ABSTAIN_ROLE if is_abstain_text(c.text)
                         else meta["choice_types"][k])
            for k, c in enumerate(question.choices))
        facts: list[tuple[str, str]] = [
            ("skill", str(meta["skill"])),
            ("question time", _iso(question.time) if question.time is not None else "?"),
            ("answerable", "yes" if meta["is_answerable"] else "no"),
            ("person", str(subject)),
            ("question video", str(meta["primary_video_id"])),
        ]
        annotated = self._annotations.get(question.id)
        if annotated is not None:
            facts += [("scope", annotated.scope), ("verification loops",
                                                   str(len(annotated.verdicts)))]
        return ReviewItem(
            id=question.id, group=f"person {subject}", question=question.text,
            options=options, answer=question.answer or "", media=tuple(media),
            evidence=tuple(evidence), checks=_checks(annotated), facts=tuple(facts))

    def _span_media(self, session: TimelineSession | None, span: Mapping[str, object],
                    label: str) -> list[ReviewMedia]:
        if session is None or session.video is None:
            return []  # a transcript-only session: its lines are the evidence
        start, end = float(str(span["start"])), float(str(span["end"]))
        return [ReviewMedia(
            kind="video", path=self._rel(session.video), start=start, end=end,
            label=f"{label}: {session.video_id} {_clock(start)}-{_clock(end)}")]

    def _raw_answer_text(self, qid: str) -> str:
        raw = self._raw.get(qid, {})
        answer = raw.get("answer_evidence")
        text = answer.get("text") if isinstance(answer, Mapping) else None
        return text if isinstance(text, str) else ""

    # -- export ------------------------------------------------------------------------------

    def check_edit(self, item_id: str, edit: ItemEdit) -> str | None:
        try:
            _edited(self._raw[item_id], item_id, edit, self.data.qa_file)
        except (KeyError, SuperMemoryError) as exc:
            return exc.reason if isinstance(exc, SuperMemoryError) else f"no item {item_id!r}"
        return None

    def export(self, decisions: dict[str, ReviewDecision], out: Path) -> ExportResult:
        """The accepted records, edited, in the released layout at ``out`` (new, empty, or an
        earlier export, replaced whole), the sessions' files hard-linked beside them, read
        back with ``load_supermemory``."""
        out = Path(out)
        raw = self._raw
        verdicts = {q.id: verdict_of(decisions, q.id) for q in self.data.questions}
        kept = [_edited(raw[q.id], q.id, decisions[q.id].edit, self.data.qa_file)
                for q in self.data.questions if verdicts[q.id] == "accepted"]
        with folder_replaced(out, earlier=EXPORT_RECORD) as temp:
            for sessions in self.data.sessions.values():
                for session in sessions:
                    for name in (session.video, session.transcript):
                        if name is not None:
                            link_or_copy(self._data_root / name, temp / DATA_DIR / name)
            atomic_write_text(temp / ALL_QA_PATH, json.dumps(kept, indent=1, ensure_ascii=False))
        loaded = load_supermemory(out)
        result = ExportResult(
            out=str(out), benchmark=self.benchmark, exported=len(kept),
            rejected=sum(v == "rejected" for v in verdicts.values()),
            pending=sum(v == "pending" for v in verdicts.values()),
            loaded=len(loaded.questions), skipped=loaded.skipped)
        atomic_write_text(out / EXPORT_RECORD, result.model_dump_json(indent=1))
        return result


def _edited(raw: dict[str, object], item_id: str, edit: ItemEdit,
            qa_file: Path) -> dict[str, object]:
    """``raw`` with ``edit`` applied, the gold's fields kept consistent; checked as the loader
    checks it (``SuperMemoryError`` naming the item and field otherwise)."""
    record = dict(raw)
    choices = [str(c) for c in record["choices"]] if isinstance(record["choices"], list) else []
    types = [str(t) for t in record["choice_types"]] \
        if isinstance(record["choice_types"], list) else []
    gold = record["correct_option_index"]
    if not isinstance(gold, int):
        raise SuperMemoryError("not an index", path=qa_file, record=item_id,
                               field="correct_option_index")
    if edit.question is not None:
        record["question"] = edit.question
    for letter, text in edit.options.items():
        k = ord(letter.upper()) - ord("A")
        if not 0 <= k < len(choices):
            raise SuperMemoryError(f"the edit names no option {letter!r}", path=qa_file,
                                   record=item_id, field="choices")
        choices[k] = text
    if edit.answer is not None:
        new = ord(edit.answer.strip().upper()[:1] or "?") - ord("A")
        if not 0 <= new < len(choices):
            raise SuperMemoryError(f"the edit's gold {edit.answer!r} is no option", path=qa_file,
                                   record=item_id, field="correct_option_index")
        # the new gold takes the "correct" role, the old gold the role the new one had
        types[gold], types[new] = types[new], types[gold]
        gold = new
    record["choices"] = choices
    record["choice_types"] = types
    record["correct_option_index"] = gold
    record["correct_answer"] = choices[gold]
    record["is_answerable"] = not is_abstain_text(choices[gold])
    try:
        QARecord.model_validate(record)
    except ValidationError as exc:
        skip = record_skip(exc)
        raise SuperMemoryError(f"the edited record is not valid: {skip.reason}", path=qa_file,
                               record=item_id, field=skip.field or None) from None
    return record


def _raw_records(qa_file: Path) -> dict[str, dict[str, object]]:
    """The records of ``all_qa.json`` as written, by question id (the first of an id, as the
    loader keeps it)."""
    out: dict[str, dict[str, object]] = {}
    for record in json.loads(qa_file.read_text(encoding="utf-8")):
        if isinstance(record, dict) and "question_id" in record:
            out.setdefault(str(record["question_id"]).strip(), record)
    return out


def _heard(session: TimelineSession | None, span: Mapping[str, object], n: int) -> list[str]:
    """The transcript's lines within an evidence span, as evidence text."""
    if session is None:
        return []
    start, end = float(str(span["start"])), float(str(span["end"]))
    return [f"evidence {n} ({session.video_id} {_clock(line.start)}) "
            f"{line.person or line.kind}: {line.text}"
            for line in session.lines
            if line.text.strip() and line.end >= start and line.start <= end]


def _annotations(root: Path) -> dict[str, AnnotatedQA]:
    """Stage 2's accepted pairs by their question id in ``all_qa.json``."""
    folder = root / ANNOTATION_DIR / _QA_DIR
    out: dict[str, AnnotatedQA] = {}
    for file in sorted(folder.glob("person_*.json")) if folder.is_dir() else []:
        try:
            person = PersonAnnotations.model_validate_json(file.read_bytes())
        except (OSError, ValidationError) as exc:
            raise SuperMemoryError(f"stage 2's annotations cannot be read: {exc}",
                                   path=file) from None
        for pair in person.pairs:
            if pair.status == "accepted" and pair.question_id is not None:
                out[str(pair.question_id)] = pair
    return out


def _checks(annotated: AnnotatedQA | None) -> tuple[ReviewCheck, ...]:
    if annotated is None:
        return ()
    checks = [ReviewCheck(name=v.name, passed=v.passed, score=v.score, rationale=v.rationale)
              for v in (annotated.verdicts[-1] if annotated.verdicts else [])]
    causality = annotated.causality
    if causality is not None:
        latest = ("no evidence span" if causality.latest_evidence_unix is None
                  else f"the latest evidence ends at {_iso(causality.latest_evidence_unix)}")
        why = f"{latest}; the question is asked at {_iso(causality.question_unix)}"
        if causality.late:
            why += f"; after it: {', '.join(causality.late)}"
        checks.append(ReviewCheck(name="causality", passed=causality.passed, rationale=why))
    return tuple(checks)
