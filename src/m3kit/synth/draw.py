"""Drawing the frames of a script: scene backgrounds, actors in motion, the caption bar.

Layout of a ``W × H`` frame (fractions of ``H``): the wall above ``0.52``, the floor down to the
caption bar, a black caption bar over the bottom ``0.17``. The acting actor stands at the middle
of the frame, its centre a little below the wall/floor edge; its action moves, turns or scales
it over the beat (``actor_pose``). Every actor carries an eye (a white dot with a black pupil)
off its centre, so that a spinning circle visibly spins; the centre pixel is always body colour.

Drawing is pure: a frame depends only on the script and the frame index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from m3kit.synth.script import Scene, VideoScript
from m3kit.synth.vocab import RGB

__all__ = [
    "FrameDrawer",
    "Layout",
    "Pose",
    "actor_pose",
    "draw_actor",
    "draw_frame",
    "fit_font",
    "layout",
    "scene_background",
]

_OUTLINE = (40, 40, 40)
_OUTLINE_ON_DARK = (200, 200, 200)
_CAPTION_FG = (255, 255, 255)
_CAPTION_BG = (0, 0, 0)


@dataclass(frozen=True)
class Layout:
    """Pixel geometry of a frame size."""

    width: int
    height: int
    floor_top: int  # first floor row
    caption_top: int  # first caption-bar row
    ground_y: float  # actor centre row at rest
    actor_radius: float  # at scale 1

    @property
    def caption_box(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of the caption bar."""
        return 0, self.caption_top, self.width, self.height


def layout(width: int, height: int) -> Layout:
    floor_top = round(0.52 * height)
    caption_top = height - round(0.17 * height)
    return Layout(width, height, floor_top, caption_top, ground_y=floor_top + 0.04 * height,
                  actor_radius=0.1 * height)


@dataclass(frozen=True)
class Pose:
    """Where an actor is drawn: centre ``(x, y)`` in pixels, ``scale`` of its radius, ``angle``
    in degrees (counter-clockwise)."""

    x: float
    y: float
    scale: float = 1.0
    angle: float = 0.0


def actor_pose(action: str, progress: float, geometry: Layout) -> Pose:
    """The pose ``progress`` ∈ [0, 1] of the way through a beat of ``action``.

    Motions are large (a third of the frame or more) so that the 6–8 frames a uniform sampler
    keeps of one beat show the action unambiguously.
    """
    p = min(max(progress, 0.0), 1.0)
    w, h = geometry.width, geometry.height
    r = geometry.actor_radius
    x, y = 0.5 * w, geometry.ground_y
    if action == "enters":  # in from beyond the left edge, then stands
        return Pose(_lerp(-r, 0.5 * w, min(1.0, p / 0.6)), y)
    if action == "exits":  # stands, then out beyond the right edge
        return Pose(_lerp(0.5 * w, w + 1.5 * r, max(0.0, (p - 0.4) / 0.6)), y)
    if action == "jumps":  # two hops
        return Pose(x, y - 0.3 * h * abs(math.sin(2 * math.pi * p)))
    if action == "spins":  # two full turns
        return Pose(x, y, angle=720.0 * p)
    if action == "moves_left":
        return Pose(_lerp(0.78 * w, 0.22 * w, p), y)
    if action == "moves_right":
        return Pose(_lerp(0.22 * w, 0.78 * w, p), y)
    if action == "grows":
        return Pose(x, y, scale=_lerp(0.6, 1.6, p))
    if action == "shrinks":
        return Pose(x, y, scale=_lerp(1.6, 0.6, p))
    if action == "rises":
        return Pose(x, _lerp(y, 0.24 * h, p))
    if action == "sinks":
        return Pose(x, _lerp(0.24 * h, y, p))
    raise ValueError(f"unknown action {action!r}")


def draw_frame(script: VideoScript, index: int) -> np.ndarray:
    """Frame ``index`` of ``script`` as an RGB ``uint8`` array (one-off; ``FrameDrawer`` caches
    backgrounds and the font for a whole video)."""
    return FrameDrawer(script).draw(index)


class FrameDrawer:
    """Draws the frames of one script, reusing its scene backgrounds and caption font."""

    def __init__(self, script: VideoScript) -> None:
        self.script = script
        self.geometry = layout(script.width, script.height)
        self._backgrounds: dict[str, Image.Image] = {}

    def progress(self, index: int) -> float:
        """How far through its beat frame ``index`` is: 0 at the beat's first frame, 1 at its
        last."""
        n = self.script.frames_per_beat
        return (index % n) / max(1, n - 1)

    def pose(self, index: int) -> Pose:
        """The pose of the acting actor in frame ``index``."""
        event = self.script.events[self.script.beat_of_frame(index)]
        return actor_pose(event.action, self.progress(index), self.geometry)

    def draw(self, index: int) -> np.ndarray:
        event = self.script.events[self.script.beat_of_frame(index)]
        image = self._background(event.scene).copy()
        canvas = ImageDraw.Draw(image)
        actor = self.script.actor(event.actor)
        draw_actor(canvas, actor.shape, actor.rgb, self.pose(index), self.geometry.actor_radius)
        # The caption bar is painted after the actor, so an actor never covers its caption.
        canvas.rectangle(self.geometry.caption_box, fill=_CAPTION_BG)
        if event.caption is not None:
            self._draw_caption(canvas, event.caption)
        return np.asarray(image)

    # -- pieces ---------------------------------------------------------------------------------

    def _background(self, scene_name: str) -> Image.Image:
        if scene_name not in self._backgrounds:
            pixels = scene_background(self.script.scene(scene_name), self.geometry)
            self._backgrounds[scene_name] = Image.fromarray(pixels)
        return self._backgrounds[scene_name]

    @cached_property
    def _font(self) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        """The largest default-font size (up to 9 % of the height, 20 px at 240) at which every
        caption of the script fits one line: large letters keep OCR reliable."""
        g = self.geometry
        texts = [c for _, _, c in self.script.captions] or ["x"]
        return fit_font(texts, g.width - 12, max(10, round(0.085 * g.height)))

    def _draw_caption(self, canvas: ImageDraw.ImageDraw, text: str) -> None:
        g = self.geometry
        x0, y0, x1, y1 = canvas.textbbox((0, 0), text, font=self._font)
        x = (g.width - (x1 - x0)) / 2 - x0
        y = g.caption_top + (g.height - g.caption_top - (y1 - y0)) / 2 - y0
        canvas.text((x, y), text, font=self._font, fill=_CAPTION_FG)


