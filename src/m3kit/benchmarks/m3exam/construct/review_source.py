"""An M3Exam persona folder (``m3kit m3exam synthesize``, or a released one) as a review source
for ``m3kit review FOLDER`` (``m3kit.schema.review``).

Items are the questions of ``question.json``, named ``q<index>`` by their place in that file.
M3Exam is open-ended: an item has no options, its answer is the gold text (the first answer;
the coarser ones are shown as a fact). Its evidence is the text of the supporting rounds (with
their session and date), its media the images attached to those rounds (``images/``; for a
find-the-image question also the candidates its answer names) and the pages of the PDFs
attached to them (``pdfs/``, 0-based pages). Its checks are what the synthesis holds a question
to, re-run on the item as it stands: the construction rule of its type (``validate_item``, over
the whole sessions the question cites), whether its supporting rounds exist, and the documented
quality-control edits (``_synthesis/dialogue_qc.json``) of those rounds.

The export is a folder holding one persona folder in the released layout (``OUT/<persona>/``:
the persona's name is its folder's, and the loader names the user by it): ``question.json``
with the accepted questions only, edited, in their order; ``sessions.json`` and the timeline
copied; ``images/`` and ``pdfs/`` symbolic links to the source's folders (the loader resolves a
persona's media inside those folders, a link to the folder itself included). ``load_m3exam``
then reads it back.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from m3kit.benchmarks.m3exam.construct.pipeline import WORK
from m3kit.benchmarks.m3exam.construct.prompts import QUESTION_INSTRUCTIONS
from m3kit.benchmarks.m3exam.construct.questions import Window, validate_item
from m3kit.benchmarks.m3exam.construct.records import (
    QCEdit,
    QuestionDraft,
    RoundRecord,
    SessionRecord,
)
from m3kit.benchmarks.m3exam.load import (
    QUESTION_TYPES,
    answer_text,
    as_list,
    is_persona_folder,
    load_m3exam,
    parse_evidence,
    read_list,
)
from m3kit.errors import M3kitError, MediaError, SchemaError
from m3kit.files import atomic_write_text, folder_replaced
from m3kit.paths import resolve_in_root
from m3kit.schema import SkippedRecord
from m3kit.schema.review import (
    EXPORT_RECORD,
    ExportResult,
    ItemEdit,
    ReviewCheck,
    ReviewDecision,
    ReviewItem,
    ReviewMedia,
    verdict_of,
)

__all__ = ["M3ExamReviewSource", "open_review_source"]

BENCHMARK = "m3exam"
_SESSIONS = "sessions.json"
_QUESTIONS = "question.json"
_MEDIA_FOLDERS = ("images", "pdfs")
_IMG = re.compile(r"^img_(\d+)(?:\.jpg)?$")


class _Round(BaseModel):
    """A round of ``sessions.json`` as the review shows it, with its session."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    date: str
    raw: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.raw.get("round") or "")


def open_review_source(root: Path) -> M3ExamReviewSource | None:
    """``root`` as an M3Exam review source when it is a persona folder with questions; else
    ``None``."""
    root = Path(root)
    if not (root.is_dir() and is_persona_folder(root) and (root / _QUESTIONS).is_file()):
        return None
    return M3ExamReviewSource(root)


