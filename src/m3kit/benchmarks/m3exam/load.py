"""M3Exam persona folders (released format) → ``Conversation`` + ``Question`` records.

A persona folder holds ``sessions.json`` (a list of ``{session_id, date, dialogues: [{round,
user, assistant, img_file[], img_id[], img_description, pdf_file[], is_followup,
followup_of}]}``), ``question.json`` (a list of ``{question, answer: [gold, coarser...], label,
supporting_facts "D2:1,D12:1", type}``), ``images/`` and ``pdfs/``.

Loading is lenient: a record that cannot be used is skipped and reported in
``M3ExamData.skipped`` (naming file, record and field); a referenced image or PDF that is
missing is reported and its round keeps its text. Only a folder with nothing loadable raises.
``img_file`` names a file in ``images/``, ``pdf_file`` one in ``pdfs/``, each resolved by
``m3kit.paths.resolve_in_root``: an absolute path, ``..`` climbing out, a symbolic link pointing
out of the folder, or a NUL byte is refused like a missing file (the round keeps its text), so
a crafted persona cannot have any other file on the machine sent to a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from m3kit.errors import M3kitError, MediaError, SchemaError, UnsafePathError
from m3kit.paths import resolve_in_root
from m3kit.schema import Attachment, Conversation, ImageRef, PdfPageRef, Question, Round, Session
from m3kit.schema import SkippedRecord as Skipped
from m3kit.schema.evallog import round_of

__all__ = [
    "QUESTION_TYPES",
    "M3ExamData",
    "QuestionType",
    "answer_text",
    "data_files",
    "data_media",
    "evidence_session",
    "is_persona_folder",
    "load_data",
    "load_m3exam",
    "load_m3exam_persona",
    "media_files",
    "parse_evidence",
    "persona_files",
    "split_supporting_facts",
]

# The eight released question types (paper §2.3, Appendix A.3), in the paper's column order.
QuestionType = Literal["ss", "ms", "tr", "mr", "fm", "fj", "th", "ii"]
QUESTION_TYPES: tuple[QuestionType, ...] = get_args(QuestionType)

_SESSIONS = "sessions.json"
_QUESTIONS = "question.json"
# A round id as released: "D<session>:<round>". LoCoMo's file also carries "D:11:26" (a stray
# colon) and "D30:05" (a leading zero); both name a real turn and are read as "D11:26", "D30:5".
_ROUND_ID = re.compile(r"^D:?(\d+):(\d+)$")
# A round of one of the release's PDF sessions, as follow-up links name it: "P<n>:<m>".
_PDF_SESSION_ROUND = re.compile(r"^P(\d+):(\d+)$")


class M3ExamData(BaseModel):
    """Conversations by persona, the questions over them, and what loading skipped."""

    model_config = ConfigDict(frozen=True)

    conversations: dict[str, Conversation] = Field(default_factory=dict)
    questions: list[Question] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)

    def conversation_of(self, question: Question) -> Conversation:
        """The conversation a question is asked over (``metadata["persona"]``)."""
        return self.conversations[question.metadata["persona"]]

    def question(self, question_id: str) -> Question:
        """The question with this id; ``KeyError`` if there is none."""
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(f"no question {question_id!r}")


def split_supporting_facts(raw: Any) -> list[str]:
    """``"D2:1,D12:1"`` (or a list of such) → ``["D2:1", "D12:1"]``.

    Separators seen in released files vary (commas, semicolons, spaces: LoCoMo has
    ``"D8:6; D9:17"`` and ``"D9:1 D4:4 D4:6"`` in one entry), so any of them splits.
    """
    parts = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for part in parts:
        if part is None:
            continue
        out.extend(p for p in re.split(r"[,;\s]+", str(part)) if p)
    return out


def parse_evidence(raw: Any) -> tuple[list[str], list[str]]:
    """Supporting-fact round ids (split as ``split_supporting_facts``, normalised, each once,
    in order) and the tokens that name no round (LoCoMo's bare ``"D"``), for the caller to
    report rather than drop silently."""
    ids: list[str] = []
    malformed: list[str] = []
    for token in split_supporting_facts(raw):
        m = _ROUND_ID.match(token)
        if m is None:
            malformed.append(token)
            continue
        rid = f"D{int(m.group(1))}:{int(m.group(2))}"
        if rid not in ids:
            ids.append(rid)
    return ids, malformed


def retrieved_rounds(item_ids: Iterable[str]) -> list[str]:
    """A memory's ranking read as the rounds recall is counted on: an attachment (an image, a
    PDF page) is its round (``round_of``), an entry that is no round (a session summary, a
    round summary) takes no slot. Repeats stay: ``metrics.retrieval`` counts a round once, at
    its best rank (docs/benchmarks.md states the rule)."""
    return [r for r in map(round_of, item_ids) if _ROUND_ID.match(r)]


def evidence_session(question: Question) -> str | None:
    """``<persona>/D<session>``: the session holding the question's first supporting-fact
    round, the unit M3Exam's confidence intervals resample (questions on one session's content
    are not independent); None when the question names no round."""
    for round_id in question.evidence:
        m = _ROUND_ID.match(round_id)
        if m is not None:
            return f"{question.metadata.get('persona', '')}/D{int(m.group(1))}"
    return None


def is_persona_folder(path: Path) -> bool:
    """Whether ``path`` is one M3Exam persona folder (it holds ``sessions.json``)."""
    return (path / _SESSIONS).is_file()


def persona_files(folder: Path) -> list[Path]:
    """The question files of one persona folder, in load order: ``sessions.json``,
    ``question.json`` and its ``timeline*.json``."""
    files = [folder / _SESSIONS, folder / _QUESTIONS, *sorted(folder.glob("timeline*.json"))]
    return [f for f in files if f.is_file()]


def data_files(path: str | Path) -> list[Path]:
    """The files M3Exam-shaped data at ``path`` is read from, in load order: a file itself
    (LoCoMo's ``locomo10.json``), a persona folder's files, each persona sub-folder's, or the
    ``locomo*.json`` of a folder (the first, as ``load_locomo`` reads it). The data set's
    fingerprint (``m3kit.schema.card.files_fingerprint``) is taken over these."""
    root = Path(path).expanduser().resolve()
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    if is_persona_folder(root):
        return persona_files(root)
    folders = sorted(p for p in root.iterdir() if p.is_dir() and is_persona_folder(p))
    if folders:
        return [f for folder in folders for f in persona_files(folder)]
    return sorted(root.glob("locomo*.json"))[:1]


def media_files(data: M3ExamData) -> list[Path]:
    """The local files the samples of ``data`` read besides its question files: the images
    and PDFs attached to its rounds (conversation by conversation, in order), then those of
    its questions, each once; web links and inline images are not files (their text is in the
    question files). The data set's fingerprint covers them
    (``m3kit.harness.card.data_fingerprint``)."""
    refs = [attachment.media for conv in data.conversations.values()
            for session in conv.sessions for rnd in session.rounds
            for attachment in rnd.attachments]
    refs += [ref for question in data.questions for ref in question.media]
    found = (Path(ref.path) for ref in refs
             if not (isinstance(ref, ImageRef) and (ref.remote or ref.inline)))
    return list(dict.fromkeys(found))


def data_media(path: str | Path) -> list[Path]:
    """``media_files`` of the data at ``path``, loaded as ``m3kit score m3exam`` loads it
    (M3Exam persona folders or LoCoMo): its card's fingerprint."""
    return media_files(load_data(Path(path)))


def load_data(path: Path) -> M3ExamData:
    """M3Exam persona folder(s), or LoCoMo when ``path`` is (or holds) ``locomo*.json``."""
    from m3kit.benchmarks.m3exam.locomo import load_locomo  # locomo builds on this module

    if path.is_file() or (
        path.is_dir() and not is_persona_folder(path) and any(path.glob("locomo*.json"))
    ):
        return load_locomo(path)
    return load_m3exam(path)


def load_m3exam(path: str | Path) -> M3ExamData:
    """Load one persona folder, or a folder whose sub-folders are persona folders."""
    root = Path(path).expanduser().resolve()
    if not root.exists():
        raise M3kitError("no such file or directory", path=root)
    if is_persona_folder(root):
        folders = [root]
    else:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and is_persona_folder(p))
        if not folders:
            raise SchemaError(
                f"not an M3Exam persona folder (no {_SESSIONS}) and holds none", path=root
            )
    conversations: dict[str, Conversation] = {}
    questions: list[Question] = []
    skipped: list[Skipped] = []
    for folder in folders:
        try:
            conv, qs, issues = load_m3exam_persona(folder)
        except M3kitError as exc:
            # One unreadable persona does not stop the others.
            skipped.append(Skipped.from_error(exc))
            continue
        conversations[conv.id] = conv
        questions.extend(qs)
        skipped.extend(issues)
    return loaded_or_raise(conversations, questions, skipped, root, "persona")


