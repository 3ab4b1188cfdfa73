"""How events are said: captions, storyline clauses and question stems.

Text clauses name characters and places (what captions show); visual clauses name colours and
shapes (what only pixels show). Keeping both here keeps the wording of captions and of answer
options identical, so an option can be matched verbatim against text read off the frames.
"""

from __future__ import annotations

from collections.abc import Sequence

from m3kit.synth.vocab import ACTION_WORDS

# Ordinal openers of storyline paragraphs; the last clause always takes "Finally".
_OPENERS = ("First", "Next", "Then", "After that", "Later", "Afterwards", "Soon after",
            "Following that", "Subsequently")


def caption(name: str, action: str, scene: str) -> str:
    """The caption of a beat: ``"the fox jumps in the kitchen"``, ``"the owl enters the
    garden"``."""
    words = ACTION_WORDS[action]
    place = f"the {scene}" if words.takes_place else f"in the {scene}"
    return f"the {name} {words.present} {place}"


def visual_clause(colour: str, shape: str, action: str) -> str:
    """What the pixels of a beat show, without any word a caption uses for it:
    ``"a red circle jumps"``."""
    return f"{_article(colour)} {colour} {shape} {ACTION_WORDS[action].present}"


def present(action: str) -> str:
    """``"moves left"``: the verb as captions say it."""
    return ACTION_WORDS[action].present


def paragraph(clauses: Sequence[str]) -> str:
    """Clauses as one narrative paragraph with ordinal openers (same scaffold for every option,
    so options differ only where the design changes a slot)."""
    if not clauses:
        return ""
    parts = []
    last = len(clauses) - 1
    for i, clause in enumerate(clauses):
        opener = "Finally" if i == last and i > 0 else _OPENERS[min(i, len(_OPENERS) - 1)]
        parts.append(f"{opener}, {clause}.")
    return " ".join(parts)


def video_label(target: str) -> str:
    """``"video1"`` → ``"Video 1"``."""
    return {"video1": "Video 1", "video2": "Video 2"}[target]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