class M3ExamReviewSource:
    """The questions of a persona folder, for review and export (module doc)."""

    benchmark = BENCHMARK

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- items ---------------------------------------------------------------------------------

    def items(self) -> list[ReviewItem]:
        rounds = _rounds(self.root)
        sessions = _session_records(rounds)
        edits = _qc_edits(self.root)
        return [_item(self.root, f"q{index}", raw, rounds, sessions, edits)
                for index, raw in self._questions()]

    def _questions(self) -> list[tuple[int, dict[str, Any]]]:
        """(index, record) per question of ``question.json`` that is a record."""
        return [(index, raw) for index, raw in enumerate(read_list(self.root / _QUESTIONS))
                if isinstance(raw, dict)]

    # -- export --------------------------------------------------------------------------------

    def check_edit(self, item_id: str, edit: ItemEdit) -> str | None:
        raw = dict(self._questions()).get(int(item_id[1:])) if item_id[1:].isdigit() else None
        if raw is None:
            return f"no item {item_id!r}"
        try:
            _edited(item_id, raw, edit)
        except SchemaError as exc:
            return exc.reason
        return None

    def export(self, decisions: dict[str, ReviewDecision], out: Path) -> ExportResult:
        """Write ``OUT/<persona>/`` with the accepted questions, edited (``out`` new, empty,
        or an earlier export, replaced whole), read back with ``load_m3exam``."""
        out = Path(out)
        questions = self._questions()
        verdicts = {f"q{index}": verdict_of(decisions, f"q{index}") for index, _ in questions}
        kept = [_edited(f"q{index}", raw, decisions[f"q{index}"].edit)
                for index, raw in questions if verdicts[f"q{index}"] == "accepted"]
        rejected = sum(v == "rejected" for v in verdicts.values())
        with folder_replaced(out, earlier=EXPORT_RECORD) as temp:
            persona = temp / self.root.resolve().name
            persona.mkdir()
            atomic_write_text(persona / _QUESTIONS,
                              json.dumps(kept, indent=2, ensure_ascii=False) + "\n")
            for path in (self.root / _SESSIONS, *sorted(self.root.glob("timeline*.json"))):
                shutil.copy2(path, persona / path.name)
            for folder in _MEDIA_FOLDERS:
                if (self.root / folder).is_dir():
                    (persona / folder).symlink_to((self.root / folder).resolve(),
                                                  target_is_directory=True)
        loaded, skipped = _read_back(out)
        result = ExportResult(out=str(out), benchmark=self.benchmark, exported=len(kept),
                              rejected=rejected,
                              pending=len(questions) - len(kept) - rejected,
                              loaded=loaded, skipped=skipped)
        atomic_write_text(out / EXPORT_RECORD, result.model_dump_json(indent=1))
        return result


# -- reading the folder ---------------------------------------------------------------------------


def _rounds(root: Path) -> dict[str, _Round]:
    """Every round of ``sessions.json`` by id (the first of a duplicated id)."""
    out: dict[str, _Round] = {}
    for session in read_list(root / _SESSIONS):
        if not isinstance(session, dict) or not isinstance(session.get("dialogues"), list):
            continue
        sid, date = str(session.get("session_id") or ""), str(session.get("date") or "")
        for raw in session["dialogues"]:
            if isinstance(raw, dict) and raw.get("round"):
                out.setdefault(str(raw["round"]), _Round(session_id=sid, date=date, raw=raw))
    return out


def _session_records(rounds: dict[str, _Round]) -> dict[str, SessionRecord]:
    """The sessions as the synthesis's records, for re-running its type rules; a session
    that does not fit them (a hand-made folder) is left out, and its questions say so."""
    grouped: dict[str, list[_Round]] = {}
    for rnd in rounds.values():
        grouped.setdefault(rnd.session_id, []).append(rnd)
    out = {}
    for sid, members in grouped.items():
        try:
            out[sid] = SessionRecord.model_validate({
                "session_id": sid, "date": members[0].date,
                "dialogues": [_round_record(r.raw) for r in members]})
        except (ValidationError, ValueError, TypeError):
            continue
    return out


def _round_record(raw: dict[str, Any]) -> RoundRecord:
    """A released round as the synthesis's record (one description string per image list,
    as most released rounds have it, is kept as a one-element list)."""
    descriptions = raw.get("img_description")
    return RoundRecord(
        round=str(raw.get("round") or ""), user=str(raw.get("user") or ""),
        assistant=str(raw.get("assistant") or ""),
        img_file=[str(f) for f in as_list(raw.get("img_file"))],
        img_id=[int(i) for i in as_list(raw.get("img_id"))],
        img_description=[str(d) for d in as_list(descriptions)],
        pdf_file=[str(p) for p in as_list(raw.get("pdf_file")) if isinstance(p, str)])


def _qc_edits(root: Path) -> list[QCEdit]:
    """The synthesis's documented dialogue edits (none for a folder it did not make)."""
    path = root / WORK / "dialogue_qc.json"
    try:
        raws = json.loads(path.read_text(encoding="utf-8"))
        return [QCEdit(**raw) for raw in raws]
    except (OSError, ValueError, TypeError):
        return []


# -- one item -------------------------------------------------------------------------------------


