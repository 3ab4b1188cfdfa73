"""Media → events → items: frame times from the frame store, transcript timing, conversation
clocks, stream merging, and text surrogates that keep their raw source."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.errors import MediaNotFoundError, SamplingError, SchemaError
from m3kit.media import FrameStore
from m3kit.memory import (
    MemoryEvent,
    conversation_events,
    frame_events,
    item_label,
    items_from_events,
    merge_events,
    transcript_events,
)
from m3kit.perception import TranscriptSegment
from m3kit.schema import Attachment, Conversation, ImageRef, PdfPageRef, Round, Session


def test_frame_events_point_at_stored_frames(small_video: Path, tmp_path: Path) -> None:
    store = FrameStore(tmp_path / "store")
    events = frame_events(store, small_video, [0, 25, 99], time_offset=10.0, id_prefix="v1/")
    assert [e.id for e in events] == ["v1/frame-000000", "v1/frame-000025", "v1/frame-000099"]
    assert all(e.kind == "frame" for e in events)
    # 25 fps: frame i is at i / 25 s on the video's clock, shifted by the offset.
    np.testing.assert_allclose([e.time for e in events], [10.0, 11.0, 13.96], atol=1e-6)
    for event, index in zip(events, [0, 25, 99], strict=True):
        assert isinstance(event.media, ImageRef)
        assert Path(event.media.path).is_file()
        assert event.metadata["frame_index"] == index
        assert event.metadata["video"] == str(small_video)
        # The stored image is that frame (the store keys by content, frame and resize).
        with Image.open(event.media.path) as stored:
            assert stored.size == (160, 120)
    with pytest.raises(SamplingError, match="outside the video's 100 frames"):
        frame_events(store, small_video, [100])


def test_transcript_events_are_timed_at_the_segment_end() -> None:
    segments = [TranscriptSegment(start=1.0, end=2.5, text=" hello there "),
                TranscriptSegment(start=2.5, end=3.0, text="  "),
                TranscriptSegment(start=3.0, end=4.0, text="bye")]
    events = transcript_events(segments, time_offset=100.0, speaker="narrator")
    assert [(e.id, e.time, e.text) for e in events] == [
        ("speech-00000", 102.5, "hello there"), ("speech-00002", 104.0, "bye")]
    assert events[0].metadata["start"] == 101.0
    assert events[0].speaker == "narrator"


def _conversation(dated: bool) -> Conversation:
    photo = ImageRef(path="/data/img_1.jpg")
    return Conversation(id="c1", sessions=[
        Session(id="D1", date="2023-03-01" if dated else None, rounds=[
            Round(id="D1:1", speaker="Alex", text="Look at this puppy.", response="Cute!",
                  attachments=[Attachment(media=photo, description="a puppy", id="img_1")]),
            Round(id="D1:2", text="Also this page.",
                  attachments=[Attachment(media=PdfPageRef(path="/data/a.pdf", page=2))],
                  attachments_description="a lab report"),
        ]),
        Session(id="D2", date="2023-03-03" if dated else "someday", rounds=[
            Round(id="D2:1", text="Back again."),
        ]),
    ])


def test_conversation_events_dated() -> None:
    events = conversation_events(_conversation(dated=True))
    assert [(e.id, e.kind, e.time) for e in events] == [
        ("D1:1", "round", 0.0),
        ("D1:1/img_1", "image", 0.0),  # an attachment shares its round's moment
        ("D1:2", "round", 1.0),
        ("D1:2/file-1", "pdf_page", 1.0),
        ("D2:1", "round", 2 * 86400.0),  # two days after the first session
    ]
    assert events[0].text == "Alex: Look at this puppy.\nassistant: Cute!"
    assert events[1].text == "a puppy"
    assert events[1].media == ImageRef(path="/data/img_1.jpg")
    # No per-file description: the round carries the released description of its files.
    assert events[2].text == "user: Also this page.\n(attached: a lab report)"
    assert events[4].metadata["when"] == "D2 2023-03-03"


def test_conversation_events_without_dates_count_rounds() -> None:
    events = conversation_events(_conversation(dated=False))
    assert [e.time for e in events if e.kind == "round"] == [0.0, 1.0, 2.0]


def test_conversation_round_times_never_go_backwards() -> None:
    conversation = Conversation(id="c", sessions=[
        Session(id="S1", date="2023-03-01", rounds=[
            Round(id=f"r{n}", text="x", time=datetime(2023, 3, 1, 9, 0)) for n in range(3)]),
    ])
    times = [e.time for e in conversation_events(conversation)]
    assert times == [32400.0, 32401.0, 32402.0]


def test_merge_events_is_stable_and_keeps_untimed_events_in_place() -> None:
    frames = [MemoryEvent(id=f"f{t}", kind="frame", time=float(t)) for t in (0, 2, 4)]
    speech = [MemoryEvent(id="s1", kind="transcript", time=2.0, text="a"),
              MemoryEvent(id="s-untimed", kind="text", text="b"),
              MemoryEvent(id="s5", kind="transcript", time=5.0, text="c")]
    merged = merge_events(frames, speech)
    assert [e.id for e in merged] == ["f0", "f2", "s1", "s-untimed", "f4", "s5"]


def test_items_keep_modality_source_and_description(image_events) -> None:
    pdf = MemoryEvent(id="doc/p3", kind="pdf_page", time=9.0, text="Results table",
                      media=PdfPageRef(path="/data/a.pdf", page=3))
    items = items_from_events("k", [pdf, *image_events])  # no reader: no OCR
    assert [i.id for i in items] == ["img-0", "img-1", "img-2", "img-3", "doc/p3"]  # time order
    assert all(i.key == "k" and i.event_id == i.id for i in items)
    assert [i.modality for i in items] == ["image"] * 4 + ["pdf_page"]
    assert items[0].text == "photo number 0"
    assert items[0].source == image_events[0].media
    assert items[4].source == PdfPageRef(path="/data/a.pdf", page=3)
    assert item_label(items[4]) == "[0:00:09.0] pdf_page doc/p3"


def test_items_reject_duplicate_ids_and_missing_images(reader, tmp_path: Path) -> None:
    twice = [MemoryEvent(id="x", kind="text", text="a"), MemoryEvent(id="x", kind="text")]
    with pytest.raises(SchemaError, match="'k1' share an id"):
        items_from_events("k1", twice)
    gone = MemoryEvent(id="f", kind="frame", time=0.0,
                       media=ImageRef(path=str(tmp_path / "evicted.jpg")))
    with pytest.raises(MediaNotFoundError, match="evicted.jpg: record f"):
        items_from_events("k1", [gone], reader=reader)


def test_times_are_written_as_the_stream_s_events_write_theirs() -> None:
    """A person's events labelled with their dates make every time a memory names a date; a
    video's events (or unlabelled ones) keep h:mm:ss.s."""
    from m3kit.memory.events import clock, span_label, time_label, wall_clock

    t = 1_714_550_400.0  # 2024-05-01 08:00:00 UTC
    dated = MemoryEvent(id="f", kind="frame", time=t, metadata={"when": wall_clock(t)})
    video = MemoryEvent(id="g", kind="frame", time=30.0, metadata={"when": clock(30.0)})
    assert time_label([dated]) is wall_clock and time_label([video]) is clock
    assert time_label([MemoryEvent(id="h", kind="frame", time=t)]) is clock
    assert span_label(t, t + 30.0, wall_clock) == "2024-05-01 08:00:00-08:00:30"
    # across midnight the end keeps its date
    assert span_label(t + 57_590.0, t + 57_610.0, wall_clock) == (
        "2024-05-01 23:59:50-2024-05-02 00:00:10")
    assert span_label(30.0, 60.0) == "0:00:30.0-0:01:00.0"
