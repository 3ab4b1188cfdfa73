"""LoCoMo (``locomo10.json``) → the same conversation schema as M3Exam.

Each sample: ``sample_id``, ``conversation`` with ``speaker_a``/``speaker_b``,
``session_N_date_time`` and ``session_N`` (lists of ``{speaker, dia_id "D1:3", text,
img_url?, blip_caption?}``), and ``qa`` (``question``, ``answer`` or, for adversarial
questions, ``adversarial_answer``, ``evidence`` round ids, ``category`` 1-5).

Category 5 (adversarial) questions ask about something the conversation never says; their
``adversarial_answer`` is the trap. Their gold is ``"Not mentioned in the conversation"`` and
they are scored by the released rule (credit only an answer saying the information is not
available, ``m3kit.metrics.text_match.abstention_score``); the trap stays in the metadata.

Turns become rounds with the speaker's ``text`` (LoCoMo has no assistant reply: ``response``
stays empty); shared images become attachments ``img_<n>`` (the round id is the other half of
their item id, ``D1:5/img_1``) with the BLIP caption as description. An ``img_url`` is a web
link, an inline image (a ``data:`` URI: the released file has two), or a local copy:

- a web link is kept as the attachment's reference but never fetched (m3kit runs offline): the
  attachment is caption-only everywhere (memories, regimes), reported once for the whole file;
- an inline image is checked from its header (``m3kit.media.image.check_image``: bounded size);
  a malformed or oversized one is a named skip and the turn keeps its caption;
- a local copy is relative to the folder of ``locomo10.json`` and resolved by
  ``m3kit.paths.resolve_in_root`` (absolute paths, ``..`` climbing out, symbolic links pointing
  out and NUL bytes are refused as named skips; the turn keeps its caption).

Questions get ids ``<sample_id>/<index in qa>``, benchmark ``"locomo"``, ``question_type`` the
category as a string.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from m3kit.benchmarks.m3exam.load import (
    M3ExamData,
    answer_text,
    as_list,
    check_evidence,
    checked_turn,
    loaded_or_raise,
    parse_evidence,
    pydantic_error,
    read_list,
)
from m3kit.errors import M3kitError, MediaError, SchemaError, UnsafePathError
from m3kit.media.image import check_image
from m3kit.paths import resolve_in_root
from m3kit.schema import Attachment, Conversation, ImageRef, Question, Round, Session
from m3kit.schema import SkippedRecord as Skipped
from m3kit.schema.media import INLINE_IMAGE_PREFIX, REMOTE_IMAGE_PREFIXES

__all__ = ["ADVERSARIAL", "LOCOMO_CATEGORIES", "LOCOMO_TYPES", "NOT_MENTIONED", "load_locomo"]

# The file carries numbers only. The names are those of the released evaluation code
# (task_eval/evaluation.py scores 1 as multi-hop, 5 as adversarial), confirmed by the released
# counts (282 multi-hop, 321 temporal, 96 open-domain, 841 single-hop, 446 adversarial) and
# snap-research/locomo issue #29; the paper lists the types in another order, and some
# harnesses (mem0's evaluation) use another mapping.
LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
# The categories as question types ("1".."5"), in the file's order.
LOCOMO_TYPES: tuple[str, ...] = tuple(str(c) for c in LOCOMO_CATEGORIES)

ADVERSARIAL = 5
# The abstention option the released QA prompt offers beside the trap answer for category 5.
NOT_MENTIONED = "Not mentioned in the conversation"

# Only ``session_<n>`` holds turns; ``session_<n>_date_time`` keys without a session (the
# released conv-26 has such) add no session.
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def load_locomo(path: str | Path) -> M3ExamData:
    """Load ``locomo10.json`` (or a folder holding it); bad records are skipped and reported."""
    path = Path(path).expanduser().resolve()
    if path.is_dir():
        candidates = sorted(path.glob("locomo*.json"))
        if not candidates:
            raise SchemaError("no locomo*.json in this folder", path=path)
        path = candidates[0]
    samples = read_list(path)
    conversations: dict[str, Conversation] = {}
    questions: list[Question] = []
    skipped: list[Skipped] = []
    for index, raw in enumerate(samples):
        try:
            conv = _conversation(path, index, raw, skipped)
        except M3kitError as exc:
            skipped.append(Skipped.from_error(exc))
            continue
        if conv.id in conversations:
            skipped.append(
                Skipped.at(path, conv.id, "sample skipped: duplicate sample_id", "sample_id")
            )
            continue
        conversations[conv.id] = conv
        questions.extend(_questions(path, conv, raw.get("qa"), skipped))
    web = sum(1 for conv in conversations.values() for rnd in conv.iter_rounds()
              for attachment in rnd.attachments
              if isinstance(attachment.media, ImageRef) and attachment.media.remote)
    if web:
        skipped.append(Skipped.at(
            path, None, f"{web} shared images are web links, which m3kit does not fetch (it "
            "runs offline): each is a caption-only attachment, its blip_caption standing in "
            "for the pixels", "img_url"))
    return loaded_or_raise(conversations, questions, skipped, path, "LoCoMo sample")


def _conversation(path: Path, index: int, raw: Any, issues: list[Skipped]) -> Conversation:
    if not isinstance(raw, dict):
        raise SchemaError("sample skipped: not a record", path=path, record=index)
    sample_id = raw.get("sample_id")
    if not isinstance(sample_id, str | int) or not str(sample_id):
        raise SchemaError(
            "sample skipped: no sample_id", path=path, record=index, field="sample_id"
        )
    sample_id = str(sample_id)
    body = raw.get("conversation")
    if not isinstance(body, dict):
        raise SchemaError(
            "sample skipped: no conversation", path=path, record=sample_id, field="conversation"
        )
    speakers = [str(body[k]) for k in ("speaker_a", "speaker_b") if body.get(k)]
    numbers = sorted(int(m.group(1)) for k in body if (m := _SESSION_KEY.match(k)))
    sessions: list[Session] = []
    seen: set[str] = set()
    for n in numbers:
        turns = body.get(f"session_{n}")
        if not isinstance(turns, list):
            issues.append(Skipped.at(path, sample_id, "session skipped: not a list of turns",
                                     f"session_{n}"))  # fmt: skip
            continue
        rounds: list[Round] = []
        for ti, turn in enumerate(turns):
            rnd = _round(path, f"{sample_id} session_{n}[{ti}]", sample_id, turn, seen, issues)
            if rnd is not None:
                rounds.append(rnd)
                seen.add(rnd.id)
        date = body.get(f"session_{n}_date_time")
        sessions.append(
            Session(id=f"D{n}", date=str(date) if date is not None else None, rounds=rounds)
        )
    try:
        return Conversation(
            id=sample_id,
            speakers=speakers,
            sessions=sessions,
            metadata={"persona": sample_id, "source": str(path)},
        )
    except ValidationError as exc:
        raise pydantic_error(path, sample_id, exc) from exc


def _round(
    path: Path, where: str, sample_id: str, turn: Any, seen: set[str], issues: list[Skipped]
) -> Round | None:
    checked = checked_turn(path, where, turn, ("dia_id", "text"), seen, issues, f"{sample_id} ")
    if checked is None:
        return None
    rid, text = checked
    # Released turns hold ``img_url`` as a list of web links (the images themselves are not
    # released) with one ``blip_caption``; some turns carry the caption and no link at all.
    # The icrawler search ``query`` beside them is how the image was found, not what it shows:
    # not loaded.
    urls = _image_sources(path, f"{sample_id} {rid}", as_list(turn.get("img_url")), issues)
    caption = turn.get("blip_caption")
    caption = str(caption) if caption else None
    attachments = [
        Attachment(media=ImageRef(path=url), description=caption, id=f"img_{i + 1}")
        for i, url in enumerate(urls)
    ]
    if caption and not urls:
        # A caption without a link still tells what was shared; with nothing to attach it
        # joins the turn's text as the released evaluation code renders every caption
        # (``' [shares %s]'``), so text-only regimes and memories see it.
        text = f"{text} [shares {caption}]"
    speaker = turn.get("speaker")
    return Round(id=rid, speaker=str(speaker) if speaker else None, text=text,
                 attachments=attachments)  # fmt: skip


def _image_sources(path: Path, record: str, values: list[Any], issues: list[Skipped]) -> list[str]:
    """The turn's usable image sources: web links as given, inline images that pass the
    header check, local names resolved inside the folder of ``path``; anything else is
    reported and left out."""
    sources: list[str] = []
    for value in values:
        if value in (None, ""):
            continue
        if isinstance(value, str) and value.startswith(REMOTE_IMAGE_PREFIXES) \
                and "\x00" not in value:
            sources.append(value)
            continue
        if isinstance(value, str) and value.startswith(INLINE_IMAGE_PREFIX):
            try:
                check_image(value, record=record)
            except MediaError as exc:
                issues.append(Skipped.at(path, record, f"inline image skipped: {exc.reason}",
                                         "img_url"))
                continue
            sources.append(value)
            continue
        try:
            local = resolve_in_root(path.parent, value, path=path, record=record,
                                    field="img_url", root_name="the LoCoMo file's folder")
        except UnsafePathError as exc:
            issues.append(Skipped.at(path, record, f"image skipped: {exc.reason}", "img_url"))
            continue
        sources.append(str(local))
    return sources


def _questions(path: Path, conv: Conversation, qa: Any, issues: list[Skipped]) -> list[Question]:
    if not isinstance(qa, list):
        issues.append(Skipped.at(path, conv.id, "no questions: qa is not a list", "qa"))
        return []
    known = {r.id for r in conv.iter_rounds()}
    out: list[Question] = []
    for index, raw in enumerate(qa):
        qid = f"{conv.id}/{index}"
        if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
            issues.append(Skipped.at(path, qid, "question skipped: no question text", "question"))
            continue
        category = raw.get("category")
        try:
            cat = int(category) if category is not None else None
        except (TypeError, ValueError):
            cat = None
        answer = raw.get("answer")
        if cat == ADVERSARIAL:
            # ``adversarial_answer`` is the trap the question leads to, not the gold: the
            # conversation never says it. The gold is the abstention the released evaluation
            # offers as the other option and credits (``m3kit.metrics.text_match``'s rule).
            answer = NOT_MENTIONED
        if answer is None or answer == "":
            issues.append(Skipped.at(path, qid, "question skipped: no answer", "answer"))
            continue
        if answer_text(answer) is None:
            issues.append(Skipped.at(path, qid, f"question skipped: answer {answer!r} is not "
                                     "text or a number", "answer"))  # fmt: skip
            continue
        if raw.get("evidence") is None:
            issues.append(Skipped.at(path, qid, "no evidence: oracle regimes and evidence recall "
                                     "have no round for it (question kept)", "evidence"))
        evidence, malformed = parse_evidence(raw.get("evidence"))
        # Open-domain (3) answers may list alternatives after ";": the released scorer grades
        # against the part before the first one, and so does the label F1/BLEU-1/judge use.
        label = str(answer).split(";")[0].strip() if cat == 3 else str(answer)
        try:
            question = Question(
                id=qid,
                benchmark="locomo",
                text=raw["question"],
                answer=str(answer),
                question_type=str(cat) if cat is not None else None,
                evidence=evidence,
                metadata={
                    "persona": conv.id,
                    "label": label or str(answer),
                    "index": index,
                    "category": cat,
                    "category_name": LOCOMO_CATEGORIES.get(cat) if cat else None,
                    "adversarial": cat == ADVERSARIAL,
                    **({"adversarial_answer": str(raw["adversarial_answer"])}
                       if raw.get("adversarial_answer") is not None else {}),
                },
            )
        except ValidationError as exc:
            issues.append(Skipped.from_error(pydantic_error(path, qid, exc)))
            continue
        check_evidence(path, question, malformed, known, issues)
        out.append(question)
    return out
