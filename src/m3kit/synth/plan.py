"""What a suite holds, planned from its config: the source pairs, the N-back trials, one
``ProbeSpec`` per probe, and the questions asked about each rendered probe."""

from __future__ import annotations

from m3kit.schema.media import VideoRef
from m3kit.schema.question import Question
from m3kit.synth.config import ORDERS, SuiteConfig
from m3kit.synth.nback import NBackTrial, design_trials
from m3kit.synth.options import item_rng
from m3kit.synth.probes import ClipSpec, ProbeRecord, ProbeSpec
from m3kit.synth.questions import (
    ProbeContext,
    false_memory_questions,
    interference_questions,
    nback_questions,
    source_memory_questions,
    storyline_questions,
)
from m3kit.synth.script import SourcePair, generate_pair

__all__ = [
    "derived_seed",
    "nback_trials",
    "probe_context",
    "probe_specs",
    "source_pairs",
    "suite_questions",
]


def derived_seed(seed: int, *key: object) -> int:
    """A seed for one part of the suite (a pair, the N-back trials) from the suite seed."""
    return item_rng(seed, *key).randrange(2**31)


def source_pairs(config: SuiteConfig) -> list[SourcePair]:
    """The suite's source pairs ``p0``, ``p1``, ... (scripts only, nothing rendered)."""
    return [
        generate_pair(
            derived_seed(config.seed, "pair", i), pair_id=f"p{i}", similarity=config.similarity,
            beats=config.beats, beat_seconds=config.beat_seconds, fps=config.fps,
            size=tuple(config.size), actors=config.actors,
            scene_runs=min(config.scene_runs, config.beats),
        )
        for i in range(config.pairs)
    ]


def nback_trials(config: SuiteConfig) -> list[NBackTrial]:
    """The N-back trials (their one-beat clip scripts included); none without the paradigm."""
    if "nback" not in config.paradigms:
        return []
    return design_trials(n_values=config.nback_n, k_values=config.nback_k,
                         trials=config.nback_trials, evidence=config.evidence,
                         seed=derived_seed(config.seed, "nback"),
                         beat_seconds=config.beat_seconds, fps=config.fps,
                         size=config.size)


def probe_specs(pairs: list[SourcePair], trials: list[NBackTrial],
                 config: SuiteConfig) -> list[ProbeSpec]:
    """One spec per probe: per pair, a split screen per swap count, a concatenation per
    interference condition and an interleaving per segment count; one clip sequence per
    N-back trial."""
    specs: list[ProbeSpec] = []
    for pair in pairs:
        both = [ClipSpec(id="video1", script=pair.video1.id),
                ClipSpec(id="video2", script=pair.video2.id)]
        if "divided_attention" in config.paradigms:
            for k in config.swaps:
                specs.append(ProbeSpec(
                    id=f"da-{pair.id}-swap{k}", paradigm="divided_attention",
                    condition=f"swap{k}", kind="split_screen", inputs=both,
                    order=["video1", "video2"], pair=pair.id, swaps=k))
        if "interference" in config.paradigms:
            for cond in config.interference_conditions:
                specs.append(ProbeSpec(
                    id=f"mi-{pair.id}-{cond}", paradigm="interference", condition=cond,
                    kind="concat", inputs=both, order=ORDERS[cond], pair=pair.id))
        if "interleaved" in config.paradigms:
            for n in config.interleave_segments:
                specs.append(ProbeSpec(
                    id=f"il-{pair.id}-seg{n}", paradigm="interleaved", condition=f"seg{n}",
                    kind="interleave", inputs=both, order=["video1", "video2"], pair=pair.id,
                    segments=n))
    for trial in trials:
        clips = [ClipSpec(id=f"clip{j + 1}", script=c.script.id)
                 for j, c in enumerate(trial.clips)]
        specs.append(ProbeSpec(
            id=trial.id, paradigm="nback", condition=f"n{trial.n}k{trial.k}", kind="sequence",
            inputs=clips, order=[c.id for c in clips], gap=config.nback_gap))
    return specs


# -- questions --------------------------------------------------------------------------------


def suite_questions(pairs: list[SourcePair], trials: list[NBackTrial],
               records: dict[str, ProbeRecord], config: SuiteConfig) -> list[Question]:
    """Every question of the suite, probe by probe (media paths relative to the suite)."""
    seed = config.seed
    ev = tuple(config.evidence)
    targets = tuple(config.storyline_targets)
    by_pair = {p.id: p for p in pairs}
    # the pair's position numbers its items for the balanced gold letters
    index = {p.id: i for i, p in enumerate(pairs)}
    by_trial = {t.id: t for t in trials}
    out: list[Question] = []
    for record in records.values():
        spec = record.spec
        ctx = probe_context(record)
        if spec.paradigm == "nback":
            spans = [(start, end) for _, start, end in record.spans]
            out += nback_questions(by_trial[spec.id], ctx, seed=seed, spans=spans)
            continue
        pair = by_pair[spec.pair or ""]
        at = index[pair.id]
        if spec.paradigm in ("divided_attention", "interleaved"):
            out += storyline_questions(pair, ctx, seed=seed, targets=targets, evidence=ev,
                                       index=at)
            out += source_memory_questions(pair, ctx, seed=seed, evidence=ev, index=at,
                                           per_evidence=config.source_memory_questions)
        if spec.paradigm == "interleaved":
            out += false_memory_questions(pair, ctx, seed=seed, evidence=ev, index=at,
                                          per_evidence=config.false_memory_questions)
        if spec.paradigm == "interference":
            out += interference_questions(pair, ctx, seed=seed, evidence=ev, index=at,
                                          per_evidence=config.interference_questions)
    return out


def probe_context(record: ProbeRecord) -> ProbeContext:
    """The probe as questions see it: media (relative paths), layout sentence, details."""
    spec = record.spec
    video = VideoRef(path=record.video)
    if spec.paradigm == "nback":
        # One video; the clip spans go in metadata["clips"], where the harness samples per clip.
        media = [video]
        k = len(spec.inputs)
        intro = (f"This video shows {k} short clips one after another, separated by black "
                 f"frames.")
        details: dict = {"gap": spec.gap}
    elif spec.paradigm == "divided_attention":
        media = [video]
        times = "time" if spec.swaps == 1 else "times"
        intro = ("Two videos play side by side: Video 1 starts on the left and Video 2 on the "
                 "right. " + (f"They swap sides {spec.swaps} {times} during the clip."
                              if spec.swaps else "They keep their sides throughout."))
        details = {"swaps": spec.swaps}
    elif spec.paradigm == "interference":
        media = [video]
        intro = f"This video plays {_order_words(spec.order)}."
        details = {"order": spec.order}
    else:
        media = [video]
        n = spec.segments or 1
        intro = (f"This video interleaves two videos cut into {n} segments each, alternating "
                 f"Video 1, Video 2, Video 1, ... and starting with Video 1.")
        details = {"segments": n}
    return ProbeContext(id=spec.id, paradigm=spec.paradigm, condition=spec.condition,
                        intro=intro, media=media, pair=spec.pair, details=details)


def _order_words(order: list[str]) -> str:
    labels = {"video1": "Video 1", "video2": "Video 2"}
    words, seen = [], set()
    for vid in order:
        words.append(labels[vid] + (" again" if vid in seen else ""))
        seen.add(vid)
    return ", then ".join(words)
