"""A built and generated M3Eval root (``m3kit m3eval build`` + ``generate``) as a review source
for ``m3kit review ROOT`` (``m3kit.schema.review``).

Items are the records of the released files under the root (``qa_root/<paradigm>/*_qa.json``
and ``questions/nback_questions.jsonl``), named by their record id as the review CSV
(``review.py``) names them. Each shows the probe video the question is asked of (the whole
composed video: split screen, concatenation, interleaving or N-back sequence), its options with
the roles the generator wrote (``option_role_by_letter``; where a paradigm writes no role map,
the gold is ``correct``, ``intrusion_option_letter`` is ``intrusion`` and the rest
``incorrect``), the design checker's verdict from the review CSV, and the pair's source texts
from the build plan. The drafts the checker rejected have no released record, so they are not
items: the CSV keeps them with their reasons.

The export is a benchmark root that ``load_m3eval`` reads with no skip: the accepted records
only, with the reviewer's edits, in the files they came from, a review CSV marking them
``accepted`` (and the rejected ones ``rejected``, with the reviewer's reason), and their probe
videos. The loader refuses a video reached through a symbolic link that leaves the root, so
the videos are hard links to the root's files (no copy on the same file system), copies
where a hard link cannot be made (another file system).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from m3kit.benchmarks.m3eval.construct.plan import PLAN_FILE, load_plan
from m3kit.benchmarks.m3eval.construct.review import ReviewItem as SheetRow
from m3kit.benchmarks.m3eval.construct.review import read_review_items, review_paths, write_review
from m3kit.benchmarks.m3eval.load import (
    BENCHMARK_NAME,
    FOLDERS,
    ID_KEYS,
    NBACK_FILE,
    load_m3eval,
)
from m3kit.errors import M3kitError, SchemaError
from m3kit.files import atomic_write_text, folder_replaced, link_or_copy
from m3kit.paths import resolve_in_root
from m3kit.schema import SkippedRecord, iter_json_records
from m3kit.schema.probe import ProbeManifest
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

__all__ = ["M3EvalReviewSource", "open_review_source"]

_QA_GLOB = "*_qa.json"
_NO_MAP_WRONG = "incorrect"  # a wrong option of a paradigm that writes no role map


class _Record(BaseModel):
    """A released record and where it was read: the file (relative to the root) and the
    paradigm's released folder (``nback`` for the N-back file)."""

    model_config = ConfigDict(frozen=True)

    file: str
    folder: str
    raw: dict[str, Any]

    @property
    def nback(self) -> bool:
        return self.folder == "nback"

    @property
    def id(self) -> str:
        value = self.raw.get("question_id") if self.nback else None
        return str(value if value not in (None, "") else self.raw.get("id", "")).strip()


def open_review_source(root: Path) -> M3EvalReviewSource | None:
    """``root`` as an M3Eval review source when it holds released M3Eval question files;
    else ``None``."""
    root = Path(root)
    if not root.is_dir() or not _question_files(root):
        return None
    return M3EvalReviewSource(root)


