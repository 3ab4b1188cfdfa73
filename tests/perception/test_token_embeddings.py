"""MiniLM's contextual token embeddings (``MiniLMEmbedder.token_embeddings``), the input of the
MaxSim reranker: one normalised row per word piece, no special tokens, long texts windowed."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.perception import MiniLMEmbedder, TokenEmbedder


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_one_normalised_row_per_word_piece_without_special_tokens(minilm) -> None:
    assert isinstance(minilm, TokenEmbedder)
    hello, empty, blank = minilm.token_embeddings(["hello world", "", "   "])
    # "hello world" is two word pieces; [CLS] and [SEP] are left out
    assert hello.shape == (2, 384) and hello.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(hello, axis=1), 1.0, rtol=1e-5)
    assert empty.shape == (0, 384) and blank.shape == (0, 384)
    assert minilm.token_embeddings([]) == []


def test_the_same_piece_in_different_context_embeds_differently(minilm) -> None:
    river, money = minilm.token_embeddings(["the river bank", "the bank loan"])
    bank_river, bank_money = river[2], money[1]  # "the river bank" / "the bank loan"
    assert float(bank_river @ bank_money) < 0.99  # contextual, not a lookup table


def test_a_text_longer_than_the_window_keeps_every_piece(minilm) -> None:
    # 600 one-piece words: the model's window is 256 pieces; windows are cut between words
    (rows,) = minilm.token_embeddings(["cat " * 600])
    assert rows.shape == (600, 384)
    tokenizer = minilm.tokenizer()
    long_text = "venipuncture " * 200  # several pieces per word: no window cuts a word
    pieces = len(tokenizer(long_text, add_special_tokens=False)["input_ids"])
    assert pieces > 256
    (rows,) = minilm.token_embeddings([long_text])
    assert rows.shape == (pieces, 384)
