"""The vocabulary of the synthetic world: colours, shapes, actions, scenes and character names.

Everything a script can say comes from here, so a script stays a small record of choices and
the renderer and the question writers agree on what each choice looks like and how it is said.

Two channels never share words: captions speak of characters by *name* and of places by
*scene name*; pixels show *colours* and *shapes*. No caption ever names a colour or a shape, so a
reader of on-screen text alone cannot learn what a question about colours or shapes asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

RGB = tuple[int, int, int]

# Saturated, far-apart colours with everyday names: a viewer (or a VLM) names them without doubt,
# and H.264 at the default quality keeps each within a small distance of its value.
ACTOR_COLOURS: dict[str, RGB] = {
    "red": (220, 30, 30),
    "orange": (255, 140, 0),
    "yellow": (250, 220, 0),
    "green": (30, 170, 60),
    "blue": (30, 80, 220),
    "purple": (130, 50, 180),
    "pink": (255, 120, 190),
    "cyan": (0, 200, 220),
    "white": (245, 245, 245),
    "black": (20, 20, 20),
}

Shape = Literal["circle", "square", "triangle", "star", "diamond", "hexagon", "cross", "heart"]
SHAPES: tuple[Shape, ...] = get_args(Shape)

Action = Literal[
    "enters", "exits", "jumps", "spins", "moves_left", "moves_right", "grows", "shrinks",
    "rises", "sinks",
]
ACTIONS: tuple[Action, ...] = get_args(Action)


@dataclass(frozen=True)
class ActionWords:
    """How an action is said: ``present`` in captions, storylines and question stems (one verb
    form everywhere, so a question's words match the captions'); ``past`` and ``base`` for
    other wording. ``takes_place`` says whether the scene follows as an object ("enters the
    kitchen") or with "in" ("jumps in the kitchen")."""

    present: str
    past: str
    base: str
    takes_place: bool = False


ACTION_WORDS: dict[str, ActionWords] = {
    "enters": ActionWords("enters", "entered", "enter", takes_place=True),
    "exits": ActionWords("exits", "exited", "exit", takes_place=True),
    "jumps": ActionWords("jumps", "jumped", "jump"),
    "spins": ActionWords("spins", "spun", "spin"),
    "moves_left": ActionWords("moves left", "moved left", "move left"),
    "moves_right": ActionWords("moves right", "moved right", "move right"),
    "grows": ActionWords("grows", "grew", "grow"),
    "shrinks": ActionWords("shrinks", "shrank", "shrink"),
    "rises": ActionWords("rises", "rose", "rise"),
    "sinks": ActionWords("sinks", "sank", "sink"),
}

Pattern = Literal["plain", "checker", "vstripes", "hstripes", "dots", "grid"]


@dataclass(frozen=True)
class SceneStyle:
    """What a scene looks like: a wall (upper part) and a floor, one of them patterned.

    Muted tones keep every actor colour readable against every scene; the pattern and the
    wall/floor pair make each scene recognisable without its name (N-back on scene by pixels).
    """

    wall: RGB
    floor: RGB
    pattern: Pattern
    pattern_colour: RGB
    patterned: Literal["wall", "floor"]


SCENE_STYLES: dict[str, SceneStyle] = {
    "kitchen": SceneStyle((228, 218, 192), (175, 175, 175), "checker", (120, 120, 120), "floor"),
    "garden": SceneStyle((176, 214, 236), (116, 160, 86), "dots", (86, 126, 60), "floor"),
    "beach": SceneStyle((150, 200, 236), (232, 212, 152), "hstripes", (205, 180, 120), "floor"),
    "forest": SceneStyle((78, 108, 78), (104, 84, 62), "vstripes", (70, 52, 36), "wall"),
    "street": SceneStyle((168, 156, 152), (84, 84, 90), "grid", (126, 112, 108), "wall"),
    "office": SceneStyle((204, 208, 218), (156, 134, 112), "plain", (0, 0, 0), "wall"),
    "library": SceneStyle((146, 104, 74), (186, 166, 134), "hstripes", (108, 72, 48), "wall"),
    "desert": SceneStyle((240, 204, 156), (212, 172, 112), "plain", (0, 0, 0), "floor"),
}
SCENES: tuple[str, ...] = tuple(SCENE_STYLES)

# Short animal names: captions stay one line, and no name is a colour or a shape word.
NAMES: tuple[str, ...] = (
    "fox", "owl", "cat", "bear", "frog", "duck", "wolf", "deer",
    "hare", "seal", "lion", "goat", "mole", "crow", "swan", "lynx",
)