def scene_background(scene: Scene, geometry: Layout) -> np.ndarray:
    """The empty scene: wall, floor and the pattern on one of them."""
    h, w = geometry.height, geometry.width
    out = np.empty((h, w, 3), dtype=np.uint8)
    out[: geometry.floor_top] = scene.wall
    out[geometry.floor_top :] = scene.floor
    rows = slice(0, geometry.floor_top) if scene.patterned == "wall" else \
        slice(geometry.floor_top, geometry.caption_top)
    region = out[rows]
    mask = _pattern_mask(scene.pattern, region.shape[0], w, unit=max(4, round(h / 12)))
    region[mask] = scene.pattern_colour
    return out


def _pattern_mask(pattern: str, h: int, w: int, *, unit: int) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    if pattern == "checker":
        return ((yy // unit) + (xx // unit)) % 2 == 1
    if pattern == "vstripes":
        return (xx % (unit * 2)) < max(2, unit // 2)
    if pattern == "hstripes":
        return (yy % unit) < max(2, unit // 4)
    if pattern == "grid":
        return ((yy % unit) < 2) | ((xx % unit) < 2)
    if pattern == "dots":
        cy = (yy % unit) - unit / 2
        cx = (xx % unit) - unit / 2
        return cy * cy + cx * cx <= (unit / 6) ** 2
    return np.zeros((h, w), dtype=bool)


def fit_font(texts: list[str], max_width: float,
             size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The default font at the largest size up to ``size`` (not below 10 px) at which every one
    of ``texts`` fits ``max_width`` on one line."""
    while True:
        font = ImageFont.load_default(size=size)
        if size <= 10 or all(font.getlength(t) <= max_width for t in texts):
            return font
        size -= 1


def draw_actor(canvas: ImageDraw.ImageDraw, shape: str, rgb: RGB, pose: Pose,
               radius: float) -> None:
    """A coloured shape with an outline and an off-centre eye, at ``pose``."""
    r = radius * pose.scale
    outline = _OUTLINE_ON_DARK if sum(rgb) < 150 else _OUTLINE
    if shape == "circle":
        box = (pose.x - r, pose.y - r, pose.x + r, pose.y + r)
        canvas.ellipse(box, fill=rgb, outline=outline, width=2)
    else:
        points = [_place(px, py, pose, r) for px, py in _SHAPES[shape]]
        canvas.polygon(points, fill=rgb, outline=outline, width=2)
    # The eye: off-centre, turning with the actor, so rotation shows on every shape.
    ex, ey = _place(0.38, -0.3, pose, r)
    er = max(1.5, 0.17 * r)
    canvas.ellipse((ex - er, ey - er, ex + er, ey + er), fill=(255, 255, 255), outline=outline)
    pr = er * 0.5
    canvas.ellipse((ex - pr, ey - pr, ex + pr, ey + pr), fill=(0, 0, 0))


def _place(px: float, py: float, pose: Pose, r: float) -> tuple[float, float]:
    """A unit-shape point (y down) rotated by the pose angle, scaled to ``r``, moved to the
    pose centre."""
    a = math.radians(pose.angle)
    c, s = math.cos(a), math.sin(a)
    return pose.x + r * (px * c + py * s), pose.y + r * (-px * s + py * c)


def _lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def _regular(n: int, phase_deg: float, radius: float = 1.0) -> list[tuple[float, float]]:
    return [(radius * math.cos(math.radians(phase_deg + 360 * k / n)),
             radius * math.sin(math.radians(phase_deg + 360 * k / n))) for k in range(n)]


def _star() -> list[tuple[float, float]]:
    pts = []
    for k in range(10):
        rad = 1.0 if k % 2 == 0 else 0.45
        ang = math.radians(-90 + 36 * k)
        pts.append((rad * math.cos(ang), rad * math.sin(ang)))
    return pts


def _heart() -> list[tuple[float, float]]:
    pts = []
    for k in range(40):
        t = 2 * math.pi * k / 40
        x = 16 * math.sin(t) ** 3
        y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
        pts.append((x / 17, -y / 17 + 0.1))
    return pts


_ARM = 0.36
_SHAPES: dict[str, list[tuple[float, float]]] = {
    "square": [(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)],
    "triangle": _regular(3, -90, 1.1),
    "star": _star(),
    "diamond": [(0.0, -1.05), (0.8, 0.0), (0.0, 1.05), (-0.8, 0.0)],
    "hexagon": _regular(6, 0),
    "cross": [(-_ARM, -1), (_ARM, -1), (_ARM, -_ARM), (1, -_ARM), (1, _ARM), (_ARM, _ARM),
              (_ARM, 1), (-_ARM, 1), (-_ARM, _ARM), (-1, _ARM), (-1, -_ARM), (-_ARM, -_ARM)],
    "heart": _heart(),
}
