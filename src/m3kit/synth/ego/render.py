"""Rendering a session to an H.264 mp4 with the M3Eval-style suite's drawing pieces.

A ``size × size`` frame: the room (``synth.draw.scene_background`` of the room's scene style),
a dark plate across the top naming the room or the place an object is put at, the caption bar
at the bottom saying the action; a placement shows the object (a coloured shape,
``synth.draw.draw_actor``) coming down onto a labelled piece of furniture; a note is a white
board with its text; a chore shows a hand moving (``synth.draw.actor_pose``). Labels are large
capitals so RapidOCR reads them at 256 × 256 (tests/synth/ego check it).

Drawing is pure: a frame depends only on the session and the frame index.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from m3kit.media.encode import VideoWriter
from m3kit.synth.draw import Pose, actor_pose, draw_actor, fit_font, layout, scene_background
from m3kit.synth.ego.vocab import OBJECTS
from m3kit.synth.ego.world import Scene, SessionScript
from m3kit.synth.script import Scene as SceneStyle
from m3kit.synth.vocab import SCENE_STYLES

__all__ = ["SessionDrawer", "render_session"]

_PLATE_BG = (35, 35, 35)
_TEXT_LIGHT = (255, 255, 255)
_TEXT_DARK = (20, 20, 20)
_BOARD = (250, 250, 245)
_FURNITURE = (120, 84, 52)
_HAND = (232, 190, 160)
# Lossless: labels stay sharp for OCR, and still frames decode bit-identical, so per-frame work
# cached by content (OCR, embeddings) runs once per distinct picture. Still scenes keep the
# files small (about 50 kB a minute at 256 x 256).
_CRF = 0
# Poses of a moving thing per scene.
_STEPS = 2
# Chores cycle through these hand motions.
_HAND_MOTIONS = ("moves_right", "moves_left", "jumps")


class SessionDrawer:
    """Draws the frames of one session at ``size × size`` and ``fps``."""

    def __init__(self, session: SessionScript, size: int, fps: float) -> None:
        self.session = session
        self.size = size
        self.fps = fps
        self.geometry = layout(size, size)
        self.plate_bottom = round(0.15 * size)
        self.frames_per_scene = round(session.scenes[0].end * fps) if session.scenes else 0
        texts = [s.label for s in session.scenes] + [s.caption or "" for s in session.scenes]
        self._font = fit_font(texts, size - 12, round(0.08 * size))
        notes = [s.note for s in session.scenes if s.note] or ["x"]
        self._note_font = fit_font(notes, 0.8 * size - 12, round(0.09 * size))
        self._backgrounds: dict[str, np.ndarray] = {}

    @property
    def frame_count(self) -> int:
        return round(self.session.duration * self.fps)

    def draw(self, index: int) -> np.ndarray:
        scene = self.session.scenes[min(index // self.frames_per_scene,
                                        len(self.session.scenes) - 1)]
        # Motion in a few steps (``_STEPS`` poses a scene): frames between steps are identical,
        # so OCR and any per-frame work cached by content run a few times per scene, not per frame.
        step = (index % self.frames_per_scene) * _STEPS // self.frames_per_scene
        progress = step / (_STEPS - 1)
        image = Image.fromarray(self._background(scene.room))
        canvas = ImageDraw.Draw(image)
        if scene.kind == "placement":
            self._placement(canvas, scene, progress)
        elif scene.kind in ("note", "dryer"):
            self._board(canvas, scene.note or "")
        elif scene.kind == "chore":
            motion = _HAND_MOTIONS[scene.index % len(_HAND_MOTIONS)]
            pose = actor_pose(motion, progress, self.geometry)
            draw_actor(canvas, "circle", _HAND, pose, 0.6 * self.geometry.actor_radius)
        g = self.geometry
        canvas.rectangle((0, 0, g.width, self.plate_bottom), fill=_PLATE_BG)
        self._text(canvas, scene.label, (0, 0, g.width, self.plate_bottom), _TEXT_LIGHT,
                   self._font)
        canvas.rectangle(g.caption_box, fill=(0, 0, 0))
        if scene.caption:
            self._text(canvas, scene.caption, g.caption_box, _TEXT_LIGHT, self._font)
        return np.asarray(image)

    def _background(self, room: str) -> np.ndarray:
        if room not in self._backgrounds:
            style = SceneStyle(name=room, **asdict(SCENE_STYLES[room]))
            self._backgrounds[room] = scene_background(style, self.geometry)
        return self._backgrounds[room]

    def _placement(self, canvas: ImageDraw.ImageDraw, scene: Scene, progress: float) -> None:
        g = self.geometry
        top = g.floor_top - round(0.02 * g.height)
        canvas.rectangle((round(0.22 * g.width), top, round(0.78 * g.width),
                          top + round(0.16 * g.height)), fill=_FURNITURE, outline=(60, 40, 25),
                         width=2)
        obj = next(o for o in OBJECTS if o.name == scene.object)
        radius = 0.09 * g.height
        rest = top - radius
        # Put down over the first half of the scene, then resting on the furniture.
        y = self.plate_bottom + radius + (rest - self.plate_bottom - radius) * min(
            1.0, 2 * progress)
        draw_actor(canvas, obj.shape, obj.colour, Pose(0.5 * g.width, y), radius)

    def _board(self, canvas: ImageDraw.ImageDraw, text: str) -> None:
        g = self.geometry
        box = (round(0.1 * g.width), round(0.25 * g.height), round(0.9 * g.width),
               round(0.62 * g.height))
        canvas.rectangle(box, fill=_BOARD, outline=_TEXT_DARK, width=2)
        self._text(canvas, text, box, _TEXT_DARK, self._note_font)

    @staticmethod
    def _text(canvas: ImageDraw.ImageDraw, text: str, box: tuple[int, int, int, int],
              fill: tuple[int, int, int], font) -> None:
        x0, y0, x1, y1 = canvas.textbbox((0, 0), text, font=font)
        x = box[0] + (box[2] - box[0] - (x1 - x0)) / 2 - x0
        y = box[1] + (box[3] - box[1] - (y1 - y0)) / 2 - y0
        canvas.text((x, y), text, font=font, fill=fill)


def render_session(session: SessionScript, path: str | Path, *, size: int,
                   fps: float) -> Path:
    """Encode ``session`` to ``path`` (atomically: the file appears complete or not at all)."""
    drawer = SessionDrawer(session, size, fps)
    path = Path(path)
    # A keyframe at each scene's first frame: a seek decodes at most one scene.
    with VideoWriter(path, size, size, fps, crf=_CRF,
                     keyint=max(1, drawer.frames_per_scene)) as writer:
        for index in range(drawer.frame_count):
            writer.write(drawer.draw(index))
    return path
