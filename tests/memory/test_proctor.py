"""``proctor`` (M3Proctor): surrogate chunks with modality tags, the bias vector, re-ranking,
the diversity constraint, the confidence test and the raw-media cascade.

Real pieces: MiniLM embeddings, faiss, RapidOCR on a rendered number-rich chart, a PDF written
by matplotlib (its text layer read back, its page rendered). The answering models are inspect's
``mockllm`` (they record what the memory sent) and, once, the offline ``m3kit/builtin``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from m3kit.memory import (
    AnswerRequest,
    MemoryItem,
    ProctorMemory,
    conversation_events,
    make_memory,
)
from m3kit.memory.proctor import (
    Bias,
    artifact_cue,
    asks_quantity,
    build_chunks,
    chunk_raw,
    chunk_tags,
    confidence,
    diversify,
    evidence_bias,
    fused_evidence,
    grounded,
    index_text,
    is_page,
    lexical_bias,
    modality_share,
    parse_bias,
    rerank,
    visual_text,
)
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import Attachment, Conversation, ImageRef, PdfPageRef, Round, Session
from m3kit.schema.skipped import SkippedRecord

from .conftest import CACHED_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS, blank_image, render_text

# -- pure parts ------------------------------------------------------------------------------------


def test_bias_reply_is_parsed_and_non_json_is_refused() -> None:
    reply = 'Sure. {"image": 1, "document": 0, "chart": true}'
    assert parse_bias(reply) == Bias(image=1, document=0, chart=1, source="model")
    assert parse_bias("The medial saphenous vein.") is None  # what m3kit/builtin replies
    assert parse_bias('{"image": 1}') is None  # a modality missing
    assert parse_bias('{"image": 2, "document": 0, "chart": 0}') is None


def test_lexical_bias_and_artifact_cues() -> None:
    fm = "Which image shows a gray cat examined with an otoscope? Return img_<number>."
    assert lexical_bias(fm).vector() == {"image": 1, "document": 0, "chart": 0}
    assert lexical_bias("What does page 3 of the PDF report say about the bar chart?").vector() \
        == {"image": 0, "document": 1, "chart": 1}
    assert not lexical_bias("Which vein is first choice for venipuncture in cats?").any
    assert artifact_cue(fm, "image") == 1.0
    assert artifact_cue("What colour was the collar she was wearing?", "image") == 0.0


def test_quantity_questions_and_the_evidence_bias() -> None:
    """mr asks for a number, share, rank or arithmetic relation read from a chart."""
    for q in ("What percentage of adults say it is not morally wrong?",
              "By how many percentage points does the rating exceed the other?",
              "Compute the average across the four bars.", "How many doses were given?",
              "Which group has the highest rating?", "What sample size (n) is reported?"):
        assert asks_quantity(q), q
    assert not asks_quantity("Which vein is first choice for venipuncture in cats?")
    lexical = lexical_bias("What percentage of adults say it is not morally wrong?")
    assert not lexical.any  # the question names no chart: the detector sees nothing visual
    photo = frozenset({"image"})
    q = "What percentage of adults say it is not morally wrong?"
    # The best round carries an image whose caption states no number: the value is in pixels.
    need = evidence_bias(lexical, q, photo, "Public opinion on a moral issue by party")
    assert need.vector() == {"image": 1, "document": 0, "chart": 0}
    assert need.source == "lexical+evidence"
    # Chart OCR that states numbers answers in text; a text round, or no value asked: nothing.
    assert evidence_bias(lexical, q, frozenset({"chart", "image"}), "Values: 63 34 21") == lexical
    assert evidence_bias(lexical, q, frozenset(), "") == lexical
    assert evidence_bias(lexical, "Which vein is first choice?", photo, "A cat") == lexical
    # A need the detector already found is kept as it was.
    seen = Bias(image=1, source="model")
    assert evidence_bias(seen, q, photo, "A chart") is seen


def _chunk(chunk_id: str, session: str, tags: list[str], *, summary: bool = False) -> MemoryItem:
    meta: dict[str, Any] = {"session_id": session, "tags": tags, "raw": []}
    meta["chunk"] = "session_summary" if summary else "round"
    return MemoryItem(id=chunk_id, key="k", event_id=chunk_id, modality="text", text=chunk_id,
                      metadata=meta)


def test_rerank_adds_alpha_only_where_bias_and_tag_meet() -> None:
    chunks = {c.id: c for c in (_chunk("a", "D1", []), _chunk("b", "D1", ["image"]),
                                _chunk("c", "D2", ["document"]), _chunk("d", "D2", ["chart"]))}
    hits = [("a", 0.70), ("b", 0.60), ("c", 0.50), ("d", 0.65)]
    alphas = {"image": 0.20, "document": 0.25, "chart": 0.15}
    ranked = rerank(hits, chunks, {"image": 1, "document": 1, "chart": 0}, alphas)
    # b: .60 + .20 = .80; c: .50 + .25 = .75; a: .70; d: .65 (chart not needed: no bonus).
    assert [i for i, _ in ranked] == ["b", "c", "a", "d"]
    assert [round(s, 4) for _, s in ranked] == [0.80, 0.75, 0.70, 0.65]
    unbiased = rerank(hits, chunks, {"image": 0, "document": 0, "chart": 0}, alphas)
    assert [i for i, _ in unbiased] == ["a", "d", "b", "c"]


def test_diversify_keeps_a_summary_and_a_second_session() -> None:
    chunks = {c.id: c for c in (_chunk("r1", "D1", []), _chunk("r2", "D1", []),
                                _chunk("r3", "D1", []), _chunk("r4", "D2", []),
                                _chunk("session:D1", "D1", [], summary=True))}
    ranked = [("r1", .9), ("r2", .8), ("r3", .7), ("r4", .6), ("session:D1", .5)]
    # Top 3 is r1 r2 r3: no summary (session:D1 replaces r3), one session (r4 replaces r2).
    assert diversify(ranked, chunks, 3) == ["r1", "r4", "session:D1"]
    # A summary outside the pool comes from the fallback.
    pool = ranked[:4]
    assert diversify(pool, chunks, 3, fallback_summary="session:D1") == [
        "r1", "r4", "session:D1"]
    assert diversify(ranked, chunks, 5) == ["r1", "r2", "r3", "r4", "session:D1"]


def test_confidence_grounding_and_fused_evidence() -> None:
    assert confidence("") == 0.0
    assert confidence("It is not mentioned in the conversation.") == 0.0
    assert confidence("img_60", {"m3kit": {"evidence": [{"score": 0.41}]}}) == 0.41
    assert confidence("img_60") == 1.0  # a provider with no score is trusted
    chunk = _chunk("r", "D1", ["image"]).model_copy(update={"text": "a gray cat and an otoscope"})
    assert grounded("Gray cat, otoscope", [chunk])  # 2 of 2 content words
    assert not grounded("a brown dog with a muzzle", [chunk])
    # A value question rests on a chunk only through a number that chunk states.
    bars = chunk.model_copy(update={"text": "Moral views by party\nassistant: 87% of liberals"})
    assert grounded("Moral views by party", [bars])  # 4 of 4 content words...
    assert not grounded("Moral views by party", [bars], quantity=True)  # ...but no value
    assert grounded("87%", [bars], quantity=True)
    assert not grounded("63%", [bars], quantity=True)
    # s = .4 share + .4 bias + .2 cue: .4 * .125 + .4 = .45 (clears the visual gate exactly).
    assert fused_evidence(0.125, 1, 0.0) == pytest.approx(0.45)
    assert fused_evidence(0.5, 0, 1.0) == pytest.approx(0.40)  # .2 + .2: not needed, blocked
    kept = [_chunk("a", "D1", ["image"]), _chunk("b", "D1", []), _chunk("c", "D2", ["image"]),
            _chunk("d", "D2", ["document"])]
    assert modality_share(kept, "image") == 0.5 and modality_share([], "image") == 0.0


# -- the index -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clinic(tmp_path_factory: pytest.TempPathFactory) -> Conversation:
    """Two sessions: photos (one described, one a number-rich chart without a description, one
    missing), a PDF page with a text layer, and plain rounds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = tmp_path_factory.mktemp("clinic")
    cat = blank_image(folder / "img_1.jpg", 90)
    chart = render_text(folder / "img_2.jpg", "Glucose 98 112 140 165 188 203 mg/dL",
                        size=(640, 96))  # six numbers: number-rich
    figure = plt.figure(figsize=(4, 3))
    figure.text(0.1, 0.5, "Dosage table: amoxicillin 12.5 mg per kg twice daily.")
    figure.savefig(folder / "protocol.pdf", format="pdf")
    plt.close(figure)
    return Conversation(id="vet", sessions=[
        Session(id="D1", date="2023-03-01", rounds=[
            Round(id="D1:1", speaker="Alex", text="Here is the gray cat on the exam table.",
                  response="The cat looks alert.", attachments=[
                      Attachment(media=ImageRef(path=str(cat)), id="img_1",
                                 description="A gray cat examined with an otoscope."),
                      Attachment(media=ImageRef(path=str(folder / "img_9.jpg")), id="img_9",
                                 description="A photo that was never shipped.")]),
            Round(id="D1:2", speaker="Alex", text="Her glucose curve came back today.",
                  response="Those values trend upward.", attachments=[
                      Attachment(media=ImageRef(path=str(chart)), id="img_2")]),
        ]),
        Session(id="D2", date="2023-03-02", rounds=[
            Round(id="D2:1", speaker="Alex", text="Which gloves should the clinic stock?",
                  response="Nitrile gloves from Ansell."),
            Round(id="D2:2", speaker="Alex", text="I attached our dosing protocol.",
                  response="It follows the usual guidance.", attachments=[
                      Attachment(media=PdfPageRef(path=str(folder / "protocol.pdf"), page=0),
                                 id="protocol.pdf#page=1")]),
        ]),
    ])