class M3EvalReviewSource:
    """The questions of an M3Eval root, for review and export (module doc)."""

    benchmark = BENCHMARK_NAME

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- items ---------------------------------------------------------------------------------

    def items(self) -> list[ReviewItem]:
        sheet = {row.id: row for row in read_review_items(review_paths(self.root)[0])}
        pairs = _pair_texts(self.root)
        durations: dict[str, float | None] = {}
        out = []
        for record in self._records():
            video = str(record.raw.get("video") or "")
            if video not in durations:
                durations[video] = _duration(self.root, video)
            out.append(_item(record, sheet.get(record.id), pairs, durations[video]))
        return out

    def _records(self) -> Iterator[_Record]:
        """Every released record with an id, in file order (a record the loader would refuse
        for want of one cannot be named, reviewed or exported)."""
        seen: set[str] = set()
        for path, folder in _question_files(self.root):
            rel = path.relative_to(self.root).as_posix()
            try:
                records = list(iter_json_records(path, id_keys=ID_KEYS))
            except SchemaError:
                continue  # a file that does not parse; the loader names it
            for _, raw in records:
                if not isinstance(raw, dict):
                    continue
                record = _Record(file=rel, folder=folder, raw=raw)
                if record.id and record.id not in seen:
                    seen.add(record.id)
                    yield record

    # -- export --------------------------------------------------------------------------------

    def check_edit(self, item_id: str, edit: ItemEdit) -> str | None:
        record = next((r for r in self._records() if r.id == item_id), None)
        if record is None:
            return f"no item {item_id!r}"
        if record.nback and edit.options:
            return "an N-back question's options are Yes and No: change the gold instead"
        try:
            _edited(record, edit)
        except SchemaError as exc:
            return exc.reason
        return None

    def export(self, decisions: dict[str, ReviewDecision], out: Path) -> ExportResult:
        """Write the accepted records, edited, as a benchmark root at ``out`` (new, empty, or
        an earlier export, replaced whole), read back with ``load_m3eval``."""
        out = Path(out)
        records = list(self._records())
        accepted = [r for r in records if verdict_of(decisions, r.id) == "accepted"]
        rejected = [r for r in records if verdict_of(decisions, r.id) == "rejected"]
        with folder_replaced(out, earlier=EXPORT_RECORD) as temp:
            files: dict[str, list[dict[str, Any]]] = {}
            for record in accepted:
                files.setdefault(record.file, []).append(
                    _edited(record, decisions[record.id].edit))
                _link_video(self.root, temp, str(record.raw.get("video") or ""))
            for rel, raws in files.items():
                _write_records(temp / rel, raws)
            rows = [_sheet_row(r, decisions[r.id]) for r in accepted + rejected]
            write_review(temp, rows)
        loaded, skipped = _read_back(out)
        result = ExportResult(out=str(out), benchmark=self.benchmark,
                              exported=len(accepted), rejected=len(rejected),
                              pending=len(records) - len(accepted) - len(rejected),
                              loaded=loaded, skipped=skipped)
        atomic_write_text(out / EXPORT_RECORD, result.model_dump_json(indent=1))
        return result


# -- reading the root -----------------------------------------------------------------------------


def _question_files(root: Path) -> list[tuple[Path, str]]:
    """The released question files under ``root`` with their folder (as ``load_m3eval``
    finds them)."""
    files = [(p, folder) for folder in FOLDERS
             for p in sorted((root / "qa_root" / folder).glob(_QA_GLOB))]
    nback = root / NBACK_FILE
    return files + [(nback, "nback")] if nback.is_file() else files


def _pair_texts(root: Path) -> dict[str, list[str]]:
    """Per pair id, a line per source video (its id, file name and text) from the build plan;
    empty for a root without one (a release not built by m3kit)."""
    if not (root / PLAN_FILE).is_file():
        return {}
    try:
        plan = load_plan(root)
    except M3kitError:
        return {}
    texts = {}
    for pair_plan in plan.pairs:
        pair = pair_plan.pair
        texts[pair.id] = [
            f"Video {n} ({source.id}, {Path(source.path).name}): {source.text or 'no text'}"
            for n, source in ((1, pair.video1), (2, pair.video2))]
    return texts


def _duration(root: Path, video: str) -> float | None:
    """The probe video's length from the manifest the builder wrote beside it; ``None`` when
    there is none (the player then shows the whole file)."""
    try:
        path = resolve_in_root(root, video, root_name="the M3Eval root")
    except M3kitError:
        return None
    manifest = path.with_suffix(".json")
    if not manifest.is_file():
        return None
    try:
        return ProbeManifest.load(manifest).duration
    except M3kitError:
        return None


# -- one item -------------------------------------------------------------------------------------


