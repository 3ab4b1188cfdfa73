"""M3Eval's released layout → ``schema.Question`` records.

The released benchmark is one folder (``data/m3eval`` in the authors' harness)::

    qa_root/split_screen/*_qa.json          divided attention (JSON list of records)
    qa_root/memory_interference/*_qa.json   memory interference
    qa_root/interleaved/*_qa.json           interleaved events
    questions/nback_questions.jsonl         N-Back (one record a line)
    videos/...                              the probe videos, named by each record's ``video``

Multiple-choice records: ``id``, ``video``, ``question``, ``options`` (``"A. text"``), ``answer``
(a letter), and per paradigm ``paper_v4_metric_detail`` (``source_memory``,
``storyline_reconstruction``, ``false_source_attribution``), ``paper_v4_metric_group``
(``swap0``/``swap10``; ``proactive``/``retroactive``) or ``interference_direction``,
``storyline_error_type``, ``source_dimension``, ``option_role_by_letter`` and
``intrusion_option_letter``. N-Back records: ``question_id``, ``video``, ``question``,
``options`` (``Yes``/``No``), ``answer``, ``attribute``, ``n_value``, ``clip_count`` or
``k_value``.

Every question gets these metadata keys (the synthetic suite's tasks and ``score.py`` read the
same ones): ``paradigm``, ``question_type`` (the released detail; ``memory_interference`` and
``nback`` for those paradigms), ``measure`` (the table column the question counts in, see
``MEASURES``), ``error_type``, ``condition``, ``source_dimension``, for N-Back ``attribute``,
``n`` and ``k``, plus ``memory_key`` (the video), ``source_file`` and ``released`` (the record's
remaining released fields, verbatim).

A bad record is skipped and reported (``M3EvalSet.skipped``: file, record, field, reason); the
rest load. A video path is resolved by ``m3kit.paths.resolve_in_root``: an absolute path, ``..``
segments that climb out of the root, a NUL byte or another invalid path string, or a path that
leaves the root through a symbolic link (to the video file or to a folder on the way) is
refused: the root must hold its videos. Whether a video can be decoded is found
out at run time: such samples are excluded and counted, not failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from m3kit.errors import M3kitError, SchemaError, UnsafePathError
from m3kit.paths import relative_data_path, resolve_in_root
from m3kit.schema import (
    Choice,
    ChoiceRole,
    Question,
    SkippedRecord,
    VideoRef,
    iter_json_records,
    raw_problem,
)

__all__ = [
    "BENCHMARK_NAME",
    "MEASURES",
    "ID_KEYS",
    "M3EvalSet",
    "SkippedRecord",
    "data_files",
    "data_media",
    "load_m3eval",
    "measure_of",
    "media_files",
    "memory_key",
    "normalize_condition",
    "source_unit",
]

BENCHMARK_NAME = "m3eval"
QA_ROOT = "qa_root"
NBACK_FILE = PurePosixPath("questions") / "nback_questions.jsonl"
REVIEW_FILE = PurePosixPath("review") / "review.csv"
# Released folder → paradigm.
FOLDERS: dict[str, str] = {
    "split_screen": "divided_attention",
    "memory_interference": "interference",
    "interleaved": "interleaved",
}
# Table columns (``measure``), keyed by the released detail and storyline error type.
MEASURES: dict[tuple[str, str | None], str] = {
    ("storyline_reconstruction", "source_confusion"): "source_identification",
    ("storyline_reconstruction", "order_disruption"): "order_understanding",
    ("storyline_reconstruction", "content_forgetting"): "content_retention",
    ("source_memory", None): "source_memory",
    ("false_source_attribution", None): "false_memory_discrimination",
    ("memory_interference", None): "memory_interference",
    ("nback", None): "nback",
}
# The synthetic suite names its question types by column already.
_SYNTH_MEASURES = {"source_identification", "order_understanding", "content_retention",
                   "source_memory", "false_memory_discrimination", "memory_interference",
                   "nback"}
_OPTION = re.compile(r"^\s*([A-Z])[.)]\s+(.*)$", re.DOTALL)
# Fields that become the question itself; every other field is kept under ``released``.
_CORE_FIELDS = {"id", "question_id", "video", "question", "options", "answer"}


class M3EvalSet(BaseModel):
    """The questions of a released M3Eval folder, and what was skipped."""

    model_config = ConfigDict(frozen=True)

    root: Path
    questions: list[Question]
    skipped: list[SkippedRecord] = Field(default_factory=list)

    def select(self, paradigm: str | None = None, condition: str | None = None) -> list[Question]:
        """Questions of one paradigm (and condition), in file order."""
        return [q for q in self.questions
                if (paradigm is None or q.metadata.get("paradigm") == paradigm)
                and (condition is None or q.metadata.get("condition") == condition)]


def measure_of(metadata: dict[str, Any], question_type: str | None = None) -> str | None:
    """The table column a question counts in: ``source_identification``, ``order_understanding``,
    ``content_retention``, ``source_memory``, ``false_memory_discrimination``,
    ``memory_interference`` or ``nback``; from the released detail and error type, or the
    synthetic suite's question type."""
    if metadata.get("measure"):
        return str(metadata["measure"])
    qtype = str(metadata.get("question_type") or question_type or "")
    if qtype in _SYNTH_MEASURES:
        return qtype
    error = metadata.get("error_type")
    return MEASURES.get((qtype, error)) or MEASURES.get((qtype, None))