def _item(root: Path, item_id: str, raw: dict[str, Any], rounds: dict[str, _Round],
          sessions: dict[str, SessionRecord], edits: list[QCEdit]) -> ReviewItem:
    answers = [a for a in (answer_text(x) for x in as_list(raw.get("answer"))) if a]
    label = answer_text(raw.get("label"))
    facts_ids, _ = parse_evidence(raw.get("supporting_facts"))
    qtype = str(raw.get("type") or "")
    cited = [rounds[r] for r in facts_ids if r in rounds]
    media = [m for rnd in cited for m in _round_media(root, rnd)]
    if qtype == "fm":
        media += _candidate_images(root, answers, rounds, {m.path for m in media})
    facts = [("type", f"{qtype}: {_type_name(qtype)}"),
             ("supporting facts", ", ".join(facts_ids) or "none"),
             ("sessions", ", ".join(dict.fromkeys(f"{r.session_id} ({r.date})"
                                                  for r in cited)) or "none")]
    if label and answers and label != answers[0]:
        facts.append(("label", label))
    if len(answers) > 1:
        facts.append(("other answers", " | ".join(answers[1:])))
    return ReviewItem(
        id=item_id,
        group=root.resolve().name,
        question=str(raw.get("question") or ""),
        answer=answers[0] if answers else (label or ""),
        media=tuple(media),
        evidence=tuple(_round_text(rounds[r]) if r in rounds else f"{r}: not in {_SESSIONS}"
                       for r in facts_ids),
        checks=tuple(_checks(raw, qtype, facts_ids, rounds, sessions, edits)),
        facts=tuple(facts),
    )


def _type_name(qtype: str) -> str:
    instruction = QUESTION_INSTRUCTIONS.get(qtype)
    return instruction.split(":", 1)[0] if instruction else "unknown type"


def _round_text(rnd: _Round) -> str:
    lines = [f"{rnd.id} (session {rnd.session_id}, {rnd.date})",
             f"User: {rnd.raw.get('user') or ''}", f"Assistant: {rnd.raw.get('assistant') or ''}"]
    ids = as_list(rnd.raw.get("img_id"))
    files = as_list(rnd.raw.get("img_file"))
    if files:
        lines.append("Images: " + ", ".join(
            f"img_{ids[i]}" if i < len(ids) else str(name) for i, name in enumerate(files)))
    descriptions = rnd.raw.get("img_description")
    if descriptions:
        lines.append("Image description: " + " / ".join(map(str, as_list(descriptions))))
    if rnd.raw.get("pdf_file"):
        lines.append("Documents: " + ", ".join(map(str, as_list(rnd.raw.get("pdf_file")))))
    return "\n".join(lines)


def _round_media(root: Path, rnd: _Round) -> list[ReviewMedia]:
    """The round's images and PDF pages that lie in the persona's folders, as the loader
    resolves them (a path it refuses, or a missing file, is not shown)."""
    out = []
    files = as_list(rnd.raw.get("img_file"))
    ids = as_list(rnd.raw.get("img_id"))
    descriptions = rnd.raw.get("img_description")
    per_image = isinstance(descriptions, list) and len(descriptions) == len(files)
    for i, name in enumerate(files):
        rel = _media_path(root, "images", name)
        if rel is None:
            continue
        what = f"img_{ids[i]}" if i < len(ids) else str(name)
        about = f": {descriptions[i]}" if per_image and isinstance(descriptions, list) else ""
        out.append(ReviewMedia(kind="image", path=rel, label=f"{rnd.id} {what}{about}"))
    for entry in as_list(rnd.raw.get("pdf_file")):
        out += _pdf_pages(root, rnd.id, entry)
    return out


def _media_path(root: Path, folder: str, name: object) -> str | None:
    """``<folder>/<name>`` when it names a file inside the persona's ``folder``; else None."""
    try:
        path = resolve_in_root(root / folder, name, root_name=f"the persona's {folder}/ folder")
    except M3kitError:
        return None
    if not path.is_file():
        return None
    return f"{folder}/{path.relative_to((root / folder).resolve()).as_posix()}"


def _pdf_pages(root: Path, round_id: str, entry: object) -> list[ReviewMedia]:
    """The pages a ``pdf_file`` entry names (``name.pdf#3``, ``{"file", "page"}``: one 1-based
    page; a bare name: every page), 0-based as ``ReviewMedia`` counts them."""
    from m3kit.media.pdf import pdf_page_count  # deferred: only folders with documents

    page: int | None = None
    if isinstance(entry, dict):
        name = str(entry.get("file") or entry.get("pdf_file") or "")
        given = str(entry.get("page") or "").strip()
        page = int(given) if given.isdigit() else None
    else:
        name, _, fragment = str(entry).partition("#")
        digits = re.sub(r"\D", "", fragment)
        page = int(digits) if digits else None
    rel = _media_path(root, "pdfs", name)
    if rel is None or (page is not None and page < 1):
        return []
    if page is not None:
        pages = [page - 1]
    else:
        try:
            pages = list(range(pdf_page_count(root / rel)))
        except MediaError:
            return []
    return [ReviewMedia(kind="pdf_page", path=rel, page=p,
                        label=f"{round_id} {Path(rel).name} page {p + 1}") for p in pages]


