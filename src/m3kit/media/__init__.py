"""Media engine: probing, frame sampling, frame-exact decoding, the frame store, composition."""

from m3kit.media.decode import DecodePlan, DecodeStats, VideoDecoder, decode_frames, plan_decode
from m3kit.media.index import VideoIndex
from m3kit.media.info import VideoInfo, video_info
from m3kit.media.resize import Resize
from m3kit.media.sampling import (
    POLICIES,
    SamplingPolicy,
    fps_indices,
    sample_indices,
    uniform_indices,
    uniform_inner_indices,
)
from m3kit.media.store import FrameRequest, FrameStore, StoreStats

__all__ = [
    "POLICIES",
    "DecodePlan",
    "DecodeStats",
    "FrameRequest",
    "FrameStore",
    "Resize",
    "SamplingPolicy",
    "StoreStats",
    "VideoDecoder",
    "VideoIndex",
    "VideoInfo",
    "decode_frames",
    "fps_indices",
    "plan_decode",
    "sample_indices",
    "uniform_indices",
    "uniform_inner_indices",
    "video_info",
]