@pytest.fixture(scope="module")
def built(clinic, reader) -> tuple[list[MemoryItem], list[SkippedRecord]]:
    return build_chunks("vet", conversation_events(clinic), reader=reader)


def test_chunks_carry_surrogates_tags_and_raw_refs(built, clinic) -> None:
    chunks, skipped = built
    page_id = "D2:2/protocol.pdf#page=1"
    assert [c.id for c in chunks] == ["D1:1", "D1:2", "session:D1", "D2:1", "D2:2", page_id,
                                      "session:D2"]
    by_id = {c.id: c for c in chunks}
    first = by_id["D1:1"]
    assert chunk_tags(first) == {"image"}
    assert first.text.startswith("Alex: Here is the gray cat on the exam table.\n[img_1 (image)]"
                                 " A gray cat examined with an otoscope.")
    assert first.text.endswith("assistant: The cat looks alert.")  # the reply comes last
    # The missing photo is reported and left out; the round keeps its text and its caption.
    assert [name for _, _, name in chunk_raw(first)] == ["img_1"]
    (missing,) = skipped
    assert (missing.record, missing.reason) == ("D1:1/img_9", "file not found")
    # No description: OCR gives a number-rich transcription, so the image is a chart too.
    chart = by_id["D1:2"]
    assert chunk_tags(chart) == {"chart", "image"}
    assert "[img_2 (chart, image)] Values:" in chart.text and "165" in chart.text
    pdf = by_id["D2:2"]
    assert chunk_tags(pdf) == {"document"}
    assert ("[protocol.pdf (document), 1 page(s), each a chunk of its own] Digest: Dosage "
            "table: amoxicillin 12.5 mg per kg twice daily.") in pdf.text
    assert chunk_raw(pdf) == []  # the page's raw source is its own chunk's
    (modality, ref, name), = chunk_raw(by_id[page_id])
    assert (modality, name) == ("document", "protocol.pdf#page=1")
    assert isinstance(ref, PdfPageRef) and ref.page == 0
    # What the visuals say, without the round's words: the caption, the chart's OCR values.
    assert visual_text(first) == "A gray cat examined with an otoscope.\nA photo that was never " \
        "shipped."
    assert visual_text(chart).startswith("Values:") and visual_text(pdf) == ""
    summary = by_id["session:D2"]
    assert summary.text == (
        "Session D2 2023-03-02: 2 rounds.\n"
        "D2:1: Which gloves should the clinic stock?\n"
        "D2:2: I attached our dosing protocol. [files: protocol.pdf#page=1]"
    )
    assert chunk_tags(by_id["D2:1"]) == set()
    # The page is a chunk of its own (counted as its round); the round names it by its digest
    # and keeps it as a raw source; the page's text layer is in the page chunk only.
    page = by_id[page_id]
    assert is_page(page) and page.metadata["round_id"] == "D2:2"
    assert chunk_tags(page) == {"document"}
    assert "Page text: " in page.text and "Page text: " not in pdf.text
    assert page.text.startswith("[protocol.pdf#page=1 (document) of D2:2]")
    assert index_text(page).startswith("protocol.pdf#page=1 ") and index_text(pdf) == pdf.text


