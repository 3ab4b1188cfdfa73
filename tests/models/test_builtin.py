"""``m3kit/builtin``, the offline text-surrogate baseline, end to end through inspect's Model.

Real components: RapidOCR reads text rendered on JPEG frames, MiniLM embeds; no mocks.
"""

from __future__ import annotations

import asyncio
import base64
import io
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentAudio,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
)

from m3kit.models import frames_to_content
from m3kit.models.builtin import DEFAULT_ABSTAIN_THRESHOLD, BuiltinModelAPI, tie_rank
from m3kit.models.errors import ModelArgError

M3EVAL_INSTRUCTION = (
    'Answer with the letter of one option. The last line of your response must be exactly '
    '"The final answer is X", where X is one uppercase option letter (A, B, C or D).'
)


def ask(model: Any, messages: list[ChatMessage], **config: Any) -> ModelOutput:
    return asyncio.run(model.generate(messages, config=GenerateConfig(**config)))


def frames_then(frames: list[Path], prompt: str) -> list[ChatMessage]:
    """The harness's direct-answer layout: a preamble, the frames (inline), the prompt."""
    preamble = f"The following {len(frames)} images are frames sampled from the video."
    return [ChatMessageUser(content=[ContentText(text=preamble),
                                     *frames_to_content(frames, inline=True),
                                     ContentText(text=prompt)])]


def info(output: ModelOutput) -> dict[str, Any]:
    assert output.metadata is not None
    return output.metadata["m3kit"]


def test_frame_text_supports_one_option(builtin: Any, render_frame: Callable[..., Path]) -> None:
    frames = [render_frame("red", background=(220, 30, 30)),  # shared with the next test
              render_frame("room", ["The meeting is in Room 42"])]
    prompt = ("Which room is the meeting in?\nA. Room 17\nB. Room 42\nC. The cafeteria\n"
              f"D. Room 24\n{M3EVAL_INSTRUCTION}")
    output = ask(builtin, frames_then(frames, prompt))
    assert output.completion == "The final answer is B"
    meta = info(output)
    assert meta["answer"] == "B" and not meta["abstained"]
    assert meta["ranking"][0] == "B" and meta["margin"] > 0.2
    assert meta["evidence"][0] == {"text": "The meeting is in Room 42", "source": "image 2 (OCR)",
                                   "score": meta["best_score"]}
    assert meta["images"] == 2 and meta["ocr_lines"] == 1
    assert meta["surrogate"] == "text"


def test_colour_only_frames_are_a_tie_broken_by_the_option_not_its_letter(
    builtin: Any, render_frame: Callable[..., Path]
) -> None:
    """Nothing to read, nothing to match: every option scores 0. The tie goes to the option
    with the lowest ``tie_rank`` of (question, option text), so the same option wins whatever
    letter it carries, never "A" by position."""
    frames = [render_frame("red", background=(220, 30, 30)),
              render_frame("blue", background=(30, 30, 220))]
    question = "What colour was the car in the second half of the video?"
    colours = ["Green", "Blue", "Red", "Yellow"]
    picked = set()
    for shift in range(4):  # the same options, rotated through the letters
        order = colours[shift:] + colours[:shift]
        lines = [f"{letter}. {text}" for letter, text in zip("ABCD", order, strict=True)]
        meta = info(ask(builtin, frames_then(frames, "\n".join([question, *lines,
                                                                 M3EVAL_INSTRUCTION]))))
        assert meta["best_score"] == 0.0 and meta["margin"] == 0.0
        assert {row["score"] for row in meta["scores"]} == {0.0}
        expected = min(colours, key=lambda text: tie_rank(meta["question"], text))
        chosen = next(row["text"] for row in meta["scores"] if row["label"] == meta["answer"])
        assert chosen == expected
        picked.add(meta["answer"])
    # the winning text sat at each letter once, so the winning letter did too
    assert picked == {"A", "B", "C", "D"}


def test_tie_rank_spreads_ties_over_the_letters() -> None:
    """Over many questions whose four options all tie, the pick is not positional: each letter
    wins about a quarter of the time (400 questions: every letter between 70 and 130)."""
    wins = {letter: 0 for letter in "ABCD"}
    for q in range(400):
        texts = [f"option {q}-{j}" for j in range(4)]
        best = min(range(4), key=lambda j: tie_rank(f"question {q}?", texts[j]))
        wins["ABCD"[best]] += 1
    assert all(70 <= n <= 130 for n in wins.values()), wins
    assert tie_rank("q", "a") == tie_rank("q", "a") != tie_rank("q", "b")


