"""Event scripts: the exact ground truth of a synthetic source video, and their generation.

A video is a row of equal *beats*. In each beat one actor (a coloured shape with a character
name) performs one action in one scene. A beat is either *captioned* — a caption bar says
``"the fox jumps in the kitchen"`` — or *silent*, with the caption bar empty. Questions about
captioned beats can be answered from on-screen text; questions about silent beats only from the
pixels (colours, shapes, motion), because no caption ever names a colour or a shape.

Scripts are seeded and pure: the same arguments give the same script, byte for byte.

Paired sources (``generate_pair``) share their *structure* — beat count and timing, which beats
are captioned, where scenes change — and, each with probability ``similarity``, the scene of a
scene run, the shape of an actor, the action of a beat and the actor of a beat. Actor colours
and names never repeat across a pair: they are the fine details whose confusion M3Eval measures,
and keeping them disjoint gives every interference question options that belong to exactly one
video.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import asdict
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from m3kit.synth.errors import SynthError
from m3kit.synth.phrases import caption, visual_clause
from m3kit.synth.vocab import (
    ACTIONS,
    ACTOR_COLOURS,
    NAMES,
    RGB,
    SCENE_STYLES,
    SHAPES,
    Action,
    Pattern,
    Shape,
)

__all__ = [
    "Actor",
    "Event",
    "Evidence",
    "Scene",
    "SceneSpan",
    "SourcePair",
    "VideoScript",
    "generate_pair",
    "generate_script",
]

# Bump when a change to the generator or the records changes what a given seed produces.
SCRIPT_VERSION: Final = 1
Evidence = Literal["text", "visual"]
_RECORD = ConfigDict(extra="forbid", frozen=True)
# Beat timing must land on the frame grid within this slack (1.5 s × 10 fps = 15 frames).
_GRID_SLACK = 1e-6


class Scene(BaseModel):
    """A named place and what it looks like (copied from the vocabulary, so a script alone
    renders the same video even if the vocabulary grows)."""

    model_config = _RECORD

    name: str
    wall: RGB
    floor: RGB
    pattern: Pattern
    pattern_colour: RGB
    patterned: Literal["wall", "floor"]


class Actor(BaseModel):
    """A character: a coloured shape on screen, a name in captions."""

    model_config = _RECORD

    id: str
    name: str
    shape: Shape
    colour: str = Field(description="a name from vocab.ACTOR_COLOURS")

    @property
    def rgb(self) -> RGB:
        return ACTOR_COLOURS[self.colour]


class Event(BaseModel):
    """Beat ``index``: ``actor`` performs ``action`` in ``scene`` during ``[start, end)`` seconds;
    ``caption`` is the on-screen text during the beat (None: a silent beat)."""

    model_config = _RECORD

    index: int = Field(ge=0)
    start: float = Field(ge=0)
    end: float = Field(gt=0)
    actor: str
    action: Action
    scene: str
    caption: str | None = None

    @property
    def evidence(self) -> Evidence:
        """Where the beat's content can be read: on-screen text or pixels only."""
        return "text" if self.caption is not None else "visual"


class SceneSpan(BaseModel):
    """The scene on screen during ``[start, end)`` seconds."""

    model_config = _RECORD

    scene: str
    start: float = Field(ge=0)
    end: float = Field(gt=0)


