"""What a memory is fed, and what it keeps: media → ``MemoryEvent``s → ``MemoryItem``s.

Events come from three kinds of stream, on one clock per memory key:

- a video's frames, through the frame store (``frame_events``): time = the frame's time;
- speech transcripts (``transcript_events``): time = the end of the segment, the moment its
  words have all been heard, so the causal cut never lets a question see words spoken after it;
- a multi-session conversation (``conversation_events``): one ``round`` event per round and one
  event per attachment, time = seconds since the first session's date (a counter without dates).

``items_from_events`` turns events into items with *text surrogates*: frames and images have no
text of their own, so their item text is the description shipped with the data plus what OCR
reads in the pixels. Each item keeps the raw ``MediaRef`` as its ``source`` and the raw modality
as its tag, so a memory can still go back to the pixels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from m3kit.errors import (
    CorruptMediaError,
    MediaError,
    MediaTooLargeError,
    SamplingError,
    SchemaError,
)
from m3kit.memory.base import EventKind, MemoryEvent, MemoryItem, Modality
from m3kit.schema.conversation import Attachment, Conversation, Round
from m3kit.schema.evallog import attachment_item_id
from m3kit.schema.media import ImageRef, MediaRef, PdfPageRef, VideoRef
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from m3kit.media.resize import Resize
    from m3kit.media.store import FrameStore
    from m3kit.perception.base import TextReader, TranscriptSegment

logger = logging.getLogger(__name__)

# Kinds whose raw source is pixels: their items need a text surrogate.
VISUAL_KINDS: frozenset[str] = frozenset({"frame", "image", "pdf_page"})
# Images OCR'd per reader call: bounds the decoded pixels held at once (M3Exam photos are large).
OCR_BATCH = 8

# -- media → events --------------------------------------------------------------------------------


def frame_events(
    store: FrameStore,
    video: str | Path,
    indices: Sequence[int],
    *,
    resize: Resize | None = None,
    time_offset: float = 0.0,
    id_prefix: str = "",
) -> list[MemoryEvent]:
    """One ``frame`` event per frame index of ``video``, pointing at the stored image.

    Times are the frames' presentation times (seconds from the first frame) plus
    ``time_offset``, which places a clip on a longer stream's clock. Event ids are
    ``{id_prefix}frame-{index:06d}``. The stored images stay valid until the frame store evicts
    them; ``metadata`` keeps the video, the frame index and ``time_offset`` so they can be
    fetched again and put back on the video's own clock (speech of the same stretch).
    """
    times = store.index_for(video).times
    bad = [i for i in indices if not 0 <= int(i) < len(times)]
    if bad:
        raise SamplingError(
            f"frame indices {bad[:5]} are outside the video's {len(times)} frames", path=video
        )
    paths = store.get_paths(video, indices, resize)
    events = []
    for index, path in zip(indices, paths, strict=True):
        t = float(times[int(index)]) + time_offset
        events.append(MemoryEvent(
            id=f"{id_prefix}frame-{int(index):06d}",
            kind="frame",
            time=t,
            media=ImageRef(path=str(path)),
            metadata={"video": str(video), "frame_index": int(index), "when": clock(t),
                      "time_offset": time_offset},
        ))
    return events


def transcript_events(
    segments: Iterable[TranscriptSegment],
    *,
    id_prefix: str = "speech-",
    time_offset: float = 0.0,
    speaker: str | None = None,
    source: MediaRef | None = None,
) -> list[MemoryEvent]:
    """One ``transcript`` event per non-empty segment, timed at the segment's end.

    ``source`` is the audio or video the words came from (kept so a memory can cite it).
    """
    events = []
    for n, segment in enumerate(segments):
        text = segment.text.strip()
        if not text:
            continue
        start, end = segment.start + time_offset, segment.end + time_offset
        events.append(MemoryEvent(
            id=f"{id_prefix}{n:05d}",
            kind="transcript",
            time=end,
            text=text,
            media=source,
            speaker=speaker,
            metadata={"start": start, "end": end, "when": f"{clock(start)}-{clock(end)}"},
        ))
    return events


def conversation_events(conversation: Conversation) -> list[MemoryEvent]:
    """A conversation as a stream: each round, then the files attached in it.

    A round's text is ``"{speaker}: {utterance}"`` followed by ``"assistant: {response}"``
    when there is one. An attachment becomes an ``image`` (or ``pdf_page``) event whose id is
    ``"{round id}/{attachment id}"`` and whose text is its released description. Rounds are
    timed in seconds since the first session's date, one second apart inside a session (an
    explicit round time wins); when any session has no readable date, rounds are counted
    0, 1, 2... instead. Times never go backwards.
    """
    dated = bool(conversation.sessions) and all(
        s.parsed_date is not None for s in conversation.sessions
    )
    first = _first_moment(conversation) if dated else None
    events: list[MemoryEvent] = []
    previous = -1.0
    counter = 0
    for session in conversation.sessions:
        base = (_seconds_between(first, session.parsed_date) if first and session.parsed_date
                else 0.0)
        for position, rnd in enumerate(session.rounds):
            if first is None:
                t = float(counter)
            elif rnd.time is not None:
                t = _seconds_between(first, rnd.time)
            else:
                t = base + position
            t = max(t, previous + 1.0) if events else t
            previous = t
            counter += 1
            when = " ".join(x for x in (session.id, session.date) if x)
            # ``session_date``: the released date string, for query rewriting's calendar
            # scopes (``m3kit.memory.retrieval.query``) where the clock is a counter (undated
            # sessions).
            meta = {"session_id": session.id, "round_id": rnd.id, "when": when,
                    "session_date": session.date}
            events.append(MemoryEvent(
                id=rnd.id, kind="round", time=t, text=_round_text(rnd), speaker=rnd.speaker,
                metadata=meta,
            ))
            events.extend(
                _attachment_event(rnd, n, attachment, t, meta)
                for n, attachment in enumerate(rnd.attachments)
            )
    return events


def merge_events(*streams: Iterable[MemoryEvent]) -> list[MemoryEvent]:
    """Several time-ordered streams (frames, transcript...) merged into one, stably by time.

    An event without a time keeps its place right after the event before it in its own stream.
    """
    keyed: list[tuple[float, int, MemoryEvent]] = []
    for stream in streams:
        for t, event in _effective_times(stream):
            keyed.append((t, len(keyed), event))
    keyed.sort(key=lambda entry: (entry[0], entry[1]))
    return [event for _, _, event in keyed]


def clock(seconds: float) -> str:
    """``h:mm:ss.s`` for a time on a stream's clock."""
    minutes, secs = divmod(max(seconds, 0.0), 60.0)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{secs:04.1f}"


