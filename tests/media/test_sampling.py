"""Sampling policies: indices computed by hand from each policy's definition."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.errors import SamplingError
from m3kit.media.sampling import (
    fps_indices,
    sample_indices,
    uniform_indices,
    uniform_inner_indices,
)

TIMES_25FPS = np.arange(100) / 25.0  # 100 frames, 0.00 .. 3.96 s


def test_uniform_includes_both_ends():
    assert uniform_indices(10, 4) == [0, 3, 6, 9]


def test_uniform_rounds_half_to_even_like_numpy():
    # linspace(0, 9, 3) = [0, 4.5, 9]; numpy rounds 4.5 to 4.
    assert uniform_indices(10, 3) == [0, 4, 9]


def test_uniform_adds_last_frame_when_missing():
    # linspace(0, 4, 1) = [0]: the last frame (4) is appended.
    assert uniform_indices(5, 1) == [0, 4]


def test_uniform_more_wanted_than_frames_keeps_each_frame_once():
    # linspace(0, 2, 5) = [0, .5, 1, 1.5, 2] -> rint [0, 0, 1, 2, 2]
    assert uniform_indices(3, 5) == [0, 1, 2]


def test_uniform_default_96_on_long_video():
    picks = uniform_indices(15000, 96)
    assert len(picks) == 96 and picks[0] == 0 and picks[-1] == 14999
    assert picks[1] == round(14999 / 95)  # 157.88 -> 158


def test_uniform_inner_skips_first_and_last():
    assert uniform_inner_indices(100, 4) == [20, 40, 60, 80]
    # 10 * i / 4 = 2.5, 5.0, 7.5 -> int -> 2, 5, 7
    assert uniform_inner_indices(10, 3) == [2, 5, 7]


def test_uniform_inner_64_of_video_mme_length():
    picks = uniform_inner_indices(6500, 64)
    assert len(picks) == 64
    assert picks[0] == 6500 // 65 == 100
    assert picks[-1] == 64 * 6500 // 65 == 6400


def test_fps_one_per_second():
    assert fps_indices(TIMES_25FPS, 1.0) == [0, 25, 50, 75]


def test_fps_cap_thins_uniformly():
    # four picks, capped to two: rint(linspace(0, 3, 2)) = [0, 3] -> frames 0 and 75
    assert fps_indices(TIMES_25FPS, 1.0, max_frames=2) == [0, 75]


def test_fps_variable_frame_rate_picks_frame_on_screen():
    times = [0.0, 0.1, 0.5, 0.6, 1.2]
    # instants 0, 0.5, 1.0 -> frames shown then: 0, 2 (starts at 0.5), 3 (0.6 .. 1.2)
    assert fps_indices(times, 2.0) == [0, 2, 3]


def test_span_restricts_and_keeps_global_indices():
    # frames with 1.0 <= t <= 2.0 are 25..50 (26 frames); uniform 3 -> local 0, 12, 25
    assert sample_indices(TIMES_25FPS, "uniform", 3, span=(1.0, 2.0)) == [25, 37, 50]
    assert sample_indices(TIMES_25FPS, "fps", fps=2.0, span=(1.0, 2.0)) == [25, 37, 50]


def test_defaults_are_the_papers():
    times = np.arange(1000) / 25.0
    assert len(sample_indices(times, "uniform")) == 96
    assert len(sample_indices(times, "uniform_inner")) == 64


@pytest.mark.parametrize("n", [0, -3])
@pytest.mark.parametrize("policy", ["uniform", "uniform_inner"])
def test_non_positive_n_is_refused(policy, n):
    with pytest.raises(SamplingError, match="positive"):
        sample_indices(TIMES_25FPS, policy, n)


@pytest.mark.parametrize("span", [(10.0, 12.0), (2.0, 1.0), (-1.0, 1.0)])
def test_span_outside_video_is_refused(span):
    with pytest.raises(SamplingError, match="span"):
        sample_indices(TIMES_25FPS, "uniform", 4, span=span)


def test_fps_policy_needs_a_positive_rate():
    with pytest.raises(SamplingError, match="rate"):
        sample_indices(TIMES_25FPS, "fps")
    with pytest.raises(SamplingError, match="positive"):
        fps_indices(TIMES_25FPS, 0.0)
    with pytest.raises(SamplingError, match="max_frames"):
        fps_indices(TIMES_25FPS, 1.0, max_frames=0)


def test_unknown_policy():
    with pytest.raises(SamplingError, match="unknown sampling policy"):
        sample_indices(TIMES_25FPS, "random", 4)  # type: ignore[arg-type]
