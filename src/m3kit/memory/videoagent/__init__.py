"""``videoagent``: VideoAgent (Wang et al., 2024), long-form video understanding with a
language model as agent, on m3kit's memory protocol.

- ``memory``: ``VideoAgentMemory``, the iterative loop (sample, caption, answer, self-reflect,
  retrieve the missing frames per segment);
- ``units``: the frames it samples (a frame with the speech heard just before it), segments;
- ``replies``: its prompts and the lenient reading of its JSON replies.
"""

from m3kit.memory.videoagent.memory import FRAMES, ROUNDS, VideoAgentMemory
from m3kit.memory.videoagent.replies import FrameQuery, parse_confidence, parse_queries
from m3kit.memory.videoagent.units import SPEECH_WINDOW, frame_units

__all__ = [
    "FRAMES",
    "ROUNDS",
    "SPEECH_WINDOW",
    "FrameQuery",
    "VideoAgentMemory",
    "frame_units",
    "parse_confidence",
    "parse_queries",
]