def _candidate_images(root: Path, answers: list[str], rounds: dict[str, _Round],
                      shown: set[str]) -> list[ReviewMedia]:
    """The images a find-the-image answer names (gold first), wherever they are attached."""
    by_id: dict[int, tuple[str, object]] = {}
    for rnd in rounds.values():
        for image_id, name in zip(as_list(rnd.raw.get("img_id")),
                                  as_list(rnd.raw.get("img_file")), strict=False):
            if isinstance(image_id, int):
                by_id.setdefault(image_id, (rnd.id, name))
    out = []
    for position, answer in enumerate(answers):
        match = _IMG.match(answer.strip().lower())
        if match is None or int(match.group(1)) not in by_id:
            continue
        round_id, name = by_id[int(match.group(1))]
        rel = _media_path(root, "images", name)
        if rel is None or rel in shown:
            continue
        shown.add(rel)
        role = "the gold image" if position == 0 else "a competing candidate"
        out.append(ReviewMedia(kind="image", path=rel,
                               label=f"img_{match.group(1)} ({role}, attached to {round_id})"))
    return out


def _checks(raw: dict[str, Any], qtype: str, facts_ids: list[str], rounds: dict[str, _Round],
            sessions: dict[str, SessionRecord], edits: list[QCEdit]) -> list[ReviewCheck]:
    missing = [r for r in facts_ids if r not in rounds]
    checks = [ReviewCheck(
        name="supporting rounds", passed=bool(facts_ids) and not missing,
        rationale=(f"not in {_SESSIONS}: {', '.join(missing)}" if missing
                   else "no supporting facts" if not facts_ids
                   else f"{len(facts_ids)} round(s) cited, all in {_SESSIONS}"))]
    checks.append(_type_check(raw, qtype, facts_ids, rounds, sessions))
    cited = set(facts_ids)
    checks += [ReviewCheck(name=f"QC edit ({edit.stage}, {edit.target})",
                           rationale=f"{edit.category}: {edit.problem}. Before: {edit.before} "
                                     f"After: {edit.after}")
               for edit in edits if edit.target in cited]
    return checks


def _type_check(raw: dict[str, Any], qtype: str, facts_ids: list[str],
                rounds: dict[str, _Round], sessions: dict[str, SessionRecord]) -> ReviewCheck:
    """The synthesis's rule for the question's type, over the whole sessions it cites."""
    name = f"type rule ({qtype})"
    kind = next((t for t in QUESTION_TYPES if t == qtype), None)
    if kind is None:
        return ReviewCheck(name=name, passed=False, rationale=f"unknown type {qtype!r}")
    cited_sessions = list(dict.fromkeys(rounds[r].session_id for r in facts_ids if r in rounds))
    if any(s not in sessions for s in cited_sessions):
        return ReviewCheck(name=name, rationale="not re-checked: a cited session does not fit "
                                                "the synthesis's records")
    window = Window("review", kind,
                    tuple((sessions[s], tuple(sessions[s].dialogues)) for s in cited_sessions))
    try:
        draft = QuestionDraft(question=str(raw.get("question") or ""),
                              answer=[str(a) for a in as_list(raw.get("answer"))],
                              supporting_facts=facts_ids)
        validate_item(draft, window)
    except ValidationError as exc:
        return ReviewCheck(name=name, passed=False, rationale=exc.errors()[0]["msg"])
    except ValueError as exc:
        return ReviewCheck(name=name, passed=False, rationale=str(exc))
    return ReviewCheck(name=name, passed=True, rationale=QUESTION_INSTRUCTIONS[kind])


# -- the export -----------------------------------------------------------------------------------


def _edited(item_id: str, raw: dict[str, Any], edit: ItemEdit) -> dict[str, Any]:
    """The question record with the reviewer's edits: its text, and its gold (the first
    answer; the label follows it where it was the gold)."""
    if edit.options:
        raise SchemaError("an M3Exam question has no options to edit", record=item_id,
                          field="options")
    out = dict(raw)
    if edit.question is not None:
        out["question"] = edit.question
    if edit.answer is not None:
        answers = as_list(raw.get("answer"))
        old = answers[0] if answers else None
        out["answer"] = [edit.answer, *answers[1:]]
        if raw.get("label") is None or raw.get("label") == old:
            out["label"] = edit.answer
    return out


def _read_back(out: Path) -> tuple[int, list[SkippedRecord]]:
    """What ``load_m3exam`` makes of the export: questions loaded and records skipped (an
    export with no accepted question is refused whole: that refusal is its skip)."""
    try:
        loaded = load_m3exam(out)
    except M3kitError as exc:
        return 0, [SkippedRecord.from_error(exc)]
    return len(loaded.questions), list(loaded.skipped)