def test_a_long_page_is_shown_within_its_budget_and_indexed_whole(clinic, reader) -> None:
    """``page_words`` bounds what the prompt shows of a page, not what the index reads;
    ``pdf_pages="in_round"`` is the chunking before: the page's text inside its round."""
    chunks, _ = build_chunks("vet", conversation_events(clinic), reader=reader, page_words=3)
    page = next(c for c in chunks if is_page(c))
    shown = page.text.split("Page text: ", 1)[1]
    assert len(shown.split()) == 4 and shown.endswith(" …")  # 3 words and the cut mark
    assert page.metadata["page_words"] > 3
    whole = index_text(page).split("Page text: ", 1)[1]
    assert len(whole.split()) == page.metadata["page_words"]
    in_round, _ = build_chunks("vet", conversation_events(clinic), reader=reader,
                               pdf_pages="in_round")
    assert not any(is_page(c) for c in in_round)
    assert f"Page text: {whole}" in next(c for c in in_round if c.id == "D2:2").text
    with pytest.raises(ValueError, match="page_words must be positive"):
        build_chunks("vet", [], page_words=0)


# -- answering -------------------------------------------------------------------------------------


def _json_bias_model(bias: str, reply: str = "img_1") -> tuple[Any, list[list[Any]]]:
    """A mockllm that answers the bias call with ``bias`` and anything else with ``reply``."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls: list[list[Any]] = []

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        calls.append(list(messages))
        text = messages[-1].text
        output = ModelOutput.from_content(model="mockllm",
                                          content=bias if "Reply with JSON" in text else reply)
        output.usage = ModelUsage(input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                                  input_tokens_cache_read=CACHED_TOKENS)
        return output

    return get_model("mockllm/model", custom_outputs=respond, memoize=False), calls


@pytest.fixture(scope="module")
def proctor(clinic, embedder, reader) -> ProctorMemory:
    memory = ProctorMemory(embedder=embedder, reader=reader, top_k=3,
                           retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("vet", conversation_events(clinic)))
    return memory


def test_text_question_stays_in_stage_one(proctor, recorder) -> None:
    """mockllm's reply is not JSON: the lexical detector stands in (no modality needed), the
    answer has no score so it is trusted, and nothing escalates."""
    question = "Which gloves should the clinic stock?"
    answer = asyncio.run(proctor.answer("vet", question, recorder.model, query=question))
    meta = answer.metadata
    assert meta["bias"] == {"image": 0, "document": 0, "chart": 0}
    assert meta["bias_source"] == "lexical-fallback"
    assert meta["escalated"] is False and meta["confidence"] == 1.0
    assert len(recorder.calls) == 2  # the bias call and Stage 1
    # Two calls of 150 prompt tokens (120 + 30 cached) and 7 completion tokens each.
    assert answer.usage.prompt_tokens == 2 * (INPUT_TOKENS + CACHED_TOKENS) == 300
    assert answer.usage.completion_tokens == 14
    assert answer.usage.images_sent == 0 and answer.usage.raw_media_escalations == 0
    assert answer.usage.index_build_seconds == proctor.build_seconds("vet") > 0
    ranked = answer.usage.retrieved_ids
    assert ranked[0] == "D2:1" and len(ranked) == 3
    assert any(i.startswith("session:") for i in ranked)  # a summary is always kept
    assert "D2:1: Alex: Which gloves should the clinic stock?" in recorder.last_text()
    # The bias is cached per question: asking again makes one call, Stage 1.
    asyncio.run(proctor.answer("vet", question, recorder.model, query=question))
    assert len(recorder.calls) == 3


def test_image_question_escalates_to_the_raw_photo(proctor) -> None:
    """The model's JSON says image; its Stage-1 answer "img_1"... is grounded in no image
    chunk's words, so the bias is unmet; the image share of the 3 kept chunks and the cue
    clear the gate, and Stage 2 sends the photos of the kept image chunks."""
    model, calls = _json_bias_model('{"image": 1, "document": 0, "chart": 0}',
                                    reply="a brown dog")
    question = "Which image shows the gray cat with an otoscope?"
    answer = asyncio.run(proctor.answer("vet", question, model, query=question))
    meta = answer.metadata
    assert meta["bias_source"] == "model" and meta["unmet"] == ["image"]
    kept = answer.usage.retrieved_ids
    assert kept[0] == "D1:1"  # cosine plus the image bonus
    share = sum(c in ("D1:1", "D1:2") for c in kept) / 3
    # s_image = .4 * share + .4 * 1 + .2 * 1 (the question says "image").
    assert meta["fused_evidence"]["image"] == pytest.approx(0.4 * share + 0.6, abs=1e-4)
    assert meta["escalated"] is True and meta["escalated_modalities"] == ["image"]
    assert len(calls) == 3  # bias, Stage 1, Stage 2
    stage2 = calls[-1][0]
    images = [p for p in stage2.content if p.type == "image"]
    assert answer.usage.images_sent == len(images) == sum(c in ("D1:1", "D1:2") for c in kept)
    assert answer.usage.raw_media_escalations == 1
    assert answer.usage.prompt_tokens == 3 * 150
    assert "img_1:" in "\n".join(p.text for p in stage2.content if p.type == "text")


def test_document_question_sends_the_rendered_page(clinic, embedder, reader) -> None:
    """The page is a chunk of its own: kept (four slots, one of which the session summary
    and one another session's chunk take), its rendered page is what Stage 2 sends."""
    proctor = ProctorMemory(embedder=embedder, reader=reader, top_k=4,
                            retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(proctor.ingest("vet", conversation_events(clinic)))
    model, calls = _json_bias_model('{"image": 0, "document": 1, "chart": 0}',
                                    reply="I cannot tell")
    question = "What amoxicillin dose does page 1 of the protocol PDF give?"
    answer = asyncio.run(proctor.answer("vet", question, model, query=question))
    meta = answer.metadata
    assert meta["confidence"] == 0.0 and meta["escalated_modalities"] == ["document"]
    assert "D2:2/protocol.pdf#page=1" in answer.usage.retrieved_ids
    images = [p for p in calls[-1][0].content if p.type == "image"]
    assert len(images) == answer.usage.images_sent == 1
    assert images[0].image.startswith("data:image/png;base64,")


def test_value_asked_of_a_photo_escalates_to_its_pixels(proctor, recorder) -> None:
    """No visual cue in the question, so the detector needs nothing; but it asks for a count
    and the best round is the cat photo, whose caption states none: the evidence sets the image
    need, the Stage-1 reply ("recorded") states no number, so the bias is unmet and the photos
    go to Stage 2 (mockllm records)."""
    question = "How many ear mites were counted on the gray cat examined with an otoscope?"
    answer = asyncio.run(proctor.answer("vet", question, recorder.model, query=question))
    meta = answer.metadata
    assert answer.usage.retrieved_ids[0] == "D1:1"
    assert meta["bias_source"] == "lexical-fallback+evidence" and meta["asks_quantity"]
    assert meta["bias"] == {"image": 1, "document": 0, "chart": 0}
    assert meta["unmet"] == ["image"] and meta["escalated_modalities"] == ["image"]
    assert answer.usage.images_sent == len(recorder.last_images()) >= 1


def test_bias_without_evidence_does_not_escalate(proctor) -> None:
    """Unreliable but not visual: s_image = .4 * share + 0 + 0 stays under .45 for any share
    below 1.125, so the gate holds and the Stage-1 answer stands."""
    model, calls = _json_bias_model('{"image": 0, "document": 0, "chart": 0}',
                                    reply="unknown")
    # Not a question asked before: a cached bias would skip the call.
    question = "Which brand of gloves does the clinic stock?"
    answer = asyncio.run(proctor.answer("vet", question, model, query=question))
    assert answer.metadata["wants_escalation"] is True
    assert answer.metadata["escalated"] is False and len(calls) == 2
    assert answer.output == "unknown" and answer.usage.images_sent == 0


def test_query_not_the_prompt_drives_bias_and_retrieval(clinic, embedder, reader,
                                                        recorder) -> None:
    """The prompt lists candidate images (an image cue); the bare question does not: bias and
    retrieval read the query, the model is asked the prompt."""
    memory = ProctorMemory(embedder=embedder, reader=reader, top_k=3, bias="lexical",
                           retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("vet", conversation_events(clinic)))
    question = "Which gloves should the clinic stock?"
    prompt = f"Candidate images: img_1, img_2.\nQuestion: {question}"
    plain = asyncio.run(memory.answer("vet", prompt, recorder.model))
    assert plain.metadata["bias"]["image"] == 1
    answer = asyncio.run(memory.answer("vet", prompt, recorder.model, query=question))
    assert answer.metadata["bias"] == {"image": 0, "document": 0, "chart": 0}
    assert answer.usage.retrieved_ids[0] == "D2:1"
    assert recorder.last_text().endswith(prompt)


def test_answer_reports_what_retrieve_ranks(clinic, embedder, reader) -> None:
    """With the model's bias (known after ``answer`` asked it) ``retrieve`` gives the ranking
    ``answer`` used; before that it ranks by the lexical detector's bias, which sees no
    modality in this question: no image bonus, so the kept set differs. (The paper's cosine
    pool, ``mode="dense"``: the fused pool of the default ranks these chunks otherwise.)"""
    memory = ProctorMemory(embedder=embedder, reader=reader, top_k=3,
                           retrieval=RetrievalConfig(index="numpy", mode="dense"))
    asyncio.run(memory.ingest("vet", conversation_events(clinic)))
    model, _ = _json_bias_model('{"image": 1, "document": 0, "chart": 0}', reply="a brown dog")
    question = "Which gloves should the clinic stock?"
    assert memory.known_bias(question) == lexical_bias(question)
    lexical_ranking = asyncio.run(memory.retrieve("vet", question))
    assert [c.id for c in lexical_ranking] == ["D2:1", "session:D2", "session:D1"]
    answer = asyncio.run(memory.answer("vet", question, model, query=question))
    assert memory.known_bias(question).source == "model"
    ranked = asyncio.run(memory.retrieve("vet", question))
    # The image bonus (.20) lifts the cat photo's round over the other session's summary.
    assert [c.id for c in ranked] == ["D2:1", "session:D2", "D1:1"]
    assert answer.usage.retrieved_ids == [c.id for c in ranked]
    explicit = asyncio.run(memory.retrieve("vet", question, bias=Bias(image=1, source="model")))
    assert explicit == ranked
    # Bias "lexical": no model call, the same ranking either way.
    lexical = ProctorMemory(embedder=embedder, reader=reader, top_k=3, bias="lexical",
                            retrieval=RetrievalConfig(index="numpy", mode="dense"))
    asyncio.run(lexical.ingest("vet", conversation_events(clinic)))
    plain = asyncio.run(lexical.answer("vet", question, model, query=question))
    assert plain.usage.retrieved_ids == [c.id for c in asyncio.run(lexical.retrieve("vet",
                                                                                 question))]


def test_retrieve_holds_the_causal_cut(proctor, recorder) -> None:
    """Asked before session D2 (a day after D1), no chunk of D2 (its rounds, its summary) can
    be kept, even the best match; ``answer`` reports ``retrieve``'s ids (mockllm records)."""
    d2 = min(c.time for c in proctor.items("vet") if c.metadata.get("session_id") == "D2")
    assert d2 == 86_400.0
    question = "Which gloves should the clinic stock?"
    before = asyncio.run(proctor.retrieve("vet", question, time=d2 - 1))
    assert [c.id for c in before] == ["session:D1", "D1:1", "D1:2"]  # all that is visible
    answer = asyncio.run(proctor.answer("vet", question, recorder.model, time=d2 - 1,
                                        query=question))
    assert answer.usage.retrieved_ids == [c.id for c in before]
    assert [c.id for c in asyncio.run(proctor.retrieve("vet", question, k=1))] == ["D2:1"]


def test_forget_drops_chunks_index_and_skips(clinic, embedder, reader) -> None:
    memory = ProctorMemory(embedder=embedder, reader=reader, top_k=3, bias="lexical",
                           retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("vet", conversation_events(clinic)))
    assert len(memory.skipped("vet")) == 1  # the missing photo
    memory.forget("vet")
    assert memory.skipped("vet") == [] and memory.items("vet") == []
    assert not memory.is_ingested("vet") and memory.build_seconds("vet") == 0.0
    with pytest.raises(KeyError):
        memory.index("vet")
    asyncio.run(memory.ingest("vet", conversation_events(clinic)))
    assert len(memory.index("vet")) == 7 and len(memory.skipped("vet")) == 1


def test_offline_builtin_falls_back_to_the_lexical_detector(proctor) -> None:
    """m3kit/builtin answers the bias prompt with a span of its input, never JSON."""
    from inspect_ai.model import get_model

    import m3kit.models  # noqa: F401  (registers the provider)

    model = get_model("m3kit/builtin", ocr=False, speech=False)
    question = "Which image shows the gray cat with an otoscope?"
    request = AnswerRequest(prompt=question, query=question, model=model)
    bias, usage = asyncio.run(proctor.detect_bias(request))
    assert bias.source == "lexical-fallback"
    assert bias.vector() == {"image": 1, "document": 0, "chart": 0}
    assert usage.prompt_tokens > 0


def test_registry_and_config() -> None:
    memory = make_memory("proctor", top_k=5, alphas={"image": 0.3})
    assert isinstance(memory, ProctorMemory)
    assert memory.alphas == {"image": 0.3, "document": 0.25, "chart": 0.15}
    defaults = ProctorMemory()
    assert (defaults.top_k, defaults.over_fetch) == (15, 6)
    assert defaults.gates == {"image": 0.45, "chart": 0.45, "document": 0.48}
    with pytest.raises(ValueError, match="bias must be"):
        ProctorMemory(bias="vlm")
