"""Frames into message content and images/text back out of messages."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
)
from PIL import Image

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError, MediaTooLargeError
from m3kit.models import (
    count_images,
    frames_to_content,
    image_content,
    image_refs,
    inline_images,
    load_image,
    load_rgb,
    message_images,
    message_text,
)
from m3kit.models.content import file_data_uri

from ..media.test_image import png_header_only


def test_frames_keep_paths_unless_inline(render_frame: Callable[..., Path]) -> None:
    frame = render_frame("plain", ["hello"])
    by_path = frames_to_content([frame])
    assert [type(c) for c in by_path] == [ContentImage]
    assert by_path[0].image == str(frame)  # small logs: inspect inlines sample input itself
    inline = frames_to_content([frame], inline=True)
    assert inline[0].image.startswith("data:image/jpeg;base64,")
    assert np.array_equal(load_rgb(inline[0].image), load_rgb(str(frame)))


def test_labels_precede_their_frames(render_frame: Callable[..., Path]) -> None:
    a, b = render_frame("a", ["a"]), render_frame("b", ["b"])
    content = frames_to_content([a, b], labels=["Frame 1 at 0.0 s", "Frame 2 at 2.0 s"])
    assert [c.type for c in content] == ["text", "image", "text", "image"]
    assert content[2].text == "Frame 2 at 2.0 s"
    with pytest.raises(ValueError, match="2 frames"):
        frames_to_content([a, b], labels=["one"])


def test_arrays_are_inlined_losslessly() -> None:
    array = np.random.default_rng(0).integers(0, 255, (12, 16, 3), dtype=np.uint8)
    item = image_content(array)
    assert item.image.startswith("data:image/png;base64,")
    assert np.array_equal(load_rgb(item.image), array)


def test_missing_and_corrupt_images_raise_named_errors(tmp_path: Path) -> None:
    with pytest.raises(MediaNotFoundError, match="nope.jpg"):
        frames_to_content([tmp_path / "nope.jpg"])
    with pytest.raises(MediaNotFoundError):
        load_rgb(str(tmp_path / "nope.jpg"))
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not a jpeg")
    with pytest.raises(MediaError, match="bad.jpg"):
        load_rgb(str(bad))
    with pytest.raises(MediaError, match="data:image/png"):
        load_rgb("data:image/png;base64,AAAA")


def test_a_bomb_is_refused_from_its_header_by_path_and_data_uri(tmp_path: Path) -> None:
    # 20000 x 20000 = 4e8 pixels, over the 89 478 485 bound; the file is a few hundred bytes and
    # would take 1.2 GB once decoded: refused before a pixel is.
    bomb = png_header_only(tmp_path / "bomb.png", 20_000, 20_000)
    assert bomb.stat().st_size < 200
    with pytest.raises(MediaTooLargeError, match=r"bomb\.png.*over the bound of 89478485"):
        load_image(str(bomb))
    uri = "data:image/png;base64," + base64.b64encode(bomb.read_bytes()).decode("ascii")
    with pytest.raises(MediaTooLargeError, match=r"data:image/png;base64,.*over the bound"):
        load_image(uri)
    with pytest.raises(MediaTooLargeError):
        message_images([ChatMessageUser(content=[ContentImage(image=str(bomb))])])
    whole = image_content(np.full((64, 64, 3), 200, dtype=np.uint8)).image
    torn = tmp_path / "torn.png"
    torn.write_bytes(base64.b64decode(whole.split(",", 1)[1])[:60])  # the data cut short
    with pytest.raises(CorruptMediaError, match="torn.png"):
        load_image(str(torn))


def test_images_and_text_come_back_out(render_frame: Callable[..., Path]) -> None:
    first, second = render_frame("one", ["one"]), render_frame("two", ["two"])
    messages = [
        ChatMessageSystem(content="You watch videos."),
        ChatMessageUser(content=[ContentText(text="Look:"), *frames_to_content([first])]),
        ChatMessageAssistant(content="Seen."),
        ChatMessageUser(content=[*frames_to_content([second], inline=True),
                                 ContentText(text="What was written?")]),
    ]
    refs = image_refs(messages)
    assert refs[0] == str(first) and refs[1].startswith("data:")
    assert count_images(messages) == 2
    images = message_images(messages)
    assert [image.shape for image in images] == [load_rgb(str(first)).shape] * 2
    assert message_text(messages) == "You watch videos.\n\nLook:\n\nSeen.\n\nWhat was written?"
    assert message_text(messages, roles=("user",), separator=" | ") == "Look: | What was written?"


def test_inline_images_converts_only_paths(render_frame: Callable[..., Path]) -> None:
    frame = render_frame("inline", ["x"])
    messages = [ChatMessageUser(content=[*frames_to_content([frame]), ContentText(text="q")]),
                ChatMessageUser(content="text only")]
    out = inline_images(messages)
    assert out[0].content[0].image.startswith("data:image/jpeg;base64,")
    assert out[0].content[1].text == "q" and out[1].content == "text only"
    assert messages[0].content[0].image == str(frame)  # the input is not modified


def test_no_bomb_becomes_message_content(tmp_path: Path) -> None:
    # the content glue is a gate: a bomb, by path or inline, is refused by name, never sent
    bomb = png_header_only(tmp_path / "bomb.png", 20_000, 20_000)
    uri = "data:image/png;base64," + base64.b64encode(bomb.read_bytes()).decode("ascii")
    for ref, inline in ((bomb, False), (bomb, True), (uri, False)):
        with pytest.raises(MediaTooLargeError, match="over the bound of 89478485"):
            image_content(ref, inline=inline)
    with pytest.raises(MediaTooLargeError, match=r"bomb\.png"):
        inline_images([ChatMessageUser(content=[ContentImage(image=str(bomb))])])
    with pytest.raises(MediaTooLargeError, match=r"bomb\.png"):
        file_data_uri(bomb)
    good = tmp_path / "good.jpg"
    Image.new("RGB", (8, 6), (10, 200, 10)).save(good, format="PNG")  # a PNG named .jpg
    assert file_data_uri(good).startswith("data:image/png;base64,")  # the header's type
