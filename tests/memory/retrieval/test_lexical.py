"""The full-text index: SQLite FTS5 with its bm25(), the filter inside the query."""

from __future__ import annotations

import math
import sqlite3

import pytest

from m3kit.memory.retrieval.lexical import LexicalIndex, fts5_available, match_expression

DOCS = {
    "a": "the cat sneezes",
    "b": "a dog barks",
    "c": "vaccinated cats recover",
}


@pytest.fixture
def index() -> LexicalIndex:
    index = LexicalIndex()
    index.add(list(DOCS), list(DOCS.values()))
    return index


def test_the_index_is_a_real_fts5_table(index) -> None:
    assert fts5_available()
    tables = index._db.execute(  # the engine, not a Python loop over documents
        "SELECT sql FROM sqlite_master WHERE name = 'docs'").fetchone()[0]
    assert "USING fts5" in tables and "porter" in tables
    assert sqlite3.sqlite_version_info >= (3, 9, 0)  # FTS5's first release


def test_bm25_score_by_hand(index) -> None:
    """'sneezes' is in one of three documents of three tokens each (avgdl 3): FTS5's idf is
    ln((N - n + .5) / (n + .5)) = ln(2.5 / 1.5), and a term met once in a document of average
    length scores idf * (1 * 2.2) / (1 + 1.2) = idf."""
    [(hit, score)] = index.search("sneezes", 5)
    assert hit == "a" and score == pytest.approx(math.log(2.5 / 1.5), rel=1e-6)


def test_porter_stemming_and_case(index) -> None:
    assert [h for h, _ in index.search("Vaccination CAT", 5)] == ["c", "a"]


def test_filter_is_inside_the_search(index) -> None:
    """With the best match outside ``allow``, the one slot goes to the best allowed match."""
    assert index.search("cat", 1)[0][0] in {"a", "c"}
    assert [h for h, _ in index.search("cats sneezes", 1, allow={"c"})] == ["c"]
    assert index.search("cats", 3, allow={"b"}) == []  # b shares no term
    assert index.search("cats", 3, allow=set()) == []


def test_query_words_are_never_operators(index) -> None:
    assert match_expression('NOT "cat" OR (dog*') == '"not" OR "cat" OR "or" OR "dog"'
    assert match_expression("?!") is None
    assert [h for h, _ in index.search("NOT dog", 5)] == ["b"]
    assert index.search("", 5) == []


def test_ids_unique_and_remove(index) -> None:
    with pytest.raises(ValueError, match="already"):
        index.add(["a"], ["again"])
    with pytest.raises(ValueError, match="ids but"):
        index.add(["x"], [])
    assert index.remove(["a", "zzz"]) == 1 and len(index) == 2
    assert index.search("sneezes", 5) == []
    index.add(["a"], ["the cat sneezes again"])
    assert [h for h, _ in index.search("sneezes", 5)] == ["a"]


def test_feedback_terms_by_hand() -> None:
    """Two hits of equal BM25 (same length, one "cat" each) share the weight: each of their
    other words has P(w | d) = 1/3 at half the score mass, 1/6; the query's word, the stop
    word and the number are never terms; ties are alphabetical; a third document that does not
    match adds nothing."""
    index = LexicalIndex()
    index.add(["a", "b", "c"], ["the cat allergy", "cat dog 42", "fish swim"])
    scores = dict(index.search("cat", 5))
    assert scores["a"] == pytest.approx(scores["b"])
    assert index.feedback_terms("cat") == ["allergy", "dog"]
    assert index.feedback_terms("cat", terms=1) == ["allergy"]
    assert index.feedback_terms("cat", allow={"b"}) == ["dog"]
    assert index.feedback_terms("zebra") == []


def test_feedback_terms_weigh_the_better_hit() -> None:
    """A word in the best hit outweighs a word in a weaker one: "mites" (a short document, two
    query words) before "seeds" (a long document, one)."""
    index = LexicalIndex()
    index.add(["short", "long"], ["hamster mites hamster",
                                  "hamster food with seeds and dried fruit on sale today"])
    terms = index.feedback_terms("hamster")
    assert terms.index("mites") < terms.index("seeds")