def loaded_or_raise(
    conversations: dict[str, Conversation],
    questions: list[Question],
    skipped: list[Skipped],
    source: Path,
    unit: str,
) -> M3ExamData:
    """The loaded data, or a ``SchemaError`` naming the first reasons when nothing loaded
    (no conversation, or no question to score)."""
    if not conversations:
        reasons = "; ".join(str(s) for s in skipped[:3])
        raise SchemaError(f"no {unit} could be loaded ({reasons})", path=source)
    if not questions:
        reasons = "; ".join(str(s) for s in skipped[:3]) or "none in the file"
        raise SchemaError(f"no question could be loaded ({reasons})", path=source)
    return M3ExamData(conversations=conversations, questions=questions, skipped=skipped)


def load_m3exam_persona(folder: str | Path) -> tuple[Conversation, list[Question], list[Skipped]]:
    """Load one persona folder; raises when ``sessions.json`` or ``question.json`` is unusable
    as a whole (missing, not JSON, not a list)."""
    folder = Path(folder).expanduser().resolve()
    persona = folder.name
    issues: list[Skipped] = []
    sessions = _load_sessions(folder, persona, issues)
    user = persona.split("_", 1)[0] or persona
    metadata: dict[str, Any] = {"persona": persona, "folder": str(folder)}
    for timeline in sorted(folder.glob("timeline*.json")):
        metadata["timeline"] = str(timeline)
    try:
        conv = Conversation(
            id=persona, speakers=[user, "assistant"], sessions=sessions, metadata=metadata
        )
    except ValidationError as exc:
        raise pydantic_error(folder / _SESSIONS, None, exc) from exc
    questions = _load_questions(folder, persona, conv, issues)
    return conv, questions, issues


