"""The extra texts an item is indexed under, besides its own: passages and turn windows.

Two failures of indexing each item's text once, both measured on conversational data
(docs/benchmarks.md, "Memory retrieval"):

- **Long items are cut.** MiniLM reads 256 word pieces; an M3Exam round (a user message and a
  long assistant reply, median 113 words, 14 % over 180) loses its end to the embedding, and one
  vector averages several topics. Each item is also split into overlapping passages of
  ``PASSAGE_WORDS`` words (stride ``PASSAGE_STRIDE``), and the passage ranking scores an item by
  its best passage (MaxP: Dai & Callan, SIGIR 2019).
- **Short turns lack their context.** In a chat of one-line turns (LoCoMo: median 20 words) the
  question's words are often in one turn and the answer in the reply ("When are you opening the
  studio?" / "The studio looks amazing"). A turn under ``TURN_WINDOW_WORDS`` words is also
  indexed together with the turn before it in its session (a context window, as in contextual
  chunk retrieval), so a reply is found by the words of what it answers. Only the turn *before*:
  a window never holds a later turn, so under the causal cut no visible item is ranked by words
  said after the question.

In a hybrid search (``hybrid``) the passage ranking takes the place of the whole-item dense
ranking (a short item is one passage: the same vector), and the window's dense and BM25
rankings join the fusion; BM25 still reads each item's own text. A view equal to a text
already embedded is not embedded again.
"""

from __future__ import annotations

from collections.abc import Sequence

from m3kit.memory.retrieval.items import MemoryItem

PASSAGE_WORDS = 60
"""Words per passage: well inside MiniLM's 256 word pieces, about one topic of a reply."""
PASSAGE_STRIDE = 30
"""Passages overlap by half, so no sentence is only ever seen cut in two."""
TURN_WINDOW_WORDS = 60
"""A turn shorter than this gets a context window. Chosen from the item lengths, not from
recall: a one-line chat turn (LoCoMo's 90th percentile is 40 words) is under it, a round that
already holds a question and its reply (M3Exam's 10th percentile is 63 words) is not."""

# Items that are a single utterance of the conversation: a round, a transcript line. Frames,
# images, PDF pages and summaries stand on their own.
_TURN_MODALITIES = ("text", "transcript")


def passages(text: str, *, words: int = PASSAGE_WORDS, stride: int = PASSAGE_STRIDE
             ) -> list[str]:
    """``text`` as overlapping passages of ``words`` words, ``stride`` apart (the text itself
    when it has no more than ``words`` words; the last passage ends with the text)."""
    if words <= 0 or stride <= 0:
        raise ValueError(f"words and stride must be positive, got {words} and {stride}")
    tokens = text.split()
    if len(tokens) <= words:
        return [text]
    starts = list(range(0, len(tokens) - words, stride)) + [len(tokens) - words]
    return [" ".join(tokens[s:s + words]) for s in dict.fromkeys(starts)]


def is_turn(item: MemoryItem) -> bool:
    """Whether ``item`` is one utterance of the conversation (a round or a transcript line,
    not an attachment and not a summary)."""
    return (item.modality in _TURN_MODALITIES and "attachment_id" not in item.metadata
            and item.metadata.get("chunk") != "session_summary")


def turn_windows(items: Sequence[MemoryItem | None], texts: Sequence[str], *,
                 words: int = TURN_WINDOW_WORDS) -> list[str]:
    """The context window of each indexed text: for a turn (``is_turn``) with non-blank text of
    fewer than ``words`` words that has a previous turn in the same session
    (``metadata["session_id"]``), that turn's text and its own, one per line; for anything else
    its own text. ``items[n]`` is the item ``texts[n]`` stands for (``None``: not an item of the
    conversation, e.g. a summary under its own id); turns follow each other in the order given."""
    if len(items) != len(texts):
        raise ValueError(f"got {len(items)} items but {len(texts)} texts")
    out = list(texts)
    previous: MemoryItem | None = None
    previous_text = ""
    for n, item in enumerate(items):
        if item is None or not is_turn(item) or not texts[n].strip():
            continue
        if (previous is not None and len(texts[n].split()) < words
                and previous.metadata.get("session_id") == item.metadata.get("session_id")):
            out[n] = f"{previous_text}\n{texts[n]}"
        previous, previous_text = item, texts[n]
    return out