class VideoScript(BaseModel):
    """Everything a synthetic source video shows, beat by beat."""

    model_config = _RECORD

    version: Literal[1] = SCRIPT_VERSION
    id: str = Field(min_length=1)
    seed: int
    fps: float = Field(gt=0)
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    beat_seconds: float = Field(gt=0)
    scenes: list[Scene]
    timeline: list[SceneSpan]
    actors: list[Actor]
    events: list[Event]
    similar_to: str | None = None
    similarity: float | None = None

    @model_validator(mode="after")
    def _consistent(self) -> VideoScript:
        if self.width % 2 or self.height % 2:
            raise ValueError(f"size must be even (H.264), got {self.width}x{self.height}")
        per_beat = self.beat_seconds * self.fps
        if abs(per_beat - round(per_beat)) > _GRID_SLACK or round(per_beat) < 1:
            raise ValueError(
                f"beat_seconds × fps must be a whole number of frames, got {per_beat:g}"
            )
        actors = {a.id for a in self.actors}
        scenes = {s.name for s in self.scenes}
        for n, ev in enumerate(self.events):
            if ev.index != n:
                raise ValueError(f"events[{n}] has index {ev.index}")
            if abs(ev.start - n * self.beat_seconds) > _GRID_SLACK or \
                    abs(ev.end - (n + 1) * self.beat_seconds) > _GRID_SLACK:
                raise ValueError(f"event {n} does not span beat {n}")
            if ev.actor not in actors:
                raise ValueError(f"event {n} names unknown actor {ev.actor!r}")
            if ev.scene not in scenes:
                raise ValueError(f"event {n} names unknown scene {ev.scene!r}")
        actions = [e.action for e in self.events]
        if len(set(actions)) != len(actions):
            # One beat per action keeps "which character jumps?" single-answer.
            raise ValueError("every action must occur at most once in a video")
        for span in self.timeline:
            if span.scene not in scenes:
                raise ValueError(f"timeline names unknown scene {span.scene!r}")
        return self

    # -- timing ------------------------------------------------------------------------------

    @property
    def frames_per_beat(self) -> int:
        return round(self.beat_seconds * self.fps)

    @property
    def frame_count(self) -> int:
        return self.frames_per_beat * len(self.events)

    @property
    def duration(self) -> float:
        return len(self.events) * self.beat_seconds

    def beat_of_frame(self, index: int) -> int:
        """The beat shown by frame ``index`` (integer arithmetic: no float edge at boundaries)."""
        if not 0 <= index < self.frame_count:
            raise IndexError(f"frame {index} is outside 0..{self.frame_count - 1}")
        return index // self.frames_per_beat

    def beat_span(self, beat: int) -> tuple[float, float]:
        """``(start, end)`` seconds of ``beat``."""
        ev = self.events[beat]
        return ev.start, ev.end

    # -- lookups ------------------------------------------------------------------------------

    def actor(self, actor_id: str) -> Actor:
        for a in self.actors:
            if a.id == actor_id:
                return a
        raise KeyError(actor_id)

    def scene(self, name: str) -> Scene:
        for s in self.scenes:
            if s.name == name:
                return s
        raise KeyError(name)

    def channel(self, evidence: Evidence) -> list[Event]:
        """The captioned (``"text"``) or silent (``"visual"``) beats, in order."""
        return [e for e in self.events if e.evidence == evidence]

    def event_with_action(self, action: str) -> Event | None:
        return next((e for e in self.events if e.action == action), None)

    def text_clause(self, event: Event) -> str:
        """The beat as its caption says it (also for a silent beat: what a caption would say)."""
        return caption(self.actor(event.actor).name, event.action, event.scene)

    def visual_clause(self, event: Event) -> str:
        """The beat as its pixels show it: ``"a red circle jumps"``."""
        a = self.actor(event.actor)
        return visual_clause(a.colour, a.shape, event.action)

    @property
    def captions(self) -> list[tuple[float, float, str]]:
        """``(start, end, text)`` of every caption."""
        return [(e.start, e.end, e.caption) for e in self.events if e.caption is not None]

    def content_hash(self) -> str:
        """sha256 of the script's JSON: names the rendered video in caches."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


class SourcePair(BaseModel):
    """Two semantically similar source videos: ``video2`` generated ``similar_to`` ``video1``."""

    model_config = _RECORD

    id: str
    video1: VideoScript
    video2: VideoScript

    def script(self, target: str) -> VideoScript:
        return {"video1": self.video1, "video2": self.video2}[target]

    def other(self, target: str) -> VideoScript:
        return {"video1": self.video2, "video2": self.video1}[target]


# -- generation -------------------------------------------------------------------------------


def generate_script(
    seed: int,
    *,
    script_id: str | None = None,
    beats: int = 8,
    beat_seconds: float = 1.5,
    fps: float = 10.0,
    size: tuple[int, int] = (320, 240),
    actors: int = 4,
    scene_runs: int = 3,
    similar_to: VideoScript | None = None,
    similarity: float = 0.8,
) -> VideoScript:
    """A reproducible script for ``seed``.

    Without ``similar_to``: ``beats`` beats of ``beat_seconds`` at ``fps``, ``actors`` actors of
    distinct shapes, colours and names, ``scene_runs`` runs of distinct scenes, every action at
    most once, captioned and silent beats alternating.

    With ``similar_to``: the structure (beats, timing, size, captioned beats, scene-run
    boundaries, actor count) is copied, the arguments that set it are ignored, and each scene
    run, actor shape, beat action and beat actor is copied with probability ``similarity``
    (else drawn anew); colours and names are always drawn from those ``similar_to`` does not use.
    """
    if not 0.0 <= similarity <= 1.0:
        raise SynthError(f"similarity must be in [0, 1], got {similarity}", field="similarity")
    rng = random.Random(f"m3kit.synth.script:{SCRIPT_VERSION}:{seed}")
    if similar_to is None:
        _check_structure(beats, actors, scene_runs, beat_seconds, fps, size)
        width, height = size
        caption_phase = rng.randrange(2)
        captioned = [(i + caption_phase) % 2 == 0 for i in range(beats)]
        runs = _run_lengths(beats, scene_runs, rng)
        run_scenes = rng.sample(list(SCENE_STYLES), scene_runs)
        cast = _cast(actors, rng, SHAPES, list(ACTOR_COLOURS), list(NAMES))
        beat_actors = _assign_actors(beats, actors, rng)
        actions = rng.sample(ACTIONS, beats)
    else:
        src = similar_to
        beats = len(src.events)
        beat_seconds, fps = src.beat_seconds, src.fps
        width, height = src.width, src.height
        captioned = [e.caption is not None for e in src.events]
        runs = _runs_of(src)
        run_scenes = _similar_scenes(src, runs, similarity, rng)
        cast = _similar_cast(src, similarity, rng)
        beat_actors = _similar_actors(src, similarity, rng)
        actions = _similar_actions(src, similarity, rng)
        actors = len(src.actors)
    # one scene per run
    scene_of_beat = [name for name, length in zip(run_scenes, runs, strict=True)
                     for _ in range(length)]
    events = []
    for i in range(beats):
        actor = cast[beat_actors[i]]
        text = caption(actor.name, actions[i], scene_of_beat[i]) if captioned[i] else None
        events.append(Event(
            index=i, start=round(i * beat_seconds, 6), end=round((i + 1) * beat_seconds, 6),
            actor=actor.id, action=actions[i], scene=scene_of_beat[i], caption=text,
        ))
    timeline, t = [], 0
    for name, length in zip(run_scenes, runs, strict=True):
        timeline.append(SceneSpan(scene=name, start=round(t * beat_seconds, 6),
                                  end=round((t + length) * beat_seconds, 6)))
        t += length
    scenes = [Scene(name=n, **asdict(SCENE_STYLES[n])) for n in dict.fromkeys(run_scenes)]
    return VideoScript(
        id=script_id or f"s{seed}", seed=seed, fps=fps, width=width, height=height,
        beat_seconds=beat_seconds, scenes=scenes, timeline=timeline, actors=cast, events=events,
        similar_to=similar_to.id if similar_to is not None else None,
        similarity=similarity if similar_to is not None else None,
    )


def generate_pair(
    seed: int,
    *,
    pair_id: str | None = None,
    similarity: float = 0.8,
    **structure,
) -> SourcePair:
    """Two similar scripts from one seed: ``video1`` fresh, ``video2`` ``similar_to`` it.
    ``structure`` takes ``generate_script``'s keywords (beats, beat_seconds, fps, size, actors,
    scene_runs)."""
    pid = pair_id or f"p{seed}"
    first = generate_script(seed * 2 + 1, script_id=f"{pid}v1", **structure)
    second = generate_script(seed * 2 + 2, script_id=f"{pid}v2", similar_to=first,
                             similarity=similarity)
    return SourcePair(id=pid, video1=first, video2=second)


def _check_structure(beats: int, actors: int, runs: int, beat_seconds: float, fps: float,
                     size: tuple[int, int]) -> None:
    if not 2 <= beats <= len(ACTIONS):
        raise SynthError(f"beats must be in 2..{len(ACTIONS)} (one action per beat), got {beats}",
                         field="beats")
    # Two casts of disjoint colours plus one colour neither uses (the irrelevant option).
    if not 2 <= actors <= (len(ACTOR_COLOURS) - 1) // 2:
        raise SynthError(f"actors must be in 2..{(len(ACTOR_COLOURS) - 1) // 2}, got {actors}",
                         field="actors")
    if actors > beats:
        raise SynthError(f"{actors} actors cannot all appear in {beats} beats", field="actors")
    if not 1 <= runs <= min(beats, len(SCENE_STYLES)):
        raise SynthError(f"scene_runs must be in 1..{min(beats, len(SCENE_STYLES))}, got {runs}",
                         field="scene_runs")
    per_beat = beat_seconds * fps
    if abs(per_beat - round(per_beat)) > _GRID_SLACK or round(per_beat) < 2:
        raise SynthError(
            f"beat_seconds × fps must be a whole number of frames >= 2, got {per_beat:g}",
            field="beat_seconds",
        )
    w, h = size
    if w % 2 or h % 2 or w < 64 or h < 48:
        raise SynthError(f"size must be even and at least 64x48, got {w}x{h}", field="size")


def _run_lengths(beats: int, runs: int, rng: random.Random) -> list[int]:
    """``runs`` contiguous lengths summing to ``beats``, as even as possible, in random order."""
    base, extra = divmod(beats, runs)
    lengths = [base + (1 if i < extra else 0) for i in range(runs)]
    rng.shuffle(lengths)
    return lengths


def _runs_of(script: VideoScript) -> list[int]:
    return [round((s.end - s.start) / script.beat_seconds) for s in script.timeline]


def _cast(n: int, rng: random.Random, shapes: Sequence[Shape], colours: list[str],
          names: list[str]) -> list[Actor]:
    # each sample holds exactly n
    picked = zip(rng.sample(list(shapes), n), rng.sample(colours, n), rng.sample(names, n),
                 strict=True)
    return [Actor(id=f"a{i}", name=nm, shape=sh, colour=co)
            for i, (sh, co, nm) in enumerate(picked)]


def _assign_actors(beats: int, actors: int, rng: random.Random) -> list[int]:
    """Actor index per beat; every actor appears at least once."""
    slots = list(range(actors)) + [rng.randrange(actors) for _ in range(beats - actors)]
    rng.shuffle(slots)
    return slots


def _similar_scenes(src: VideoScript, runs: list[int], s: float, rng: random.Random) -> list[str]:
    original = [span.scene for span in src.timeline]
    out: list[str] = []
    for name in original:
        if rng.random() < s and name not in out:
            out.append(name)
        else:
            pool = [n for n in SCENE_STYLES if n not in out and n != name] or \
                [n for n in SCENE_STYLES if n not in out]
            out.append(rng.choice(pool))
    return out


def _similar_cast(src: VideoScript, s: float, rng: random.Random) -> list[Actor]:
    colours = [c for c in ACTOR_COLOURS if c not in {a.colour for a in src.actors}]
    names = [n for n in NAMES if n not in {a.name for a in src.actors}]
    new_colours = rng.sample(colours, len(src.actors))
    new_names = rng.sample(names, len(src.actors))
    shapes: list[Shape] = []
    for a in src.actors:
        keep = rng.random() < s and a.shape not in shapes
        shapes.append(a.shape if keep else rng.choice(
            [x for x in SHAPES if x not in shapes and x != a.shape]))
    return [Actor(id=f"a{i}", name=new_names[i], shape=shapes[i], colour=new_colours[i])
            for i in range(len(src.actors))]


def _similar_actors(src: VideoScript, s: float, rng: random.Random) -> list[int]:
    n = len(src.actors)
    index = {a.id: i for i, a in enumerate(src.actors)}
    original = [index[e.actor] for e in src.events]
    out = [k if rng.random() < s else rng.randrange(n) for k in original]
    # Every actor must still appear once: move a doubled slot onto each missing actor.
    for missing in [k for k in range(n) if k not in out]:
        doubled = [i for i, k in enumerate(out) if out.count(k) > 1]
        out[rng.choice(doubled)] = missing
    return out


def _similar_actions(src: VideoScript, s: float, rng: random.Random) -> list[Action]:
    original = [e.action for e in src.events]
    out: list[Action | None] = [a if rng.random() < s else None for a in original]
    for i, a in enumerate(out):
        if a is None:
            used = {x for x in out if x is not None}
            pool = [x for x in ACTIONS if x not in used and x != original[i]] or \
                [x for x in ACTIONS if x not in used]
            out[i] = rng.choice(pool)
    return [a for a in out if a is not None]
