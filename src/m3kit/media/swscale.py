"""Pixel format conversion and resizing (FFmpeg's swscale, through PyAV), on one thread.

Every decoded frame m3kit turns into RGB goes through ``reformat``: one swscale context per
thread and process, with no slice threads of its own (the encoder converts RGB to yuv420p
itself, on as many threads as it encodes on: one, ``m3kit.media.encode``).

- **Fork.** PyAV (17 and later) keeps one context per thread with swscale's automatic slice
  threads: a child forked after a conversion inherits that context, and its first conversion
  waits forever on slice threads that do not exist there (issue 36). m3kit's contexts are each
  process's own (``m3kit.forks``).
- **Fewer threads, fewer surprises.** Two builds of one synthetic suite in one process differed
  in 23 of 150 videos with PyAV's threaded conversions and x264's automatic threads; with both
  on one thread (``m3kit.media.encode``), in 2 to 4 (x264 still reads memory it never wrote:
  with glibc's ``MALLOC_PERTURB_`` set, the builds were byte-identical).
- **No loss of speed where it counts.** m3kit converts on several threads already (parallel
  decoding runs, the frame store's writers), where slice threads only add contention.
"""

from __future__ import annotations

import av
from av.video.reformatter import VideoReformatter

from m3kit.forks import ThreadProcessLocal

__all__ = ["reformat"]

# one context per thread (a context is not thread-safe) and per process (see above)
_CONTEXTS: ThreadProcessLocal[VideoReformatter] = ThreadProcessLocal(VideoReformatter)


def reformat(frame: av.VideoFrame, format: str, width: int | None = None,
             height: int | None = None, interpolation: str | None = None) -> av.VideoFrame:
    """``frame`` converted to ``format`` (and resized to ``width`` x ``height`` with
    ``interpolation`` when given), on the calling thread alone."""
    return _CONTEXTS.get().reformat(frame, width, height, format, interpolation=interpolation,
                                    threads=1)
