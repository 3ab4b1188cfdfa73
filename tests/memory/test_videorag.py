"""``videorag``: the causal cut at shard and item level, stored-index reuse with no perception
run again, incremental ingest, a damaged store rebuilt, the retrieval request and its fallback."""

from __future__ import annotations

import json

import pytest

from m3kit.memory import make_memory
from m3kit.memory.store import IndexStore
from m3kit.memory.videorag import VideoRagMemory

from .longvideo import (
    PER_SCENE,
    STEP,
    counting_perceivers,
    frame_events,
    speech_event,
    sync,
)

QUESTION = "what is the garage door code"


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """RapidOCR behind a cache of this module: a frame's pixels are read once."""
    from m3kit.perception import CachedTextReader, RapidTextReader

    return CachedTextReader(RapidTextReader(), tmp_path_factory.mktemp("ocr"))


def memory(tmp_path, embedder, perceivers, **kw) -> VideoRagMemory:
    return VideoRagMemory.from_settings(embedder=embedder, perceivers=perceivers,
                                        speech="transcripts", store=tmp_path / "store",
                                        shard_seconds=600.0, **kw)


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    return [*frame_events(tmp_path_factory.mktemp("frames")), speech_event()]


@sync
async def test_registered_by_name(tmp_path):
    assert isinstance(make_memory("videorag", store=tmp_path), VideoRagMemory)


@sync
async def test_three_databases_per_shard(tmp_path, embedder, reader, events):
    mem = memory(tmp_path, embedder, counting_perceivers(reader))
    await mem.ingest("v", events)
    by_db: dict[str, set[int]] = {}
    for item in mem.items("v"):
        if item.metadata.get("db"):
            by_db.setdefault(item.metadata["db"], set()).add(item.metadata["shard"])
    assert by_db["OCR"] == {0, 1, 2} and by_db["DET"] == {0, 1, 2}  # 10-minute shards here
    assert by_db["ASR"] == {2}
    ocr = [i for i in mem.items("v") if i.metadata.get("db") == "OCR"]
    assert any("7731" in i.text for i in ocr)
    det = next(i for i in mem.items("v") if i.metadata.get("db") == "DET")
    assert det.text.startswith("(colour regions: no object detector ships offline)")
    # static scenes are read on keyframes only: fewer OCR calls than frames
    report = mem.report("v")
    assert report is not None and report.origin == "built"
    assert 3 <= report.cost.ocr_images < report.cost.frames_decoded == 3 * PER_SCENE


@sync
async def test_causal_cut_over_shards_and_items(tmp_path, embedder, reader, events):
    # cosine gate 0: every visible text competes, so only the cut can keep one out
    mem = memory(tmp_path, embedder, counting_perceivers(reader), min_cosine=0.0)
    await mem.ingest("v", events)
    garage_start = 2 * PER_SCENE * STEP  # the garage scene (shard 2) starts here
    before = await mem.retrieve("v", QUESTION, time=garage_start - 1)
    assert before and all(i.time <= garage_start - 1 for i in before)
    assert all(i.metadata["shard"] < 2 for i in before)
    assert not any("7731" in i.text for i in before)
    after = await mem.retrieve("v", QUESTION, time=garage_start + 60)
    assert "7731" in after[0].text and after[0].time <= garage_start + 60
    # no shard after the cut, not even its speech
    assert all(i.id != "speech-1" for i in await mem.retrieve("v", "spare keys drawer",
                                                              time=1290.0))
    assert any(i.id == "speech-1" for i in await mem.retrieve("v", "spare keys drawer",
                                                              time=1300.0))


@sync
async def test_answer_frames_from_the_best_shard_up_to_the_cut(tmp_path, embedder, reader,
                                                               events, recorder):
    mem = memory(tmp_path, embedder, counting_perceivers(reader), frames=4, request=False)
    await mem.ingest("v", events)
    cut = 2 * PER_SCENE * STEP + 100.0
    result = await mem.answer("v", "Q?", recorder.model, time=cut, query=QUESTION)
    frames = result.metadata["frames"]
    assert result.metadata["shard"] == 2 and len(frames) == 4
    assert all(2 * PER_SCENE * STEP <= int(f.split("-")[1]) * STEP <= cut for f in frames)
    assert len(recorder.last_images()) == 4
    assert "GARAGE DOOR CODE 7731" in recorder.last_text()
    assert result.metadata["request"] == "off"


@sync
async def test_second_run_recomputes_nothing(tmp_path, embedder, reader, events):
    first = counting_perceivers(reader)
    await memory(tmp_path, embedder, first).ingest("v", events)
    assert first.reader.images > 0
    again = counting_perceivers(reader)
    mem = memory(tmp_path, embedder, again)
    await mem.ingest("v", events)
    assert again.reader.images == again.detector.images == 0
    report = mem.report("v")
    assert report.origin == "stored" and report.embedded == 0 and report.cost.frames_decoded == 0
    assert "7731" in (await mem.retrieve("v", QUESTION))[0].text