def memory_key(question: Question) -> str:
    """The memory a question is asked of, the probe video it shows: ``metadata["memory_key"]``,
    else its video paths. The questions of one probe are one unit of M3Eval's confidence
    intervals (they share the video, so their answers are not independent)."""
    key = question.metadata.get("memory_key")
    if key:
        return str(key)
    videos = [ref.path for ref in question.media if isinstance(ref, VideoRef)]
    return "|".join(videos) if videos else question.id


def source_unit(question: Question) -> str:
    """The source videos a question's probe is built from, the unit of M3Eval's confidence
    intervals: the probes of one pair of source videos (its swap and no-swap split screens,
    its proactive and retroactive sequences, its interleaved stream) show the same clips, so
    their answers are not independent, and a difference between two conditions is paired
    within the pair. ``pair:<id>`` from the synthetic suite's ``pair`` metadata or the
    ``pair_id`` a built release's records carry (``m3kit m3eval generate``; kept under
    ``released``); else the probe video (``memory_key``): the authors' release names no
    source clip in its records."""
    pair = question.metadata.get("pair")
    released = question.metadata.get("released")
    if not pair and isinstance(released, dict):
        pair = released.get("pair_id")
    if isinstance(pair, str | int) and not isinstance(pair, bool) and str(pair).strip():
        return f"pair:{str(pair).strip()}"
    return memory_key(question)


def normalize_condition(value: Any) -> str | None:
    """A condition label in m3kit's words: ``swap0`` / ``swap<N>``, ``proactive`` /
    ``retroactive``, ``repeat_target`` ([V1, V1, V2]) / ``repeat_interferer`` ([V1, V2, V2]);
    other labels are kept as given.

    The authors' release (PKU-VaLuE-Lab/m3eval, lmms-eval task ``m3eval_memory_interference``)
    labels only ``proactive`` / ``retroactive`` and ships no repetition probe; the repetition
    names are those m3kit's builder writes, plus the paper's bracket notation (Fig. 8)."""
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip()
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    if key in ("repeattarget", "v1v1v2"):
        return "repeat_target"
    if key in ("repeatinterferer", "v1v2v2"):
        return "repeat_interferer"
    if key == "noswap":
        return "swap0"
    return text


# -- reading ------------------------------------------------------------------------------------


