"""How the builtin provider's abstention threshold was chosen, as code you can re-run.

The procedure: build a synthetic set of multiple-choice memory questions whose evidence either
states the answer (answerable) or does not (unanswerable: the evidence holds facts of the same
kind about *other* things — "I left the wallet on the shelf" when asked about the keys — plus
unrelated facts). Score every item with the builtin's scorer, take the best non-abstain option's
score, and pick the threshold that maximises balanced accuracy between the two sets
(``m3kit.models.scoring.calibrate_threshold``). ``DEFAULT_ABSTAIN_THRESHOLD`` in
``m3kit.models.builtin`` is ``calibrate_default()`` (48 items, seed 0) rounded to two decimals:
0.58; tests re-run the procedure. The synthetic sets separate perfectly (answerable best scores
0.66-0.85, unanswerable 0.15-0.48), so the threshold sits in the middle of that gap.

Synthetic text is not benchmark text: for a benchmark, re-calibrate on its own development
split (``calibrate_threshold`` over the scores in ``metadata["m3kit"]["best_score"]``) and pass
the result as ``-M abstain_threshold=...``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from m3kit.models.evidence import EvidenceUnit
from m3kit.models.scoring import EvidenceScorer, calibrate_threshold

# (fact phrasings, question, entities, values): a fact states a value for an entity, in one of
# two phrasings (the second reworded away from the question, as real evidence often is).
_TEMPLATES: tuple[tuple[tuple[str, str], str, tuple[str, ...], tuple[str, ...]], ...] = (
    (("I left the {e} on the {v}.", "You can find the {e} lying on the {v}."),
     "Where did I leave the {e}?",
     ("keys", "wallet", "phone charger", "sunglasses", "passport", "umbrella"),
     ("kitchen table", "bookshelf", "bathroom sink", "car seat", "windowsill", "piano")),
    (("{e} said the team meeting moved to {v}.", "According to {e}, we now meet on {v}."),
     "Which day did {e} say the meeting moved to?",
     ("Maria", "Tom", "Priya", "Chen", "Olga", "Samir"),
     ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")),
    (("The sign on the {e} door reads Room {v}.", "Room {v} is painted on the {e} entrance."),
     "What room number is on the {e} door?",
     ("lab", "office", "storage", "library", "clinic", "studio"),
     ("12", "27", "38", "45", "63", "81")),
    (("{e} ordered a {v} for lunch.", "At midday {e} got the {v}."),
     "What did {e} order for lunch?",
     ("Alex", "Jordan", "Mei", "Ravi", "Lena", "Omar"),
     ("mushroom risotto", "tuna sandwich", "lentil soup", "beef burrito", "caesar salad",
      "margherita pizza")),
    (("The {e} was parked next to the {v}.", "Someone left the {e} beside the {v}."),
     "Where was the {e} parked?",
     ("red van", "blue bicycle", "delivery truck", "motorbike", "taxi", "school bus"),
     ("fountain", "bakery", "petrol station", "post office", "train station", "playground")),
    (("My {e}'s flight lands at {v}.", "The plane bringing my {e} touches down at {v}."),
     "When does my {e}'s flight land?",
     ("sister", "brother", "uncle", "aunt", "cousin", "grandmother"),
     ("7:15 am", "9:40 am", "noon", "3:30 pm", "6:05 pm", "11:20 pm")),
)


@dataclass(frozen=True)
class CalibrationItem:
    """One synthetic question: its options (no abstain option), evidence, and whether the
    evidence states the answer."""

    question: str
    options: tuple[str, ...]
    evidence: tuple[str, ...]
    answerable: bool
    answer: str | None


def synthetic_items(n: int = 48, *, seed: int = 0) -> list[CalibrationItem]:
    """``n`` items, half answerable, half not; the same ``seed`` gives the same items."""
    rng = random.Random(seed)
    items = []
    for k in range(n):
        facts, question, entities, values = _TEMPLATES[k % len(_TEMPLATES)]
        entity, other = rng.sample(entities, 2)
        truth, *wrong = rng.sample(values, 4)
        options = [truth, *wrong[:2]]
        rng.shuffle(options)
        answerable = k % 2 == 0
        # Distractor facts: the same kind of fact about another entity (a hard negative), and
        # facts from two other templates.
        evidence = [rng.choice(facts).format(e=other, v=wrong[2])]
        for j in rng.sample([t for t in range(len(_TEMPLATES)) if t != k % len(_TEMPLATES)], 2):
            fs, _, es, vs = _TEMPLATES[j]
            evidence.append(rng.choice(fs).format(e=rng.choice(es), v=rng.choice(vs)))
        if answerable:
            stated = rng.choice(facts).format(e=entity, v=truth)
            evidence.insert(rng.randrange(len(evidence) + 1), stated)
        items.append(CalibrationItem(
            question=question.format(e=entity), options=tuple(options),
            evidence=tuple(evidence), answerable=answerable,
            answer=truth if answerable else None,
        ))
    return items


def best_scores(
    scorer: EvidenceScorer, items: list[CalibrationItem]
) -> tuple[list[float], list[float], float]:
    """Best option score per item, split (answerable, unanswerable), and the accuracy of the
    argmax on answerable items."""
    answerable: list[float] = []
    unanswerable: list[float] = []
    correct = 0
    # One embedding batch for the whole set (the scorer caches), not one per item.
    scorer.embed(sorted({f"{item.question} {o}" for item in items for o in item.options}
                        | {text for item in items for text in item.evidence}))
    for item in items:
        units = [EvidenceUnit(text, "synthetic") for text in item.evidence]
        supports = scorer.score_options(item.question, list(item.options), units)
        best = max(range(len(supports)), key=lambda n: (supports[n].score, -n))
        (answerable if item.answerable else unanswerable).append(supports[best].score)
        correct += int(item.answerable and item.options[best] == item.answer)
    return answerable, unanswerable, correct / max(1, sum(i.answerable for i in items))


def calibrate_default(scorer: EvidenceScorer, n: int = 48, *, seed: int = 0) -> float:
    """The threshold ``calibrate_threshold`` picks on ``synthetic_items(n, seed=seed)``."""
    answerable, unanswerable, _ = best_scores(scorer, synthetic_items(n, seed=seed))
    return calibrate_threshold(answerable, unanswerable)
