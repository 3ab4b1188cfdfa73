"""M3Exam regimes: which sessions, images, pages and text a question's context holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from m3kit.benchmarks.m3exam.load import load_m3exam
from m3kit.benchmarks.m3exam.prompt import ANSWER_INSTRUCTION, question_prompt
from m3kit.benchmarks.m3exam.regimes import (
    MediaBlock,
    Regime,
    RegimeError,
    build_context,
    parse_regime,
    round_cost,
)
from m3kit.media.pdf import write_text_pdf
from m3kit.schema import Conversation, PdfPageRef, Question, Round, Session


def _round(rid: str, user: str, assistant: str, images: list[int] = (), pdfs: list[str] = ()
           ) -> dict:
    return {
        "round": rid, "user": user, "assistant": assistant,
        "img_file": [f"img_{n}.jpg" for n in images], "img_id": list(images),
        "img_description": [f"photo number {n}" for n in images],
        "pdf_file": list(pdfs),
    }


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    """Three sessions: D1 (2 images), D2 (12 images over two rounds, a 2-page PDF), D3."""
    folder = tmp_path / "Pat_Tester"
    (folder / "images").mkdir(parents=True)
    (folder / "pdfs").mkdir()
    for n in range(1, 15):
        Image.new("RGB", (32, 24), (n * 10, 0, 0)).save(folder / "images" / f"img_{n}.jpg")
    write_text_pdf(folder / "pdfs" / "labs.pdf", ["Glucose 5.4 mmol/L", "Page two: ALT 40 U/L"])
    sessions = [
        {"session_id": "D1", "date": "2024-01-01", "dialogues": [
            _round("D1:1", "Here is my cat.", "Nice cat.", images=[1, 2]),
            _round("D1:2", "Thanks.", "Welcome."),
        ]},
        {"session_id": "D2", "date": "2024-01-05", "dialogues": [
            _round("D2:1", "Ward photos.", "Seen.", images=[3, 4, 5, 6, 7, 8, 9, 10]),
            _round("D2:2", "Lab report attached.", "Glucose is normal.", images=[11, 12, 13, 14],
                   pdfs=["labs.pdf"]),
        ]},
        {"session_id": "D3", "date": "2024-02-01", "dialogues": [
            _round("D3:1", "Unrelated chat.", "Sure."),
        ]},
    ]
    questions = [
        {"question": "What was the glucose?", "answer": ["5.4 mmol/L", "5.4"],
         "label": "5.4 mmol/L", "supporting_facts": "D2:2", "type": "mr"},
        {"question": "Which image shows the cat? Return img_<number>.",
         "answer": ["img_1", "img_2"], "label": "img_1", "supporting_facts": "D1:1",
         "type": "fm"},
        {"question": "Across visits?", "answer": ["yes"], "label": "yes",
         "supporting_facts": "D1:2,D3:1", "type": "ms"},
        {"question": "Ghost?", "answer": ["x"], "label": "x", "supporting_facts": "D9:1",
         "type": "ss"},
    ]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps(questions))
    return folder


def _texts(blocks: list) -> str:
    return "\n".join(b for b in blocks if isinstance(b, str))


def test_parse_regime_names_and_shorthands() -> None:
    assert parse_regime("oracle").name == "oracle"
    assert parse_regime("text") == Regime(kind="oracle", modality="text")
    assert parse_regime("multimodal") == Regime(kind="oracle", modality="multimodal")
    assert parse_regime("full-text").name == "full-text"
    assert parse_regime("full", modality="text").name == "full-text"
    assert parse_regime("memory=rag").memory == "rag"
    assert parse_regime("memory:context").name == "memory=context"
    # ``m3kit eval --memory rag`` arrives as the memory argument with the default regime.
    assert parse_regime("oracle", memory="rag").name == "memory=rag"
    assert parse_regime("oracle", memory="none").name == "oracle"
    assert parse_regime("full", max_images=3, dpi=72).max_images == 3
    for bad in ("session", "memory", "oracle-video"):
        with pytest.raises(RegimeError):
            parse_regime(bad)
    with pytest.raises(RegimeError):
        parse_regime("oracle", modality="audio")
    with pytest.raises(RegimeError):
        parse_regime("oracle", max_images=-1)


def test_a_memory_and_a_direct_regime_conflict() -> None:
    # left out, the regime is the memory one under --memory and the task's default otherwise
    assert parse_regime(None, memory="rag").name == "memory=rag"
    assert parse_regime(None).name == "oracle"
    assert parse_regime(None, default="text").name == "oracle-text"
    assert parse_regime(None, memory="rag", default="text").name == "memory=rag"
    assert parse_regime("memory=rag", memory="rag").name == "memory=rag"
    # a regime that shows the conversation directly cannot also answer through a memory
    for direct in ("full", "text", "multimodal", "oracle-text", "full-text"):
        with pytest.raises(RegimeError, match="--memory rag answers through a memory") as info:
            parse_regime(direct, memory="rag")
        assert info.value.field == "regime"
        assert "\n" not in str(info.value)
    with pytest.raises(RegimeError, match="two different memories"):
        parse_regime("memory=context", memory="rag")


def test_oracle_shows_only_supporting_sessions(persona: Path) -> None:
    data = load_m3exam(persona)
    conv = data.conversations["Pat_Tester"]
    multi = data.question("Pat_Tester/2")  # evidence D1:2 and D3:1
    ctx = build_context(multi, conv, parse_regime("oracle"))
    assert ctx.sessions == ["D1", "D3"]
    text = _texts(ctx.blocks)
    assert "Session D1 (2024-01-01):" in text and "Session D3 (2024-02-01):" in text
    assert "D2:1" not in text and "Ward photos" not in text
    # D1's two images go as pixels (under the cap of 10), D3 has none.
    assert [b.name for b in ctx.media] == ["img_1", "img_2"]
    assert ctx.images == 2 and ctx.pages == 0 and ctx.rounds == 3


def test_oracle_caps_images_supporting_round_first(persona: Path) -> None:
    data = load_m3exam(persona)
    conv = data.conversations["Pat_Tester"]
    glucose = data.question("Pat_Tester/0")  # evidence D2:2: 4 images + 2 pages there
    ctx = build_context(glucose, conv, parse_regime("oracle"))
    names = [b.name for b in ctx.media]
    # Cap 10 images: D2:2's four first, then six of D2:1's eight in order; img_9, img_10
    # are named but withheld. Both PDF pages fit the page cap (30).
    images = [n for n in names if n.startswith("img_")]
    assert sorted(images, key=lambda n: int(n[4:])) == [f"img_{n}" for n in range(3, 9)] + [
        "img_11", "img_12", "img_13", "img_14"]
    assert ctx.images == 10 and ctx.pages == 2 and ctx.withheld == 2
    assert "img_9, not shown" in _texts(ctx.blocks)
    assert "img_9" not in ctx.candidates and "img_11" in ctx.candidates
    pages = [b.ref for b in ctx.media if isinstance(b.ref, PdfPageRef)]
    assert [p.page for p in pages] == [0, 1]
    # Blocks stay in reading order: D2:1's images come before D2:2's.
    assert names.index("img_3") < names.index("img_11")
    # A page cap of 1 keeps the first page only.
    one = build_context(glucose, conv, parse_regime("oracle", max_pdf_pages=1, max_images=0))
    assert one.pages == 1 and one.images == 0 and one.withheld == 12 + 1


def test_text_modality_uses_descriptions_and_page_text(persona: Path) -> None:
    data = load_m3exam(persona)
    conv = data.conversations["Pat_Tester"]
    ctx = build_context(data.question("Pat_Tester/0"), conv, parse_regime("text"))
    assert ctx.media == [] and ctx.images == 0 and ctx.withheld == 0
    text = _texts(ctx.blocks)
    assert "(attached image img_11: photo number 11)" in text
    assert "(attached PDF page labs.pdf#page=1: Glucose 5.4 mmol/L)" in text
    assert "labs.pdf#page=2: Page two: ALT 40 U/L" in text
    # Every image is described, so every image is an fm candidate.
    assert len(ctx.candidates) == 12


def test_oracle_without_any_known_supporting_round_is_an_error(persona: Path) -> None:
    data = load_m3exam(persona)
    with pytest.raises(RegimeError) as err:
        build_context(data.question("Pat_Tester/3"), data.conversations["Pat_Tester"],
                      parse_regime("oracle"))
    assert err.value.record == "Pat_Tester/3" and err.value.field == "evidence"
    with pytest.raises(RegimeError):
        build_context(data.question("Pat_Tester/0"), data.conversations["Pat_Tester"],
                      parse_regime("memory=rag"))


def _tiny() -> Conversation:
    return Conversation(id="c", sessions=[
        Session(id="S1", rounds=[Round(id="S1:1", speaker="u", text="aaaa", response="bbbb")]),
        Session(id="S2", rounds=[Round(id="S2:1", speaker="u", text="cc"),
                                 Round(id="S2:2", speaker="u", text="dddddd")]),
    ])


def test_full_round_costs_by_hand() -> None:
    conv = _tiny()
    regime = parse_regime("full", tokens_per_char=1.0)
    # Each text block costs len(text) + 1 (its line break):
    # "[S1:1] u: aaaa" = 14 -> 15; "assistant: bbbb" = 15 -> 16; header "Session S1:" = 11 -> 12.
    assert round_cost(conv.round("S1:1"), regime) == 15 + 16
    assert round_cost(conv.round("S1:1"), regime, "Session S1:") == 15 + 16 + 12
    # "[S2:1] u: cc" = 12 -> 13; "[S2:2] u: dddddd" = 16 -> 17.
    assert round_cost(conv.round("S2:1"), regime) == 13


def test_full_evicts_oldest_rounds_first() -> None:
    conv = _tiny()
    q = Question(id="c/0", benchmark="m3exam", text="?", answer="x")
    # Newest first: S2:2 costs 17; S2:1 opens S2, so 13 + 12 = 25 (42 in all);
    # S1:1 opens S1: 31 + 12 = 43 (85 in all).
    everything = build_context(q, conv, parse_regime("full", tokens_per_char=1.0,
                                                     token_budget=85))
    assert everything.evicted_rounds == 0 and everything.estimated_tokens == 85
    assert everything.sessions == ["S1", "S2"]
    clipped = build_context(q, conv, parse_regime("full", tokens_per_char=1.0,
                                                  token_budget=84))
    assert clipped.evicted_rounds == 1 and clipped.sessions == ["S2"]
    assert clipped.estimated_tokens == 42
    assert "aaaa" not in _texts(clipped.blocks)
    assert build_context(q, conv, parse_regime("full", tokens_per_char=1.0,
                                               token_budget=41)).rounds == 1


def test_full_never_estimates_over_its_budget() -> None:
    """A window that starts inside a session still opens with that session's header: the header
    is charged with the first round the FIFO walk keeps of the session, not with the session's
    opening round, which may be evicted."""
    conv = _tiny()
    q = Question(id="c/0", benchmark="m3exam", text="?", answer="x")
    # S2:2 alone shows "Session S2:" (12) and its round (17): 29 tokens, not 17.
    for budget in (17, 28):
        assert build_context(q, conv, parse_regime("full", tokens_per_char=1.0,
                                                   token_budget=budget)).rounds == 0
    alone = build_context(q, conv, parse_regime("full", tokens_per_char=1.0, token_budget=29))
    assert (alone.rounds, alone.estimated_tokens, alone.blocks[0]) == (1, 29, "Session S2:")
    for budget in range(90):
        context = build_context(q, conv, parse_regime("full", tokens_per_char=1.0,
                                                      token_budget=budget))
        assert context.estimated_tokens <= budget


def test_full_charges_images_at_the_per_image_cost(persona: Path) -> None:
    data = load_m3exam(persona)
    conv = data.conversations["Pat_Tester"]
    q = data.question("Pat_Tester/0")
    text_only = build_context(q, conv, parse_regime("full-text"))
    pixels = build_context(q, conv, parse_regime("full", image_tokens=1000))
    assert text_only.evicted_rounds == 0 and pixels.evicted_rounds == 0
    # full sends every attachment of the kept rounds: 14 images and 2 pages, no cap.
    assert pixels.images == 14 and pixels.pages == 2 and pixels.withheld == 0
    # A budget below the newest round's media cost (D3:1 has none; D2:2 has 6 attachments at
    # 1000 tokens each) keeps D3:1 alone.
    small = build_context(q, conv, parse_regime("full", image_tokens=1000, token_budget=5000))
    assert small.sessions == ["D3"] and small.images == 0 and small.evicted_rounds == 4


def test_prompt_lists_fm_candidates_only_for_fm(persona: Path) -> None:
    data = load_m3exam(persona)
    fm = data.question("Pat_Tester/1")
    prompt = question_prompt(fm, ["img_1", "img_2"])
    assert prompt.startswith("Question: Which image shows the cat?")
    assert ANSWER_INSTRUCTION in prompt
    assert "img_1, img_2" in prompt and "never write the placeholder img_<number>" in prompt
    no_images = question_prompt(fm, [])
    assert "no image is attached" in no_images
    plain = question_prompt(data.question("Pat_Tester/0"), ["img_1"])
    assert "img_1" not in plain


def test_real_persona_oracle_contexts(m3exam_persona: Path) -> None:
    data = load_m3exam(m3exam_persona)
    conv = data.conversations["Alex_Veterinarian"]
    regime = parse_regime("oracle")
    for question in data.questions:
        ctx = build_context(question, conv, regime)
        wanted = {conv.session_of(r).id for r in question.evidence}
        assert set(ctx.sessions) == wanted
        assert ctx.images <= 10 and all(isinstance(b, str | MediaBlock) for b in ctx.blocks)
        if question.question_type == "fm":
            # Every fm gold of this persona is among the images its oracle context shows.
            assert question.answer in ctx.candidates, question.id


def test_an_image_over_the_pixel_bound_is_named_not_sent(tmp_path: Path) -> None:
    from ...media.test_image import png_header_only

    folder = tmp_path / "Bo_Bomb"
    (folder / "images").mkdir(parents=True)
    bomb = png_header_only(folder / "images" / "img_2.png", 30_000, 30_000)
    Image.new("RGB", (32, 24), (200, 0, 0)).save(folder / "images" / "img_1.png")
    rounds = [{"round": "D1:1", "user": "The barn and my fox.", "assistant": "Nice.",
               "img_file": ["img_2.png", "img_1.png"], "img_id": [2, 1],
               "img_description": ["a barn", "a red fox"]}]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": rounds}]))
    (folder / "question.json").write_text(json.dumps([
        {"question": "Which animal?", "answer": ["fox"], "supporting_facts": "D1:1",
         "type": "ss"}]))
    data = load_m3exam(folder)
    question, conversation = data.questions[0], data.conversations["Bo_Bomb"]
    for regime in (Regime(max_images=1), Regime(kind="full")):
        context = build_context(question, conversation, regime)
        # the bomb takes no place under the cap: the fox is sent, the round keeps its text
        assert [b.name for b in context.media] == ["img_1"] and context.images == 1
        assert "The barn and my fox." in _texts(context.blocks)
        assert "(attached image img_2, not shown: too large to send)" in _texts(context.blocks)
        assert context.candidates == ["img_1"]
        (skip,) = context.skipped
        assert (skip.file, skip.record) == (str(bomb), "D1:1/img_2")
        assert "over the bound of 89478485 pixels" in skip.reason
    # the budget charges the refused image as its line, not as an image
    rnd = conversation.sessions[0].rounds[0]
    assert round_cost(rnd, Regime(kind="full", image_tokens=1000)) < 2000
    # the text modality sends no pixels: nothing to refuse
    assert build_context(question, conversation, Regime(modality="text")).skipped == []