def load_m3eval(root: str | Path, *, review: Path | None = None) -> M3EvalSet:
    """Every question under ``root`` in the released layout; bad records are skipped and
    reported. With ``review`` (or ``<root>/review/review.csv``), only questions whose review
    status is ``accepted`` are kept; the others are reported as skipped."""
    base = Path(root)
    if not base.is_dir():
        raise SchemaError("the M3Eval root is not a folder", path=base)
    questions: list[Question] = []
    skipped: list[SkippedRecord] = []
    seen: set[str] = set()
    files = _released_files(base)
    if not files:
        raise SchemaError(
            f"no {QA_ROOT}/<paradigm>/*_qa.json or {NBACK_FILE} here", path=base
        )
    for path, paradigm in files:
        try:
            raws = list(iter_json_records(path, id_keys=ID_KEYS))
        except SchemaError as exc:
            skipped.append(SkippedRecord.from_error(exc))
            continue
        for record, raw in raws:
            try:
                question = _question(base, path, paradigm, record, raw)
                if question.id in seen:
                    raise SchemaError("duplicate question id", path=path, record=record,
                                      field="question_id" if paradigm == "nback" else "id")
            except SchemaError as exc:
                skipped.append(SkippedRecord.from_error(exc))
                continue
            seen.add(question.id)
            questions.append(question)
    review_path = review if review is not None else base / REVIEW_FILE
    if review is not None and not Path(review).is_file():
        raise SchemaError("review file not found", path=review, field="review")
    if review is not None or review_path.is_file():
        questions, rejected = _apply_review(questions, Path(review_path))
        skipped += rejected
    return M3EvalSet(root=base, questions=questions, skipped=skipped)


def data_files(root: str | Path, review: str | Path | None = None) -> list[Path]:
    """The files the questions of the released folder ``root`` are read from, in load order
    (the paradigms' ``*_qa.json``, the N-Back file), then the review file that filters them
    (``review``, else ``<root>/review/review.csv`` when present): the data set's fingerprint
    (``m3kit.schema.card.files_fingerprint``) is taken over these."""
    base = Path(root)
    files = [path for path, _ in _released_files(base)]
    chosen = Path(review) if review is not None else base / REVIEW_FILE
    return files + [chosen] if chosen.is_file() else files


def media_files(questions: Iterable[Question], root: str | Path) -> list[Path]:
    """The media files ``questions`` read (their probe videos; a relative path is under
    ``root``), in question order, each once: the data set's fingerprint covers them with the
    question files (``m3kit.harness.card.data_fingerprint``)."""
    base = Path(root)
    found = (base / ref.path for question in questions for ref in question.media)
    return list(dict.fromkeys(found))


def data_media(root: str | Path, review: str | Path | None = None) -> list[Path]:
    """``media_files`` of the released folder ``root`` (``m3kit score``'s card)."""
    loaded = load_m3eval(root, review=Path(review) if review is not None else None)
    return media_files(loaded.questions, loaded.root)


def _released_files(base: Path) -> list[tuple[Path, str]]:
    files: list[tuple[Path, str]] = []
    for folder, paradigm in FOLDERS.items():
        directory = base / QA_ROOT / folder
        if directory.is_dir():
            files += [(p, paradigm) for p in sorted(directory.glob("*_qa.json"))]
    nback = base / NBACK_FILE
    if nback.is_file():
        files.append((nback, "nback"))
    return files


# Records are named by these (N-back lines carry `question_id`).
ID_KEYS = ("id", "question_id")