# --------------------------------------------------------------------------- shared reading


def read_list(path: Path) -> list[Any]:
    """A JSON file that must hold a list; any other content is a ``SchemaError``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SchemaError("file not found", path=path) from exc
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path=path
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read file: {exc}", path=path) from exc
    if not isinstance(data, list):
        raise SchemaError(f"expected a JSON list, got {type(data).__name__}", path=path)
    return data


def checked_turn(
    path: Path,
    where: str,
    raw: Any,
    keys: tuple[str, str],
    seen: set[str],
    issues: list[Skipped],
    prefix: str = "",
) -> tuple[str, str] | None:
    """A released turn's id and text, or ``None`` after reporting why the turn is skipped.

    ``keys`` names the id and text fields (``("round", "user")`` in M3Exam, ``("dia_id",
    "text")`` in LoCoMo); an id already in ``seen`` is a duplicate. ``prefix`` goes before the
    id in the reported record (LoCoMo ids repeat across samples).
    """
    id_key, text_key = keys
    if not isinstance(raw, dict):
        issues.append(Skipped.at(path, where, "turn skipped: not a record"))
        return None
    rid = raw.get(id_key)
    if not isinstance(rid, str) or not rid:
        issues.append(Skipped.at(path, where, "turn skipped: no id", id_key))
        return None
    if rid in seen:
        issues.append(Skipped.at(path, prefix + rid, "turn skipped: duplicate id", id_key))
        return None
    text = raw.get(text_key)
    if not isinstance(text, str):
        issues.append(Skipped.at(path, prefix + rid, "turn skipped: no text", text_key))
        return None
    return rid, text


def check_evidence(
    path: Path,
    question: Question,
    malformed: list[str],
    known: set[str],
    issues: list[Skipped],
    field: str = "evidence",
) -> None:
    """Report supporting-fact tokens that name no round, or rounds not in the conversation.

    The question is kept either way: its answer does not depend on them, but oracle regimes
    and retrieval recall will miss those rounds.
    """
    if malformed:
        issues.append(
            Skipped.at(path, question.id, f"evidence tokens naming no round dropped: "
                       f"{', '.join(map(repr, malformed))} (question kept)", field)
        )  # fmt: skip
    unknown = [r for r in question.evidence if r not in known]
    if unknown:
        issues.append(
            Skipped.at(path, question.id, f"names rounds not in the conversation: "
                       f"{', '.join(unknown)} (question kept)", field)
        )  # fmt: skip


def answer_text(value: Any) -> str | None:
    """A released answer as text: a string as is, a number written out (``2023``, ``63.5``);
    ``None`` for anything else (an object, a list, a boolean), which the caller reports rather
    than score against its Python spelling."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def as_list(value: Any) -> list[Any]:
    """``None`` → ``[]``, a list as is, anything else → ``[value]`` (released files hold
    ``img_url``, ``pdf_file`` and answers both as lists and as single values)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def pydantic_error(path: Path, record: str | None, exc: ValidationError) -> SchemaError:
    """The first validation problem as a ``SchemaError`` naming file, record and field."""
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    ctx = first.get("ctx", {}).get("error")
    reason = str(ctx) if first["type"] == "value_error" and ctx else first["msg"]
    return SchemaError(reason, path=path, record=record, field=field)


# --------------------------------------------------------------------------- sessions


def _load_sessions(folder: Path, persona: str, issues: list[Skipped]) -> list[Session]:
    path = folder / _SESSIONS
    raw_sessions = read_list(path)
    user = persona.split("_", 1)[0] or persona
    sessions: list[Session] = []
    session_ids: set[str] = set()
    round_ids: set[str] = set()
    pdf_sessions = _pdf_sessions(raw_sessions)
    for si, raw in enumerate(raw_sessions):
        sid = raw.get("session_id") if isinstance(raw, dict) else None
        problem = (
            "no session_id" if not isinstance(sid, str | int)
            else "duplicate session id" if str(sid) in session_ids
            else "dialogues is not a list" if not isinstance(raw.get("dialogues"), list)
            else None
        )  # fmt: skip
        if problem is not None:
            field = "dialogues" if problem.startswith("dialogues") else "session_id"
            where = si if problem == "no session_id" else sid
            issues.append(Skipped.at(path, where, f"session skipped: {problem}", field))
            continue
        sid = str(sid)
        rounds: list[Round] = []
        for di, d in enumerate(raw["dialogues"]):
            rnd = _load_round(folder, path, f"{sid} dialogue {di}", d, user, round_ids, issues,
                              pdf_sessions)
            if rnd is not None:
                rounds.append(rnd)
                round_ids.add(rnd.id)
        date = raw.get("date")
        try:
            sessions.append(
                Session(id=sid, date=str(date) if date is not None else None, rounds=rounds)
            )
        except ValidationError as exc:
            issues.append(Skipped.from_error(pydantic_error(path, sid, exc)))
            continue
        session_ids.add(sid)
    return sessions


def _load_round(
    folder: Path,
    path: Path,
    where: str,
    d: Any,
    user: str,
    earlier: set[str],
    issues: list[Skipped],
    pdf_sessions: Sequence[str] = (),
) -> Round | None:
    turn = checked_turn(path, where, d, ("round", "user"), earlier, issues)
    if turn is None:
        return None
    rid, text = turn
    response = d.get("assistant")
    attachments, together = _image_attachments(folder, path, rid, d, issues)
    attachments += _pdf_attachments(folder, path, rid, d, issues)

    is_followup = bool(d.get("is_followup", False))
    followup_of = d.get("followup_of")
    followup_of = str(followup_of) if followup_of not in (None, "", False) else None
    if followup_of is not None and _PDF_SESSION_ROUND.match(followup_of):
        followup_of, why = _pdf_link(followup_of, pdf_sessions, earlier)
        if why is not None:
            issues.append(Skipped.at(path, rid, why, "followup_of"))
    if followup_of is not None and followup_of not in earlier:
        # The schema requires a follow-up to point back; a dangling link is dropped, the
        # round is kept.
        issues.append(
            Skipped.at(path, rid, f"follow-up link to {followup_of!r} dropped: not an earlier "
                       "round", "followup_of")
        )  # fmt: skip
        followup_of = None
    if followup_of is not None:
        is_followup = True
    return Round(
        id=rid,
        speaker=user,
        text=text,
        response=response if isinstance(response, str) else None,
        attachments=attachments,
        attachments_description=together,
        is_followup=is_followup,
        followup_of=followup_of,
    )


def _pdf_sessions(raw_sessions: Sequence[Any]) -> list[str]:
    """The ids of the sessions that carry a PDF (a round with a ``pdf_file``), in file order:
    the sessions ``P<n>`` numbers, first = 1."""
    return [str(raw["session_id"]) for raw in raw_sessions
            if isinstance(raw, dict) and isinstance(raw.get("dialogues"), list)
            and raw.get("session_id") is not None
            and any(isinstance(d, dict) and as_list(d.get("pdf_file")) for d in raw["dialogues"])]


def _pdf_link(link: str, pdf_sessions: Sequence[str], earlier: set[str]
              ) -> tuple[str | None, str | None]:
    """A follow-up link ``P<n>:<m>`` read as round (m + 1) / 2 of the n-th PDF session (the
    release numbers a PDF session's utterances, user then assistant, from 1: utterance m is the
    user's turn of that round when m is odd). On the one released persona with such links,
    every link read so points at the round just before its follow-up. (the round id, None),
    or (None, why) when the rule does not resolve it to an earlier round."""
    found = _PDF_SESSION_ROUND.match(link)
    if found is None:
        return None, f"follow-up link to {link!r} dropped: not of the form P<n>:<m>"
    n, m = int(found.group(1)), int(found.group(2))
    if not 1 <= n <= len(pdf_sessions):
        return None, (f"follow-up link to {link!r} dropped: the persona has "
                      f"{len(pdf_sessions)} PDF session(s), not {n}")
    if m % 2 == 0:
        return None, (f"follow-up link to {link!r} dropped: utterance {m} is an assistant "
                      "turn, not a round's start")
    target = f"{pdf_sessions[n - 1]}:{(m + 1) // 2}"
    if target not in earlier:
        return None, (f"follow-up link to {link!r} dropped: read as {target}, which is not an "
                      "earlier round")
    return target, None


def _missing(path: Path, rid: str, field: str, what: str) -> Skipped:
    return Skipped.at(path, rid, f"{what}; round kept without it", field)


def _image_attachments(
    folder: Path, path: Path, rid: str, d: dict[str, Any], issues: list[Skipped]
) -> tuple[list[Attachment], str | None]:
    files = as_list(d.get("img_file"))
    ids = as_list(d.get("img_id"))
    descriptions = d.get("img_description")
    # One description per image, or (in most released rounds with images: 23 of 30 in
    # Alex_Veterinarian) one string describing the images together: that goes to the round,
    # never guessed per image.
    per_item = isinstance(descriptions, list) and len(descriptions) == len(files)
    together: str | None = None
    if descriptions and not per_item:
        together = (
            descriptions if isinstance(descriptions, str) else "\n".join(map(str, descriptions))
        )
    if ids and len(ids) != len(files):
        issues.append(Skipped.at(path, rid, f"{len(ids)} ids for {len(files)} files; ids taken "
                                 "from file names", "img_id"))  # fmt: skip
        ids = []
    attachments: list[Attachment] = []
    images = folder / "images"
    for i, name in enumerate(files):
        try:
            image = resolve_in_root(images, name, path=path, record=rid, field="img_file",
                                    root_name="the persona's images/ folder")
        except UnsafePathError as exc:
            issues.append(_missing(path, rid, "img_file", f"image refused: {exc.reason}"))
            continue
        if not image.is_file():
            issues.append(_missing(path, rid, "img_file", f"image {name!r} not found in {images}"))
            continue
        img_id = str(ids[i] if ids else Path(name).stem.removeprefix("img_"))
        description = descriptions[i] if per_item and isinstance(descriptions, list) else None
        attachments.append(
            Attachment(
                media=ImageRef(path=str(image)),
                description=str(description) if description is not None else None,
                id=img_id if img_id.startswith("img_") else f"img_{img_id}",
            )
        )
    return attachments, together


def _pdf_attachments(
    folder: Path, path: Path, rid: str, d: dict[str, Any], issues: list[Skipped]
) -> list[Attachment]:
    attachments: list[Attachment] = []
    pdfs = folder / "pdfs"
    for entry in as_list(d.get("pdf_file")):
        # An entry names a file in pdfs/; "doc.pdf#3" or {"file", "page"} name one page
        # (1-based, as people number pages), a bare name means every page.
        page: int | None = None
        if isinstance(entry, dict):
            name = entry.get("file") or entry.get("pdf_file") or ""
            raw_page = entry.get("page")
            if raw_page is not None:
                page = _page_number(raw_page)
                if page is None:
                    issues.append(_missing(path, rid, "pdf_file.page",
                                           f"PDF page {raw_page!r} is not a page number"))
                    continue
        elif isinstance(entry, str):
            name = entry
            if "#" in name:
                name, _, frag = name.partition("#")
                digits = re.sub(r"\D", "", frag)
                page = int(digits) if digits else None
        else:
            issues.append(_missing(path, rid, "pdf_file", f"PDF entry {entry!r} is neither a "
                                   "file name nor {\"file\", \"page\"}"))
            continue
        try:
            pdf = resolve_in_root(pdfs, name, path=path, record=rid, field="pdf_file",
                                  root_name="the persona's pdfs/ folder")
        except UnsafePathError as exc:
            issues.append(_missing(path, rid, "pdf_file", f"PDF refused: {exc.reason}"))
            continue
        if not pdf.is_file():
            issues.append(_missing(path, rid, "pdf_file", f"PDF {name!r} not found in {pdfs}"))
            continue
        if page is not None and page < 1:
            issues.append(_missing(path, rid, "pdf_file", f"PDF page {page} of {name!r} is not "
                                   "a page number (pages count from 1)"))
            continue
        if page is not None:
            pages = [page - 1]
        else:
            count = _pdf_page_count(pdf)
            if count is None:
                issues.append(_missing(path, rid, "pdf_file", f"PDF {name!r} cannot be opened"))
                continue
            pages = list(range(count))
        for p in pages:
            attachments.append(
                Attachment(media=PdfPageRef(path=str(pdf), page=p), id=f"{name}#page={p + 1}")
            )
    return attachments


def _page_number(value: Any) -> int | None:
    """A released 1-based page number (``3`` or ``"3"``), or ``None`` when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _pdf_page_count(pdf: Path) -> int | None:
    """The PDF's page count, ``None`` when it is missing, damaged or not a PDF."""
    from m3kit.media.pdf import pdf_page_count  # deferred: only persona folders with PDFs

    try:
        return pdf_page_count(pdf)
    except MediaError:
        return None


# --------------------------------------------------------------------------- questions


def _load_questions(
    folder: Path, persona: str, conv: Conversation, issues: list[Skipped]
) -> list[Question]:
    path = folder / _QUESTIONS
    # An unreadable question.json is the persona's failure, not an empty persona: scoring
    # would otherwise go on over 0 of its items and look like a result.
    raw_questions = read_list(path)
    known = {r.id for r in conv.iter_rounds()}
    questions: list[Question] = []
    for index, raw in enumerate(raw_questions):
        qid = f"{persona}/{index}"
        loaded = _load_question(path, qid, index, raw, persona, issues)
        if loaded is None:
            continue
        question, malformed = loaded
        check_evidence(path, question, malformed, known, issues, "supporting_facts")
        questions.append(question)
    return questions


def _load_question(
    path: Path, qid: str, index: int, raw: Any, persona: str, issues: list[Skipped]
) -> tuple[Question, list[str]] | None:
    def skip(field: str | None, reason: str) -> None:
        issues.append(Skipped.at(path, qid, f"question skipped: {reason}", field))

    if not isinstance(raw, dict):
        skip(None, "not a record")
        return None
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip():
        skip("question", "no question text")
        return None
    given = [a for a in as_list(raw.get("answer")) if a is not None and a != ""]
    label = raw.get("label")
    label_text = None if label is None else answer_text(label)
    if label is not None and label_text is None:
        skip("label", f"label {label!r} is not text or a number")
        return None
    answers = [text for text in map(answer_text, given) if text is not None]
    if len(answers) < len(given):
        bad = next(a for a in given if answer_text(a) is None)
        skip("answer", f"answer {bad!r} is not text or a number")
        return None
    if not answers and label_text is not None:
        answers = [label_text]
    if not answers:
        skip("answer", "no answer")
        return None
    qtype = raw.get("type")
    if not isinstance(qtype, str) or not qtype:
        skip("type", "no question type")
        return None
    if qtype not in QUESTION_TYPES:
        skip("type", f"unknown question type {qtype!r} (known: {', '.join(QUESTION_TYPES)})")
        return None
    if raw.get("supporting_facts") in (None, "", []):
        issues.append(Skipped.at(path, qid, "no supporting_facts: oracle regimes and evidence "
                                 "recall have no round for it (question kept)",
                                 "supporting_facts"))  # fmt: skip
    evidence, malformed = parse_evidence(raw.get("supporting_facts"))
    try:
        question = Question(
            id=qid,
            benchmark="m3exam",
            text=text,
            answer=answers[0],
            alternatives=answers[1:],
            question_type=qtype,
            evidence=evidence,
            metadata={
                "persona": persona,
                "label": str(label) if label is not None else answers[0],
                "index": index,
            },
        )
    except ValidationError as exc:
        issues.append(Skipped.from_error(pydantic_error(path, qid, exc)))
        return None
    return question, malformed