def wall_clock(unix: float) -> str:
    """``YYYY-MM-DD HH:MM:SS`` (UTC) of a unix time: how a time on an absolute clock (a
    person's days of recordings, SuperMemory-VQA's timeline) is named in a prompt."""
    return datetime.fromtimestamp(unix, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


TimeLabel = Callable[[float], str]


def time_label(events: Iterable[MemoryEvent]) -> TimeLabel:
    """How times of the stream ``events`` belong to are written: ``wall_clock`` where the
    events' own labels (metadata ``when``) are their times as dates (a person's timeline),
    else ``clock``. A memory that names times of its own (a clip's stretch, a transcribed
    segment, a keyframe's text) writes them so, as every other memory shows the events'
    labels: never a unix time as ``492345:00:30.0``."""
    for event in events:
        when = event.metadata.get("when")
        if event.time is not None and isinstance(when, str) and when:
            return wall_clock if when == wall_clock(event.time) else clock
    return clock


def span_label(start: float, end: float, label: TimeLabel = clock) -> str:
    """A stretch of the stream, ``0:00:30.0-0:01:00.0``; on dates the end's date is written
    only when it differs from the start's (``2024-05-01 10:00:00-10:00:30``)."""
    first, last = label(start), label(end)
    if label is wall_clock and first[:10] == last[:10]:
        last = last[11:]
    return f"{first}-{last}"


# -- events → items --------------------------------------------------------------------------------


def items_from_events(
    key: str,
    events: Sequence[MemoryEvent],
    *,
    reader: TextReader | None = None,
    skipped: list[SkippedRecord] | None = None,
) -> list[MemoryItem]:
    """One item per event, in time order, each with a text surrogate and its raw source.

    With a ``reader``, frames and images (``ImageRef`` sources: files and inline images; a web
    link is never fetched and keeps its description alone) are OCR'd and their text is
    ``"{description}\\nText in image: {ocr}"`` (either part alone when the other is empty);
    without one, a visual item's text is its description only, possibly empty. PDF pages carry
    the text their event brings (their text layer); rendering pages belongs to ``m3kit.media``.
    Runs models: call it from a worker thread, not the event loop.

    An image that cannot be decoded (damaged, over the pixel bound) costs its own item, not the
    key's memory: it is left out, logged, and appended to ``skipped`` when given (the memory's
    ``Memory.skipped`` record). Without a reader each image is checked from its header, so a
    memory that sends images (``context``) never holds one it cannot send.
    """
    ordered = merge_events(events)
    _check_unique_ids(key, ordered)
    ocr, unusable = (_read_images(ordered, reader) if reader is not None
                     else ({}, _unsendable_images(ordered)))
    for error in unusable:
        logger.warning("memory %s: attachment skipped: %s", key, error)
    if skipped is not None:
        skipped.extend(SkippedRecord.from_error(error) for error in unusable)
    left_out = {error.record for error in unusable}
    return [_item(key, event, ocr.get(event.id, "")) for event in ordered
            if event.id not in left_out]


def when_of(entry: MemoryEvent | MemoryItem) -> str:
    """An event's or item's time as the data labels it (metadata ``when``: a session's date, a
    person's wall clock), else its time on the stream's clock; empty when it has neither."""
    when = entry.metadata.get("when")
    if isinstance(when, str) and when:
        return when
    return clock(entry.time) if entry.time is not None else ""


def item_label(item: MemoryItem) -> str:
    """How an item introduces itself in a prompt: ``[when] modality id``."""
    when = when_of(item)
    prefix = f"[{when}] " if when else ""
    return f"{prefix}{item.modality} {item.id}"


# -- helpers ---------------------------------------------------------------------------------------


def _effective_times(stream: Iterable[MemoryEvent]) -> Iterator[tuple[float, MemoryEvent]]:
    last = float("-inf")
    for event in stream:
        if event.time is not None:
            last = event.time
        yield last, event


def _first_moment(conversation: Conversation) -> datetime | None:
    moments = [s.parsed_date for s in conversation.sessions if s.parsed_date is not None]
    moments += [r.time for r in conversation.iter_rounds() if r.time is not None]
    return min(moments, key=_naive) if moments else None


def _naive(moment: datetime) -> datetime:
    # Released data mixes bare dates and zone-less times; comparing them needs one convention.
    return moment.replace(tzinfo=None)


def _seconds_between(first: datetime, moment: datetime) -> float:
    return (_naive(moment) - _naive(first)).total_seconds()


def _round_text(rnd: Round) -> str:
    lines = [f"{rnd.speaker or 'user'}: {rnd.text}"]
    undescribed = any(_description(a) is None for a in rnd.attachments)
    if rnd.attachments_description and undescribed:
        lines.append(f"(attached: {rnd.attachments_description})")
    if rnd.response:
        lines.append(f"assistant: {rnd.response}")
    return "\n".join(lines)


def _description(attachment: Attachment) -> str | None:
    media = attachment.media
    return attachment.description or (media.description if isinstance(media, ImageRef) else None)


def _attachment_event(
    rnd: Round, n: int, attachment: Attachment, t: float, meta: dict[str, Any]
) -> MemoryEvent:
    kind: EventKind = "image"
    if isinstance(attachment.media, PdfPageRef):
        kind = "pdf_page"
    elif isinstance(attachment.media, VideoRef):
        kind = "text"  # no video kind among events: its description stands for it
    name = attachment.id or f"file-{n + 1}"
    return MemoryEvent(
        id=attachment_item_id(rnd.id, name), kind=kind, time=t,
        text=_description(attachment) or "",
        media=attachment.media, speaker=rnd.speaker,
        metadata={**meta, "attachment_id": attachment.id},
    )


def _check_unique_ids(key: str, events: Sequence[MemoryEvent]) -> None:
    seen: set[str] = set()
    for event in events:
        if event.id in seen:
            raise SchemaError(f"two events of memory key {key!r} share an id",
                              record=event.id, field="id")
        seen.add(event.id)


def _unsendable_images(events: Sequence[MemoryEvent]) -> list[MediaError]:
    """The errors of the images (files and inline images; a web link is never read) that fail
    the pixel bound or are no image, from their headers (``m3kit.media.image.check_image``),
    each naming its event. A missing file still raises, as in ``_read_images``."""
    from m3kit.media.image import check_image

    unusable: list[MediaError] = []
    for event in events:
        if (event.kind in VISUAL_KINDS and isinstance(event.media, ImageRef)
                and not event.media.remote):
            try:
                check_image(event.media.path, record=event.id)
            except (CorruptMediaError, MediaTooLargeError) as exc:
                unusable.append(exc)
    return unusable


def _read_images(
    events: Sequence[MemoryEvent], reader: TextReader
) -> tuple[dict[str, str], list[MediaError]]:
    """OCR text of every visual event with an image source (a file or an inline image; a web
    link is not read), by event id, and the errors of the images that cannot be decoded
    (damaged, malformed inline data, over the pixel bound), each naming its event. A missing
    file still raises: a frame the store evicted is no property of the data."""
    from m3kit.media.image import read_image_rgb

    # A web image is never fetched (m3kit runs offline; the loader reports it once): its
    # released caption is its whole surrogate.
    todo = [(e, e.media) for e in events if e.kind in VISUAL_KINDS
            and isinstance(e.media, ImageRef) and not e.media.remote]
    texts: dict[str, str] = {}
    unusable: list[MediaError] = []
    for start in range(0, len(todo), OCR_BATCH):
        batch: list[MemoryEvent] = []
        images: list[np.ndarray] = []
        for event, media in todo[start : start + OCR_BATCH]:
            try:
                # upright per its EXIF orientation, pixel-bounded, typed errors
                images.append(read_image_rgb(media.path, record=event.id))
            except (CorruptMediaError, MediaTooLargeError) as exc:
                unusable.append(exc)
                continue
            batch.append(event)
        for event, lines in zip(batch, reader.read(images) if images else [], strict=True):
            texts[event.id] = " ".join(line.text for line in lines)
    return texts, unusable


def _item(key: str, event: MemoryEvent, ocr: str) -> MemoryItem:
    modality: Modality = "text" if event.kind == "round" else event.kind
    text = event.text.strip()
    metadata = dict(event.metadata)
    if event.kind in VISUAL_KINDS:
        metadata.update(description=text, ocr=ocr)
        text = "\n".join(chain([text] if text else [], [f"Text in image: {ocr}"] if ocr else []))
    if event.speaker is not None:
        metadata.setdefault("speaker", event.speaker)
    return MemoryItem(
        id=event.id, key=key, event_id=event.id, modality=modality, text=text,
        source=event.media, time=event.time, metadata=metadata,
    )