def _item(record: _Record, row: SheetRow | None, pairs: dict[str, list[str]],
          duration: float | None) -> ReviewItem:
    raw = record.raw
    options = _options(record)
    answer = _gold_letter(record, options)
    roles = _roles(record, [letter for letter, _ in options], answer)
    video = str(raw.get("video") or "")
    condition = _condition(record)
    pair = str(raw.get("pair_id") or "")
    evidence = list(pairs.get(pair, []))
    if record.nback:
        labels = raw.get("labels") or []
        evidence += [f"clip {i}: {label if label is not None else '(no label)'}"
                     for i, label in enumerate(labels, start=1)]
    checks = []
    if row is not None:
        verdict = row.checker.strip()
        checks.append(ReviewCheck(name="design checker", passed=verdict == "ok",
                                  rationale=verdict))
    status = row.status if row is not None and row.status != "pending" else ""
    facts = [(name, value) for name, value in (
        ("paradigm", record.folder), ("failure mode", _failure_mode(record)), ("video", video),
        ("condition", condition), ("pair", pair),
        ("target video", str(raw.get("target_video") or "")),
        ("attribute", str(raw.get("attribute") or "")), ("review.csv status", status),
    ) if value]
    return ReviewItem(
        id=record.id,
        group=pair or _nback_group(record) or record.folder,
        question=str(raw.get("question") or ""),
        options=tuple(ReviewOption(letter=letter, text=text, role=roles[letter])
                      for letter, text in options),
        answer=answer,
        media=(ReviewMedia(kind="video", path=video,
                           label=f"the probe video ({record.folder}"
                                 + (f", {condition})" if condition else ")"),
                           start=0.0, end=duration),) if video else (),
        evidence=tuple(evidence),
        checks=tuple(checks),
        facts=tuple(facts),
    )


def _options(record: _Record) -> list[tuple[str, str]]:
    """(letter, text) per option: ``"A. text"`` split for the lettered paradigms; N-back's
    ``Yes`` / ``No`` lettered in file order, as the loader letters them."""
    raws = record.raw.get("options") or (["Yes", "No"] if record.nback else [])
    out = []
    for index, option in enumerate(raws if isinstance(raws, list) else []):
        text = str(option).strip()
        if record.nback:
            out.append((chr(ord("A") + index), text))
            continue
        letter, dot, body = text.partition(".")
        if dot and len(letter.strip()) == 1:
            out.append((letter.strip().upper(), body.strip()))
        else:
            out.append((chr(ord("A") + index), text))
    return out


def _gold_letter(record: _Record, options: list[tuple[str, str]]) -> str:
    answer = str(record.raw.get("answer") or "").strip()
    if record.nback:
        gold = answer.capitalize()
        return next((letter for letter, text in options if text.capitalize() == gold), answer)
    return answer.upper()


def _roles(record: _Record, letters: list[str], answer: str) -> dict[str, str]:
    """Role per letter: the generator's role map where the record has one, else derived from
    the gold and the intrusion letter."""
    given = record.raw.get("option_role_by_letter")
    if isinstance(given, dict) and given:
        return {letter: str(given.get(letter) or "unknown") for letter in letters}
    intrusion = str(record.raw.get("intrusion_option_letter") or "").strip().upper()
    return {letter: "correct" if letter == answer
            else "intrusion" if letter == intrusion else _NO_MAP_WRONG for letter in letters}


def _failure_mode(record: _Record) -> str:
    raw = record.raw
    if record.nback:
        return "nback"
    if record.folder == "memory_interference":
        return "memory_interference"
    return str(raw.get("storyline_error_type") or raw.get("paper_v4_metric_detail") or "")


def _condition(record: _Record) -> str:
    raw = record.raw
    if record.nback:
        return f"K={raw.get('k_value') or raw.get('clip_count')}, N={raw.get('n_value')}"
    return str(raw.get("paper_v4_metric_group") or raw.get("interference_direction") or "")


def _nback_group(record: _Record) -> str:
    """An N-back question's instance (``<instance>_<attribute>_k<K>_n<N>``)."""
    if not record.nback:
        return ""
    attribute = str(record.raw.get("attribute") or "")
    return record.id.rsplit(f"_{attribute}_k", 1)[0] if attribute else ""


