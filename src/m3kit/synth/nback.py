"""N-back trials: K one-beat clips, the last compared with the one N positions earlier.

Each clip is its own one-beat script — one actor, one action, one scene — so a clip shows
exactly one value of each of M3Eval's two attributes. Trials are designed attribute-first: the
(scene, action) of every position is chosen, then each clip gets a fresh actor, so two clips
that match on an attribute still differ in everything else and a match must be judged on the
abstract attribute, not on identical pixels. A trial's clips are all captioned (the caption
names both the scene and the action: text suffices) or all silent (the scene is only its look,
the action only its motion: vision is needed).

Answers are balanced by design: the trials of each (evidence, N, K) cell take the four (scene
match, action match) combinations in complementary pairs — (yes, no) then (no, yes), or (yes,
yes) then (no, no) — so with an even number of trials per cell each attribute is "Yes" in exactly
half of the cell's questions, for every N and every K: a model that always answers "No" (or
"Yes") scores exactly 50 % in every row of an N or K breakdown, and a slope over N or K cannot
come from the labels. A "no" on one attribute is then often a lure that matches on the other.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from m3kit.synth.phrases import caption
from m3kit.synth.script import Actor, Event, Evidence, Scene, SceneSpan, VideoScript
from m3kit.synth.vocab import ACTIONS, ACTOR_COLOURS, NAMES, SCENE_STYLES, SHAPES, Action

__all__ = ["Attribute", "NBackClip", "NBackTrial", "clip_script", "design_trials"]

Attribute = Literal["scene", "action"]
_RECORD = ConfigDict(extra="forbid", frozen=True)
# (scene match, action match), in pairs whose answers are complementary on both attributes
_COMPLEMENTARY_PAIRS = [((True, False), (False, True)), ((True, True), (False, False))]


class NBackClip(BaseModel):
    """One clip of a trial: the whole of its one-beat ``script``."""

    model_config = _RECORD

    script: VideoScript

    @property
    def event(self) -> Event:
        return self.script.events[0]

    @property
    def scene(self) -> str:
        return self.event.scene

    @property
    def action(self) -> str:
        return self.event.action

    def attribute(self, name: Attribute) -> str:
        return self.scene if name == "scene" else self.action


class NBackTrial(BaseModel):
    """``k`` clips; the question compares clip ``k`` with clip ``k - n`` (1-based)."""

    model_config = _RECORD

    id: str
    n: int = Field(ge=1)
    k: int = Field(ge=2)
    evidence: Evidence
    clips: list[NBackClip]

    @model_validator(mode="after")
    def _shape(self) -> NBackTrial:
        if self.n >= self.k:
            raise ValueError(f"n ({self.n}) must be below k ({self.k})")
        if len(self.clips) != self.k:
            raise ValueError(f"{len(self.clips)} clips for k={self.k}")
        return self

    @property
    def final(self) -> NBackClip:
        return self.clips[-1]

    @property
    def compared(self) -> NBackClip:
        """The clip ``n`` positions before the last."""
        return self.clips[-1 - self.n]

    def matches(self, attribute: Attribute) -> bool:
        return self.final.attribute(attribute) == self.compared.attribute(attribute)


def clip_script(
    script_id: str,
    seed: int,
    *,
    scene: str,
    action: Action,
    evidence: Evidence,
    beat_seconds: float,
    fps: float,
    size: tuple[int, int],
) -> VideoScript:
    """A one-beat script: a random actor (from ``seed``) performing ``action`` in ``scene``,
    captioned when ``evidence`` is ``"text"``."""
    rng = random.Random(f"m3kit.synth.clip:{seed}")
    actor = Actor(id="a0", name=rng.choice(NAMES), shape=rng.choice(SHAPES),
                  colour=rng.choice(list(ACTOR_COLOURS)))
    text = caption(actor.name, action, scene) if evidence == "text" else None
    return VideoScript(
        id=script_id, seed=seed, fps=fps, width=size[0], height=size[1],
        beat_seconds=beat_seconds,
        scenes=[Scene(name=scene, **asdict(SCENE_STYLES[scene]))],
        timeline=[SceneSpan(scene=scene, start=0.0, end=beat_seconds)],
        actors=[actor],
        events=[Event(index=0, start=0.0, end=beat_seconds, actor="a0", action=action,
                      scene=scene, caption=text)],
    )


def design_trials(
    *,
    n_values: Sequence[int],
    k_values: Sequence[int],
    trials: int,
    evidence: Sequence[Evidence],
    seed: int,
    beat_seconds: float = 1.5,
    fps: float = 10.0,
    size: tuple[int, int] = (320, 240),
) -> list[NBackTrial]:
    """``trials`` trials for every (evidence, k, n) with n < k, ids
    ``nb-<evidence>-n<n>-k<k>-t<i>``. Each cell's trials cycle through the four (scene match,
    action match) combinations two complementary ones at a time (seeded order), so an even
    ``trials`` balances Yes and No exactly per attribute in every cell."""
    rng = random.Random(f"m3kit.synth.nback:{seed}")
    pairs = [list(p) for p in _COMPLEMENTARY_PAIRS]
    rng.shuffle(pairs)
    for p in pairs:
        rng.shuffle(p)
    combos = [c for p in pairs for c in p]
    out: list[NBackTrial] = []
    for ev in evidence:
        cell = 0
        for k in k_values:
            for n in n_values:
                if n >= k:
                    continue
                for t in range(trials):
                    # a cell starts at an even turn: its trials come in complementary pairs
                    scene_match, action_match = combos[(2 * cell + t) % len(combos)]
                    trial_id = f"nb-{ev}-n{n}-k{k}-t{t}"
                    attrs = _attributes(n, k, scene_match, action_match, rng)
                    scripts: list[VideoScript] = []
                    for j, (scene, action) in enumerate(attrs):
                        while True:
                            script = clip_script(
                                f"{trial_id}-c{j + 1}", rng.randrange(2**31), scene=scene,
                                action=action, evidence=ev, beat_seconds=beat_seconds, fps=fps,
                                size=size)
                            # The compared clip must not look like the last one: a match has
                            # to be judged on the attribute, not on an identical actor.
                            if j != k - 1 or _look(script) != _look(scripts[k - 1 - n]):
                                break
                        scripts.append(script)
                    clips = [NBackClip(script=s) for s in scripts]
                    out.append(NBackTrial(id=trial_id, n=n, k=k, evidence=ev, clips=clips))
                cell += 1
    return out


def _look(script: VideoScript) -> tuple[str, str]:
    actor = script.actors[0]
    return actor.shape, actor.colour


def _attributes(n: int, k: int, scene_match: bool, action_match: bool,
                rng: random.Random) -> list[tuple[str, Action]]:
    """(scene, action) per position; only the last and the n-back position are constrained."""
    scenes, actions = list(SCENE_STYLES), list(ACTIONS)
    out = [(rng.choice(scenes), rng.choice(actions)) for _ in range(k)]
    last_scene, last_action = out[-1]
    scene = last_scene if scene_match else rng.choice([s for s in scenes if s != last_scene])
    action = last_action if action_match else rng.choice([a for a in actions if a != last_action])
    out[k - 1 - n] = (scene, action)
    return out