def _question(base: Path, path: Path, paradigm: str, record: str, raw: Any) -> Question:
    def fail(reason: str, field: str | None = None) -> SchemaError:
        return SchemaError(reason, path=path, record=record, field=field)

    problem = raw_problem(raw)
    if problem is not None:
        raise fail(problem)
    if not isinstance(raw, dict):
        raise fail(f"expected a JSON object, got {type(raw).__name__}")
    nback = paradigm == "nback"
    id_field = "question_id" if nback else "id"
    qid = raw.get(id_field)
    if nback and qid in (None, ""):
        qid, id_field = raw.get("id"), "id"
    if not isinstance(qid, str | int) or str(qid).strip() == "":
        raise fail("missing or empty id", id_field)
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip():
        raise fail("missing or empty question text", "question")
    video = _video(base, raw.get("video"), fail)
    released = {k: v for k, v in raw.items() if k not in _CORE_FIELDS}
    metadata: dict[str, Any] = {
        "paradigm": paradigm,
        "memory_key": video,
        "source_file": path.relative_to(base).as_posix(),
        "released": released,
    }
    if nback:
        choices, answer = _yes_no_choices(raw, fail)
        metadata.update(_nback_metadata(raw, fail))
    else:
        choices, answer = _lettered_choices(raw, fail)
        metadata.update(_mc_metadata(paradigm, raw, fail))
    metadata["measure"] = measure_of(metadata)
    try:
        return Question(
            id=str(qid).strip(),
            benchmark=BENCHMARK_NAME,
            text=text.strip(),
            choices=choices,
            answer=answer,
            question_type=metadata["question_type"],
            media=[VideoRef(path=video)],
            metadata=metadata,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        ctx = first.get("ctx", {}).get("error")
        reason = str(ctx) if first["type"] == "value_error" and ctx else first["msg"]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise fail(reason, {"choices": "options"}.get(field or "", field)) from None


def _video(base: Path, value: Any, fail) -> str:
    """The record's video path, relative to the root and inside it (else refused)."""
    if not isinstance(value, str) or not value.strip():
        raise fail("missing or empty video path", "video")
    try:
        rel = relative_data_path(value.strip(), root_name="the M3Eval root")
        resolve_in_root(base, rel, root_name="the M3Eval root")
    except UnsafePathError as exc:
        raise fail(exc.reason, "video") from None
    # The normalised form is what gets opened, so the OS never walks ``link/..`` to somewhere
    # other than the folder the check saw.
    return rel


def _lettered_choices(raw: dict[str, Any], fail) -> tuple[list[Choice], str]:
    options = raw.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise fail("options must be a list of at least two 'A. text' strings", "options")
    roles = raw.get("option_role_by_letter") or {}
    if not isinstance(roles, dict):
        raise fail("expected an object letter -> role", "option_role_by_letter")
    intrusion_letter = str(raw.get("intrusion_option_letter") or "").strip().upper() or None
    choices = []
    for i, option in enumerate(options):
        match = _OPTION.match(str(option)) if isinstance(option, str) else None
        if match is None:
            raise fail(f"option {option!r} is not 'X. text'", f"options.{i}")
        letter, body = match.group(1), match.group(2).strip()
        role = _role(roles.get(letter))
        # The authors' intrusion rule: the role map first, ``intrusion_option_letter`` when the
        # map does not name the chosen letter. Folding the fallback into the role keeps one rule.
        if role is None and intrusion_letter == letter:
            role = ChoiceRole.INTRUSION
        choices.append(Choice(letter=letter, text=body, role=role))
    answer = str(raw.get("answer") or "").strip().upper()
    if not answer:
        raise fail("missing answer", "answer")
    return choices, answer


def _role(value: Any) -> ChoiceRole | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        return ChoiceRole(str(value).strip().lower())
    except ValueError:
        # A role m3kit has no name for: kept verbatim under ``released``, counted as no
        # intrusion; the question itself is still good.
        return ChoiceRole.UNKNOWN


def _yes_no_choices(raw: dict[str, Any], fail) -> tuple[list[Choice], str]:
    options = raw.get("options") or ["Yes", "No"]
    if not isinstance(options, list):
        raise fail("options must be a list", "options")
    texts = [str(o).strip().lstrip("-").strip().capitalize() for o in options]
    if sorted(texts) != ["No", "Yes"]:
        raise fail(f"N-Back options must be Yes and No, got {options!r}", "options")
    gold = str(raw.get("answer") or "").strip().capitalize()
    if gold not in ("Yes", "No"):
        raise fail(f"answer must be Yes or No, got {raw.get('answer')!r}", "answer")
    choices = [
        Choice(letter=chr(ord("A") + i), text=t,
               role=ChoiceRole.CORRECT if t == gold else ChoiceRole.WRONG)
        for i, t in enumerate(texts)
    ]
    return choices, next(c.letter for c in choices if c.text == gold)


def _int_field(raw: dict[str, Any], names: Iterable[str], fail, *, required: bool) -> int | None:
    for name in names:
        value = raw.get(name)
        if value is None or value == "":
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise fail(f"expected an integer, got {value!r}", name) from None
        if number < 1:
            raise fail(f"expected a positive integer, got {number}", name)
        return number
    if required:
        raise fail("missing", next(iter(names)))
    return None


def _nback_metadata(raw: dict[str, Any], fail) -> dict[str, Any]:
    attribute = str(raw.get("attribute") or "").strip().lower()
    if not attribute:
        raise fail("missing attribute (action or scene)", "attribute")
    n = _int_field(raw, ("n_value", "n"), fail, required=True)
    k = _int_field(raw, ("clip_count", "k_value", "k"), fail, required=True)
    assert n is not None and k is not None
    if n >= k:
        raise fail(f"N = {n} needs more than {k} clips", "n_value")
    return {
        "question_type": "nback",
        "error_type": None,
        "condition": f"n{n}k{k}",
        "source_dimension": None,
        "attribute": attribute,
        "n": n,
        "k": k,
        # the harness samples 8 frames in each of the k equal parts of the sequence video
        "answer_format": "yes_no",
    }


def _mc_metadata(paradigm: str, raw: dict[str, Any], fail) -> dict[str, Any]:
    detail = str(raw.get("paper_v4_metric_detail") or "").strip() or None
    error = str(raw.get("storyline_error_type") or "").strip() or None
    dimension = str(raw.get("source_dimension") or "").strip() or None
    if paradigm == "interference":
        condition = _interference_condition(raw)
        qtype = "memory_interference"
    else:
        condition = normalize_condition(raw.get("paper_v4_metric_group"))
        if detail is None:
            raise fail("missing paper_v4_metric_detail", "paper_v4_metric_detail")
        qtype = detail
        if detail == "storyline_reconstruction" and error is None:
            raise fail("a storyline question needs its error type", "storyline_error_type")
        if paradigm == "divided_attention" and detail == "storyline_reconstruction" \
                and not re.fullmatch(r"swap\d+", condition or ""):
            # swap0 / swap10 in the release; swap<N> from a build with another swap count
            raise fail(f"expected swap0 or swap10, got {raw.get('paper_v4_metric_group')!r}",
                       "paper_v4_metric_group")
    measure = measure_of({"question_type": qtype, "error_type": error})
    if measure is None:
        raise fail(f"unknown question kind {detail!r}", "paper_v4_metric_detail")
    return {
        "question_type": qtype,
        "error_type": error,
        "condition": condition,
        "source_dimension": dimension,
        **({"intrusion_option_letter": str(raw["intrusion_option_letter"]).strip().upper()}
           if raw.get("intrusion_option_letter") else {}),
    }


def _interference_condition(raw: dict[str, Any]) -> str | None:
    """The record's condition as the authors' harness reads it: ``paper_v4_metric_group``,
    else ``interference_direction`` (the first non-empty one); never guessed from the file."""
    for name in ("paper_v4_metric_group", "interference_direction"):
        value = normalize_condition(raw.get(name))
        if value is not None:
            return value
    return None


# -- review ---------------------------------------------------------------------------------


def _apply_review(
    questions: list[Question], path: Path
) -> tuple[list[Question], list[SkippedRecord]]:
    """Keep the questions whose review status is ``accepted`` (the review file is read by
    ``m3kit.benchmarks.m3eval.construct.review``, deferred: it belongs to the question builder)."""
    from m3kit.benchmarks.m3eval.construct.review import read_review

    try:
        statuses = read_review(path)
    except M3kitError:
        raise
    except (OSError, ValueError) as exc:
        raise SchemaError(f"cannot read the review file: {exc}", path=path) from exc
    kept: list[Question] = []
    skipped: list[SkippedRecord] = []
    for q in questions:
        status = statuses.get(q.id, "pending")
        if status == "accepted":
            kept.append(q)
        else:
            skipped.append(SkippedRecord(file=str(path), record=q.id, field="status",
                                         reason=f"review status {status}, not accepted"))
    return kept, skipped
