"""A full-text index: BM25 over item texts, in SQLite's FTS5 (Python's own ``sqlite3``).

FTS5 keeps an inverted index and ranks with its built-in ``bm25()`` (Robertson & Zaragoza's
Okapi BM25, k1 = 1.2, b = 0.75), so a search reads the posting lists of the query's terms, not
every document. Terms are lower-cased, stripped of diacritics and Porter-stemmed (FTS5's
``porter unicode61`` tokenizer), so "vaccinated" finds "vaccination".

    index = LexicalIndex()
    index.add(["a", "b"], ["the cat sneezes", "a dog barks"])
    index.search("why does my cat sneeze", k=5, allow={"a"})   # -> [("a", 1.38)]

``allow`` restricts the search *inside* the SQL query (``rowid IN (...)`` before ``LIMIT``), as
the vector index's filter does: with the causal cut as ``allow``, a future item never takes a
slot of the top ``k``. Scores are BM25 scores (higher is better; FTS5's ``bm25()`` is their
negation).

``feedback_terms`` is pseudo-relevance feedback over the same index (RM3: Abdul-Jaleel et al.,
TREC 2004, from Lavrenko & Croft's relevance model, SIGIR 2001): the words that weigh most in
the first search's top documents, each document weighted by its share of their BM25 scores.
FTS5 cannot weigh the terms of a query, so RM3's interpolation of the original and the
feedback query model is a fusion weight between the two rankings (``fusion``); a named
deviation in docs/metrics.md.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Collection, Iterable, Sequence

from m3kit.memory.retrieval.index import Hit

# Unicode word characters: what FTS5's unicode61 tokenizer keeps as tokens.
_TERM = re.compile(r"\w+", re.UNICODE)

FEEDBACK_DOCS = 10
"""Top documents the feedback reads (Anserini's RM3 default, ``fbDocs``)."""
FEEDBACK_TERMS = 10
"""Words the feedback adds (Anserini's RM3 default, ``fbTerms``)."""
STOPWORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
    "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of",
    "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
    "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
    "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
    "yourselves",
))
"""Function words a feedback term never is (they weigh most in every document)."""


def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 compiled in (CPython's builds do)."""
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


def match_expression(query: str) -> str | None:
    """``query`` as an FTS5 MATCH expression: its distinct terms, each quoted (so no word is
    read as an operator such as ``NOT``), joined by ``OR`` (BM25 sums over the terms a document
    has, so a document need not hold them all); ``None`` when the query has no term."""
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(query)))
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


class LexicalIndex:
    """BM25 full-text search over string ids, in an in-memory SQLite FTS5 table.

    One connection per index, shared by threads under one lock (SQLite connections are not
    safe to use from two threads at once; a search is short).
    """

    name = "fts5-bm25"

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61 "
            "remove_diacritics 2')")
        self._rowid_of: dict[str, int] = {}
        self._id_of: dict[int, str] = {}
        self._next_rowid = 0
        self._lock = threading.Lock()

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Store one text per id; an id already stored is an error."""
        if len(ids) != len(texts):
            raise ValueError(f"got {len(ids)} ids but {len(texts)} texts")
        with self._lock:
            seen: set[str] = set()
            for item_id in ids:
                if item_id in self._rowid_of or item_id in seen:
                    raise ValueError(f"id {item_id!r} is already in the index")
                seen.add(item_id)
            rows = [(self._next_rowid + n, text) for n, text in enumerate(texts)]
            self._next_rowid += len(rows)
            with self._db:
                self._db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", rows)
            for (rowid, _), item_id in zip(rows, ids, strict=True):
                self._rowid_of[item_id] = rowid
                self._id_of[rowid] = item_id

    def remove(self, ids: Iterable[str]) -> int:
        """Forget these ids (unknown ones are ignored); returns how many were removed."""
        with self._lock:
            rowids = [self._rowid_of.pop(i) for i in dict.fromkeys(ids) if i in self._rowid_of]
            for rowid in rowids:
                del self._id_of[rowid]
            with self._db:
                self._db.executemany("DELETE FROM docs WHERE rowid = ?", [(r,) for r in rowids])
            return len(rowids)

    def search(self, query: str, k: int, *, allow: Collection[str] | None = None) -> list[Hit]:
        """Up to ``k`` hits for ``query``, best BM25 first (ties by insertion order), among
        ``allow`` when given. A document sharing no term with the query is no hit."""
        expression = match_expression(query)
        if expression is None or k <= 0:
            return []
        sql = "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ?"
        params: list[object] = [expression]
        with self._lock:
            if allow is not None:
                allowed = [self._rowid_of[i] for i in allow if i in self._rowid_of]
                if not allowed:
                    return []
                sql += " AND rowid IN (SELECT value FROM json_each(?))"
                params.append(json.dumps(allowed))
            sql += " ORDER BY bm25(docs), rowid LIMIT ?"
            params.append(k)
            rows = self._db.execute(sql, params).fetchall()
            return [(self._id_of[rowid], -float(score)) for rowid, score in rows]

    def feedback_terms(self, query: str, *, allow: Collection[str] | None = None,
                       docs: int = FEEDBACK_DOCS, terms: int = FEEDBACK_TERMS) -> list[str]:
        """RM3's expansion words for ``query`` among ``allow``: over its ``docs`` best BM25
        hits, weight(w) = Σ_d P(w | d) · s_d / Σ s (P(w | d) a word's share of d's words, s_d
        the hit's BM25 score); the ``terms`` heaviest words that are not stop words, digits or
        the query's own, heaviest first (ties alphabetical). None when nothing matches."""
        hits = self.search(query, docs, allow=allow)
        total = sum(score for _, score in hits)
        if not hits or total <= 0:
            return []
        with self._lock:
            bodies = dict(self._db.execute(
                "SELECT rowid, body FROM docs WHERE rowid IN (SELECT value FROM json_each(?))",
                [json.dumps([self._rowid_of[i] for i, _ in hits])]).fetchall())
        asked = {t.lower() for t in _TERM.findall(query)}
        weight: dict[str, float] = {}
        for item_id, score in hits:
            words = [w.lower() for w in _TERM.findall(bodies[self._rowid_of[item_id]])]
            for word in words:
                weight[word] = weight.get(word, 0.0) + score / total / len(words)
        kept = [w for w in weight if w not in asked and w not in STOPWORDS
                and not w.isdigit() and len(w) > 1]
        return sorted(kept, key=lambda w: (-weight[w], w))[:terms]

    def __len__(self) -> int:
        return len(self._rowid_of)

    def __repr__(self) -> str:
        return f"LexicalIndex(size={len(self)})"