def test_abstains_when_evidence_supports_nothing(
    builtin: Any, render_frame: Callable[..., Path]
) -> None:
    frames = [render_frame("parking", ["Parking level 3", "Exit to the left"])]
    prompt = ("In which video does the man juggle three oranges?\nA. Video 1\nB. Video 2\n"
              f"C. Both videos\nD. Neither video\n{M3EVAL_INSTRUCTION}")
    output = ask(builtin, frames_then(frames, prompt))
    assert output.completion == "The final answer is D"
    meta = info(output)
    assert meta["abstained"] and meta["best_score"] < DEFAULT_ABSTAIN_THRESHOLD
    assert meta["ranking"][0] == "D"


def history(*facts: str) -> list[ChatMessage]:
    """Earlier turns of a conversation: the user states facts, the assistant acknowledges."""
    turns: list[ChatMessage] = [ChatMessageSystem(content="You are a helpful memory assistant.")]
    for fact in facts:
        turns += [ChatMessageUser(content=fact), ChatMessageAssistant(content="Noted.")]
    return turns


FACTS = ("I left the keys on the kitchen table.", "Maria said the team meeting moved to Friday.",
         "My sister's flight lands at 6:05 pm.")


def test_answers_from_the_conversation_or_abstains(builtin: Any) -> None:
    options = "A. On the kitchen table\nB. In the car\nC. On the bookshelf\nD. I don't know"
    asked = history(*FACTS) + [ChatMessageUser(content=f"Where did I leave the keys?\n{options}")]
    assert ask(builtin, asked).completion == "The final answer is A"
    absent = history(*FACTS) + [
        ChatMessageUser(content=f"Where did I leave my passport?\n{options}")]
    meta = info(ask(builtin, absent))
    assert meta["answer"] == "D" and meta["abstained"]


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        (M3EVAL_INSTRUCTION, "The final answer is B"),
        ("Answer with the option's letter from the given choices directly.", "B"),
        (("The entire content of your response should be of the following format: "
         "'ANSWER: $LETTER' (without quotes) where LETTER is one of A,B,C."), "ANSWER: B"),
        ("Think step by step, then end with Final Answer: <letter>.", "Final Answer: B"),
        ("", "The final answer is B"),
    ],
)
def test_follows_the_requested_format(builtin: Any, instruction: str, expected: str) -> None:
    prompt = ("Which day did Maria say the meeting moved to?\nA. Monday\nB. Friday\n"
              f"C. Sunday\n{instruction}")
    output = ask(builtin, history(*FACTS) + [ChatMessageUser(content=prompt)])
    assert output.completion == expected


def test_yes_no_follows_the_evidence(builtin: Any) -> None:
    instruction = ('Answer Yes or No. The last line of your response must be exactly '
                   '"The final answer is Yes" or "The final answer is No".')
    yes = f"Did Maria say the team meeting moved to Friday?\n- Yes\n- No\n{instruction}"
    no = f"Did Tom say the printer on floor two is broken?\n- Yes\n- No\n{instruction}"
    assert ask(builtin, history(*FACTS) + [ChatMessageUser(content=yes)]).completion == (
        "The final answer is Yes")
    output = ask(builtin, history(*FACTS) + [ChatMessageUser(content=no)])
    assert output.completion == "The final answer is No"
    assert info(output)["mode"] == "yes_no"
    lettered = "Did Maria say the team meeting moved to Friday?\nA. Yes\nB. No\nOnly the letter."
    assert ask(builtin, history(*FACTS) + [ChatMessageUser(content=lettered)]).completion == "A"


def test_free_form_returns_the_supporting_span(builtin: Any) -> None:
    asked = history(*FACTS) + [ChatMessageUser(content="When does my sister's flight land?")]
    output = ask(builtin, asked)
    assert output.completion == "My sister's flight lands at 6:05 pm."
    meta = info(output)
    assert meta["mode"] == "free_form" and meta["evidence"][0]["source"] == "message 5 (user)"
    short = ask(builtin, asked, max_tokens=3)
    assert short.completion == "My sister's flight" and short.stop_reason == "max_tokens"