@sync
async def test_incremental_ingest_perceives_only_new_events(tmp_path, embedder, reader,
                                                            tmp_path_factory):
    folder = tmp_path_factory.mktemp("grow")
    early = frame_events(folder, 2 * PER_SCENE)
    mem = memory(tmp_path, embedder, counting_perceivers(reader))
    await mem.ingest("v", early)
    grown = counting_perceivers(reader)
    mem = memory(tmp_path, embedder, grown)
    await mem.ingest("v", [*early, *frame_events(folder, 3 * PER_SCENE, start=2 * PER_SCENE)])
    report = mem.report("v")
    assert report.origin == "extended" and report.new_events == PER_SCENE
    assert report.cost.frames_decoded == PER_SCENE
    assert 0 < grown.reader.images <= PER_SCENE
    hits = await mem.retrieve("v", QUESTION)
    assert "7731" in hits[0].text
    assert not await mem.retrieve("v", QUESTION, time=2 * PER_SCENE * STEP - 1) or all(
        "7731" not in i.text for i in await mem.retrieve("v", QUESTION,
                                                        time=2 * PER_SCENE * STEP - 1))


@sync
async def test_damaged_store_is_reported_and_rebuilt(tmp_path, embedder, reader, events):
    mem = memory(tmp_path, embedder, counting_perceivers(reader))
    await mem.ingest("v", events)
    folder = IndexStore(tmp_path / "store").folder(mem.store_config(), "v")
    version = folder / (folder / "HEAD").read_text()
    (version / "arrays.npz").write_bytes(b"not numpy")
    again = counting_perceivers(reader)
    mem = memory(tmp_path, embedder, again)
    await mem.ingest("v", events)
    assert mem.report("v").origin == "built" and mem.report("v").corrupt_store
    (skip,) = mem.skipped("v")
    assert skip.file.endswith("arrays.npz") and "checksum" in skip.reason
    assert again.reader.images > 0
    assert "7731" in (await mem.retrieve("v", QUESTION))[0].text


@sync
async def test_retrieval_request_and_its_fallback(tmp_path, embedder, reader, events):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    replies = iter([
        json.dumps({"ASR": "spare keys", "DET": ["green region"], "TYPE": ["number"]}),
        "ANSWER", "I think you should look at the garage.", "ANSWER",
    ])

    def respond(*_args: object) -> ModelOutput:
        output = ModelOutput.from_content(model="mockllm", content=next(replies))
        output.usage = ModelUsage(input_tokens=10, output_tokens=2)  # no tokenizer download
        return output

    model = get_model("mockllm/model", memoize=False, custom_outputs=respond)
    mem = memory(tmp_path, embedder, counting_perceivers(reader), frames=0)
    await mem.ingest("v", events)
    cut = 3 * PER_SCENE * STEP
    asked = await mem.answer("v", "Q?", model, time=cut, query=QUESTION)
    assert asked.metadata["request"] == "model"
    assert "speech-1" in asked.usage.retrieved_ids
    dets = [i for i in asked.usage.retrieved_ids if i.startswith("det:")]
    assert dets and all(int(d.split("-")[1]) >= 2 * PER_SCENE for d in dets)
    fallback = await mem.answer("v", "Q?", model, time=cut, query=QUESTION)
    assert fallback.metadata["request"].startswith("fallback:")
    assert any(i.startswith("ocr:") for i in fallback.usage.retrieved_ids)


@sync
async def test_a_person_s_day_is_shown_in_dates(tmp_path, embedder, reader, events, recorder):
    """Events on the unix clock, labelled with their dates (a person's timeline): what the model
    reads is dated as they are (keyframe text, detections, speech), never hours since 1970."""
    import re

    from m3kit.memory.events import wall_clock

    from .longvideo import DAY_ONE, dated

    mem = memory(tmp_path, embedder, counting_perceivers(reader), frames=0, request=False)
    await mem.ingest("v", dated(events))
    cut = DAY_ONE + 2 * PER_SCENE * STEP + 100.0
    await mem.answer("v", "Q?", recorder.model, time=cut, query=QUESTION)
    text = recorder.last_text()
    assert "GARAGE DOOR CODE 7731" in text
    stamps = re.findall(r"^\[([^\]]*)\]", text, flags=re.MULTILINE)
    assert stamps and all(s.startswith("2024-05-01 08:") for s in stamps), stamps
    garage = next(i for i in mem.items("v") if "GARAGE" in i.text and i.metadata["db"] == "OCR")
    assert garage.metadata["when"] == wall_clock(garage.time)
    assert not re.search(r"\[\d{5,}:", text)  # no "[476264:..." hours since 1970


@pytest.mark.parametrize(("settings", "address"), [
    ({}, "e0bc13ad2ff83462e0ec29a6"),
    ({"threshold": 0.5}, "28d2a59a251d4cd3c0ca8bfc"),
    ({"min_cosine": 0.5}, "28d2a59a251d4cd3c0ca8bfc"),
    ({"shard_seconds": 60.0, "ocr": False}, "16a89f14077bb1a61b53210b"),
])
def test_stored_indexes_keep_their_address(settings, address) -> None:
    """The addresses of indexes stored before the cosine gate became the retrieval record's
    ``min_cosine`` (computed with that code, 2b1a305^): they are still found, not rebuilt.
    ``threshold``, the gate's former name, is still a setting."""
    from m3kit.memory.store import config_hash
    from m3kit.perception.embeddings import MiniLMEmbedder

    built = make_memory("videorag", embedder=MiniLMEmbedder(), store=False, **settings)
    assert config_hash(built.store_config()) == address


def test_the_gate_is_given_once() -> None:
    with pytest.raises(ValueError, match="give the cosine gate once"):
        make_memory("videorag", threshold=0.5, min_cosine=0.2, store=False)
