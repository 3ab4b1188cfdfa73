"""Writing H.264 mp4 files with PyAV, atomically: the output appears complete or not at all."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Self

import av
import numpy as np

from m3kit.errors import MediaError
from m3kit.files import commit_temp, new_temp_beside


class VideoWriter:
    """Encode RGB frames to an H.264 mp4 at a constant frame rate.

    Frames go to a temporary file beside ``path``; ``close()`` moves it into place, ``abort()``
    (or an exception inside a ``with`` block) removes it, so no partial output is ever left.
    ``keyint`` fixes the keyframe spacing (frames); ``bframes`` the B-frames between references.

    ``threads``: x264's threads, one by default, so that the same frames always encode to the
    same bytes: with its automatic threads, x264 encoded 4 to 28 of 122 synthetic source
    videos differently from one run to the next (its threaded lookahead), so two builds of one
    synthetic suite differed and so did their data fingerprints (issue 36). One thread was also
    faster on the suites' small frames (the quickstart suite: 11.2 s against 12.9 s to build).
    """

    def __init__(
        self,
        path: str | Path,
        width: int,
        height: int,
        fps: float | Fraction,
        *,
        crf: int = 23,
        preset: str = "veryfast",
        keyint: int = 250,
        bframes: int = 3,
        threads: int = 1,
    ) -> None:
        if width % 2 or height % 2:
            raise MediaError(f"H.264 needs an even frame size, got {width}x{height}", path=path)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = new_temp_beside(self.path)
        self.width, self.height = width, height
        self.frames_written = 0
        rate = Fraction(fps).limit_denominator(1001)
        self._container = av.open(str(self._tmp), mode="w", format="mp4")
        stream = self._container.add_stream("libx264", rate=rate)
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        stream.codec_context.thread_count = threads
        stream.options = {
            "crf": str(crf),
            "preset": preset,
            "x264-params": f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes={bframes}",
        }
        self._stream = stream

    def write(self, rgb: np.ndarray) -> None:
        """Append one RGB ``uint8`` frame of the writer's size."""
        if rgb.shape != (self.height, self.width, 3):
            raise MediaError(
                f"frame {self.frames_written} has shape {rgb.shape}, expected "
                f"{(self.height, self.width, 3)}", path=self.path,
            )
        # the encoder converts it to yuv420p on as many threads as it encodes on (one: above)
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        frame.pts = self.frames_written
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.frames_written += 1

    def close(self) -> Path:
        """Flush the encoder and move the finished file into place."""
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()
        return commit_temp(self._tmp, self.path)

    def abort(self) -> None:
        try:
            self._container.close()
        finally:
            self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