def test_usage_counts_words(builtin: Any) -> None:
    prompt = "Which day did Maria say the meeting moved to?\nA. Monday\nB. Friday"
    messages = history(*FACTS) + [ChatMessageUser(content=prompt)]
    output = ask(builtin, messages)
    words = sum(len(m.text.split()) for m in messages)
    assert output.usage is not None
    assert output.usage.input_tokens == words
    assert output.usage.output_tokens == len(output.completion.split()) == 5
    assert output.usage.total_tokens == words + 5
    # max_tokens cuts free-form spans only; a multiple-choice answer is always whole.
    assert ask(builtin, messages, max_tokens=1).completion == "The final answer is B"


def test_deterministic(embedder: Any, reader: Any, builtin: Any,
                       render_frame: Callable[..., Path]) -> None:
    """Same input, same completion and scores: on the warm instance and on a fresh one."""
    frames = [render_frame("room", ["The meeting is in Room 42"])]  # read before: cached
    prompt = ("Where is the meeting?\nA. Room 24\nB. Room 42\nC. Hall 42\nD. Not mentioned\n"
              f"{M3EVAL_INSTRUCTION}")
    messages = frames_then(frames, prompt)
    fresh = BuiltinModelAPI("builtin", embedder=embedder, reader=reader)
    outputs = [ask(builtin, messages), ask(builtin, messages), fresh.answer(messages)]
    assert {o.completion for o in outputs} == {"The final answer is B"}
    assert all(info(o)["scores"] == info(outputs[0])["scores"] for o in outputs)


def test_model_args_are_checked() -> None:
    with pytest.raises(ModelArgError, match="abstain_treshold"):
        BuiltinModelAPI("builtin", abstain_treshold=0.3)
    with pytest.raises(ModelArgError, match="abstain_threshold"):
        BuiltinModelAPI("builtin", abstain_threshold="high")
    with pytest.raises(ModelArgError, match="generator"):
        BuiltinModelAPI("builtin", generator="gpt")
    api = BuiltinModelAPI("builtin", abstain_threshold="0.3", ocr="false", max_images="4")
    assert (api.abstain_threshold, api.yes_threshold, api.ocr, api.max_images) == (
        0.3, 0.3, False, 4)


def tone_wav(seconds: float = 1.0, rate: int = 16_000) -> str:
    """A 440 Hz tone as a WAV data URI (no speech engine is installed to make words)."""
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


@pytest.mark.slow
def test_audio_items_go_through_speech_recognition(builtin: Any) -> None:
    """Whisper hears no words in a tone: the item is counted, no evidence comes of it."""
    prompt = "What did the speaker say?\nA. Hello\nB. Goodbye\nC. Not mentioned"
    messages: list[ChatMessage] = [ChatMessageUser(content=[
        ContentAudio(audio=tone_wav(), format="wav"), ContentText(text=prompt)])]
    meta = info(ask(builtin, messages))
    assert meta["audio_video"] == 1 and meta["evidence_units"] == 0
    assert meta["answer"] == "C" and meta["abstained"]


def test_a_bomb_image_fails_its_own_sample_by_name(
    builtin: Any, render_frame: Callable[..., Path], tmp_path: Path
) -> None:
    """A decompression bomb among a sample's images is refused from its header, before any
    pixel is decoded: that sample fails with an error naming the file, the next one answers."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    from ..media.test_image import png_header_only

    bomb = png_header_only(tmp_path / "bomb.png", 40_000, 40_000)
    frame = render_frame("fox-bomb-test", ["the red fox"])
    prompt = "What animal is shown?\nA. red fox\nB. blue whale"

    def sample(sid: str, image: Path) -> Sample:
        # m3kit's content glue refuses a bomb (``image_content``): one handed to the model
        # directly, as another harness may, is inlined here by hand
        uri = "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode("ascii")
        return Sample(id=sid, target="A", input=[ChatMessageUser(content=[
            ContentImage(image=uri), ContentText(text=prompt)])])

    task = Task(dataset=[sample("bomb", bomb), sample("good", frame)], solver=generate(),
                scorer=match())
    (log,) = eval(task, model=builtin, fail_on_error=False, display="none", log_dir=str(
        tmp_path / "logs"))
    by_id = {s.id: s for s in log.samples or []}
    assert by_id["bomb"].error is not None
    assert "MediaTooLargeError" in by_id["bomb"].error.traceback
    # inspect hands a provider data URIs: the error shows the start of the bomb's.
    assert "data:image/png;base64,iVBORw0KGgo" in by_id["bomb"].error.message
    assert "over the bound of 89478485 pixels" in by_id["bomb"].error.message
    assert by_id["good"].error is None
    assert by_id["good"].output.completion.strip().endswith("A")