# -- the export -----------------------------------------------------------------------------------


def _edited(record: _Record, edit: ItemEdit) -> dict[str, Any]:
    """The released record with the reviewer's edits: question, option texts, gold.

    A new gold letter takes the ``correct`` role in the role map, and the old gold takes the
    role the new one had (so the map still names one correct option); an intrusion letter that
    became the gold moves to the old gold likewise."""
    raw = dict(record.raw)
    if edit.question is not None:
        raw["question"] = edit.question
    options = _options(record)
    if edit.options:
        texts = [(letter, edit.options.get(letter, text)) for letter, text in options]
        raw["options"] = ([text for _, text in texts] if record.nback
                          else [f"{letter}. {text}" for letter, text in texts])
        options = texts
    if edit.answer is None:
        return raw
    old = _gold_letter(record, _options(record))
    new = edit.answer.strip().upper()
    by_letter = dict(options)
    if new not in by_letter:
        raise SchemaError(f"the new gold {edit.answer!r} is not one of the options "
                          f"{', '.join(by_letter)}", record=record.id, field="answer")
    if record.nback:
        raw["answer"] = by_letter[new]
        return raw
    raw["answer"] = new
    roles = raw.get("option_role_by_letter")
    if isinstance(roles, dict) and new != old and new in roles and old in roles:
        roles = dict(roles)
        roles[old], roles[new] = roles[new], roles[old]
        raw["option_role_by_letter"] = roles
    if str(raw.get("intrusion_option_letter") or "").strip().upper() == new and new != old:
        raw["intrusion_option_letter"] = old
    return raw


def _link_video(root: Path, out: Path, video: str) -> None:
    """The record's video (and the manifest beside it) at the same relative path under
    ``out``: a hard link, or a copy across file systems. A path the loader refuses is left
    out: the read-back names it."""
    try:
        source = resolve_in_root(root, video, root_name="the M3Eval root")
    except M3kitError:
        return
    target = out / video
    for src, dst in ((source, target), (source.with_suffix(".json"),
                                        target.with_suffix(".json"))):
        if not src.is_file() or dst.exists():
            continue
        link_or_copy(src, dst)


def _write_records(path: Path, raws: list[dict[str, Any]]) -> None:
    if path.suffix == ".jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in raws)
    else:
        text = json.dumps(raws, indent=2, ensure_ascii=False) + "\n"
    atomic_write_text(path, text)


def _sheet_row(record: _Record, decision: ReviewDecision) -> SheetRow:
    """The review CSV row of a decided record: its status, what it shows after the edits, and
    who decided when (with the reason)."""
    edited = _edited(record, decision.edit) if decision.verdict == "accepted" else record.raw
    roles = edited.get("option_role_by_letter")
    note = f"{decision.verdict} by {decision.reviewer} at {decision.at.isoformat()}"
    if decision.reason:
        note += f": {decision.reason}"
    if not decision.edit.empty and decision.verdict == "accepted":
        note += " (edited)"
    return SheetRow(
        id=record.id, status=decision.verdict, paradigm=record.folder,
        failure_mode=_failure_mode(record), video=str(edited.get("video") or ""),
        question=str(edited.get("question") or ""),
        options=[str(o) for o in edited.get("options") or []],
        answer=str(edited.get("answer") or ""),
        roles={str(k): str(v) for k, v in roles.items()} if isinstance(roles, dict) else {},
        note=note)


def _read_back(out: Path) -> tuple[int, list[SkippedRecord]]:
    """What ``load_m3eval`` makes of the export: questions loaded, records skipped (an export
    with no accepted question holds no question file: the loader's refusal is its skip)."""
    try:
        loaded = load_m3eval(out)
    except SchemaError as exc:
        return 0, [SkippedRecord.from_error(exc)]
    return len(loaded.questions), list(loaded.skipped)
