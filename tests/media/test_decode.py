"""Frame-exact decoding: every frame equals the one a full sequential decode yields there."""

from __future__ import annotations

from fractions import Fraction

import av
import numpy as np
import pytest

from m3kit.errors import CorruptMediaError, DecodeTimeoutError, SamplingError
from m3kit.media import Resize, VideoDecoder, VideoIndex, decode_frames, plan_decode
from m3kit.media.decode import frame_to_rgb
from m3kit.media.generate import read_frame_code

from ..forking import check_in_forked_child


def sequential_frames(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.fixture(scope="module")
def bframe_reference(bframe_video):
    return sequential_frames(bframe_video)


def index_of(n: int, keyframes: list[int]) -> VideoIndex:
    key = np.zeros(n, dtype=bool)
    key[keyframes] = True
    return VideoIndex(path="synthetic", time_base=Fraction(1, 25), pts=np.arange(n, dtype=np.int64),
                      keyframe=key, has_timestamps=True)


GOP25 = index_of(100, [0, 25, 50, 75])


def test_plan_dense_request_is_one_sequential_pass():
    plan = plan_decode(GOP25, [2, 0, 1], seek_cost=12)
    assert plan.strategy == "sequential"
    assert [(r.seek_to, r.targets) for r in plan.runs] == [(None, (0, 1, 2))]
    assert plan.estimated_frames == 3


def test_plan_far_target_seeks_to_its_keyframe():
    # continuing decodes 91 frames; seeking to 75 decodes 90 - 75 + 1 = 16, plus 12 for the seek
    plan = plan_decode(GOP25, [90], seek_cost=12)
    assert [(r.seek_to, r.targets) for r in plan.runs] == [(75, (90,))]
    assert plan.estimated_frames == 28 and plan.strategy == "seek"


def test_plan_mixes_continuing_and_seeking():
    # 10: continue (11 <= 23); 60: continuing costs 50, seeking to 50 costs 11 + 12 = 23
    plan = plan_decode(GOP25, [10, 60], seek_cost=12)
    assert [(r.seek_to, r.targets) for r in plan.runs] == [(None, (10,)), (50, (60,))]
    assert plan.estimated_frames == 11 + 23 and plan.strategy == "mixed"


def test_plan_never_seeks_inside_the_current_gop():
    plan = plan_decode(GOP25, [30, 40], seek_cost=12)
    assert [(r.seek_to, r.targets) for r in plan.runs] == [(25, (30, 40))]
    assert plan.estimated_frames == 18 + 10


def test_plan_choice_depends_on_keyframe_spacing():
    targets = [10, 40, 70, 95]
    dense_keys = index_of(100, list(range(0, 100, 5)))
    assert plan_decode(index_of(100, [0]), targets).strategy == "sequential"
    assert plan_decode(dense_keys, targets).strategy in ("seek", "mixed")


def test_random_requests_are_frame_exact_on_bframe_video(bframe_video, bframe_reference):
    rng = np.random.default_rng(7)
    with VideoDecoder(bframe_video) as decoder:
        assert len(decoder) == len(bframe_reference) == 1000
        strategies = set()
        for _ in range(25):
            k = int(rng.integers(1, 60))
            wanted = rng.choice(len(bframe_reference), size=k, replace=False).tolist()
            frames = decoder.get_frames(wanted)
            strategies.add(decoder.last_stats.strategy)
            for i, frame in zip(wanted, frames, strict=True):
                assert np.array_equal(frame, bframe_reference[i]), f"frame {i}"
    assert {"seek", "mixed"} & strategies  # sparse requests did seek


def test_skipping_unreferenced_frames_changes_nothing(bframe_video, bframe_reference):
    wanted = [3, 77, 141, 500, 998]
    with VideoDecoder(bframe_video, skip_nonref=False) as plain:
        plain_frames = plain.get_frames(wanted)
        plain_work = plain.last_stats.frames
    with VideoDecoder(bframe_video) as skipping:
        frames = skipping.get_frames(wanted)
        assert skipping.last_stats.frames < plain_work
    for i, a, b in zip(wanted, plain_frames, frames, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, bframe_reference[i])


def test_order_and_repeats_follow_the_request(bframe_video, bframe_reference):
    wanted = [900, 5, 900, 0]
    frames = decode_frames(bframe_video, wanted)
    assert [read_frame_code(f) for f in frames] == wanted
    for i, frame in zip(wanted, frames, strict=True):
        assert np.array_equal(frame, bframe_reference[i])


def test_a_decoder_can_go_back(bframe_video, bframe_reference):
    with VideoDecoder(bframe_video) as decoder:
        late = decoder.get_frame(950)
        early = decoder.get_frame(1)
        last = decoder.get_frame(999)
        again = decoder.get_frame(998)
    assert np.array_equal(late, bframe_reference[950])
    assert np.array_equal(early, bframe_reference[1])
    assert np.array_equal(last, bframe_reference[999])
    assert np.array_equal(again, bframe_reference[998])


def test_unordered_mov_frames_match_sequential_decode(unordered):
    reference = sequential_frames(unordered)
    with av.open(str(unordered)) as container:  # the file really stores frames out of order
        pts = [p.pts for p in container.demux(video=0) if p.pts is not None]
    assert pts != sorted(pts)
    with VideoDecoder(unordered) as decoder:
        assert len(decoder) == len(reference) == 4
        for wanted in ([0], [3], [2, 1], [3, 0, 1, 2], [1, 1]):
            for i, frame in zip(wanted, decoder.get_frames(wanted), strict=True):
                assert np.array_equal(frame, reference[i])


def test_matroska_every_seventh_frame_exact(pancake):
    reference = sequential_frames(pancake)
    wanted = list(range(len(reference) - 1, -1, -7))
    with VideoDecoder(pancake) as decoder:
        assert len(decoder) == len(reference) == 310
        frames = decoder.get_frames(wanted)
    for i, frame in zip(wanted, frames, strict=True):
        assert np.array_equal(frame, reference[i])


def test_resize_keeps_aspect(pancake):
    with VideoDecoder(pancake) as decoder:
        frame = decoder.get_frame(10, resize=Resize(max_side=213))
        exact = decoder.get_frame(10, resize=Resize(width=100, height=50))
    assert frame.shape == (120, 213, 3)
    assert exact.shape == (50, 100, 3)


def test_index_out_of_range_names_the_file(pancake):
    with VideoDecoder(pancake) as decoder, pytest.raises(SamplingError) as err:
        decoder.get_frames([5, 310])
    assert "310" in str(err.value) and str(pancake) in str(err.value)


def test_decoding_is_bounded_in_time(bframe_video):
    with (VideoDecoder(bframe_video, timeout_s=0.0) as decoder,
          pytest.raises(DecodeTimeoutError) as err):
        decoder.get_frames(list(range(0, 1000, 3)))
    assert str(bframe_video) in str(err.value)


# -- parallel runs: several decoders on one request, the same frames in the same order ----------


def test_parallel_runs_give_the_frames_of_one_decoder(bframe_video, bframe_reference):
    rng = np.random.default_rng(11)
    with VideoDecoder(bframe_video, workers=1) as one, \
            VideoDecoder(bframe_video, workers=3) as many:
        for _ in range(12):
            k = int(rng.integers(2, 50))
            wanted = rng.choice(len(bframe_reference), size=k, replace=True).tolist()
            frames = many.get_frames(wanted)
            assert [read_frame_code(f) for f in frames] == wanted
            for i, frame in zip(wanted, frames, strict=True):
                assert np.array_equal(frame, bframe_reference[i]), f"frame {i}"
            one.get_frames(wanted)
            # the same plan, the same work: only who does it changes
            assert many.last_stats.seeks == one.last_stats.seeks
            assert many.last_stats.frames == one.last_stats.frames
            assert one.last_stats.workers == 1
            if one.last_stats.seeks >= 2:
                assert many.last_stats.workers > 1


def test_a_dense_request_is_one_pass_on_one_decoder(bframe_video):
    with VideoDecoder(bframe_video, workers=4) as decoder:
        decoder.get_frames(list(range(0, 400, 2)))
        assert decoder.last_stats.strategy == "sequential" and decoder.last_stats.workers == 1


def test_a_request_never_goes_on_from_where_the_last_one_stopped(bframe_video, bframe_reference):
    """Frames 11-14 are unreferenced B-frames that the request for frame 10 skipped, or that
    came out with frame 10's packet: gone from the decoder, so the next request starts over."""
    for workers in (1, 3):
        with VideoDecoder(bframe_video, workers=workers) as decoder:
            decoder.get_frame(10)
            wanted = [12, 14, 420, 730, 980]  # 12 and 14 from the start of the file; the rest seek
            frames = decoder.get_frames(wanted)
            assert decoder.last_stats.strategy == "mixed"
            assert decoder.last_stats.workers == min(workers, 3)
        for i, frame in zip(wanted, frames, strict=True):
            assert np.array_equal(frame, bframe_reference[i])


def test_parallel_frames_come_in_index_order_and_stop_cleanly(bframe_video):
    wanted = [990, 5, 260, 610, 333, 870]
    with VideoDecoder(bframe_video, workers=3) as decoder:
        assert [i for i, _ in decoder.iter_frames(wanted)] == sorted(wanted)
        frames = decoder.iter_frames(wanted)
        assert next(frames)[0] == 5
        frames.close()  # the consumer stops: running runs are waited for, nothing breaks
        assert read_frame_code(decoder.get_frame(611)) == 611


def test_a_damaged_gop_fails_at_the_same_frame_with_parallel_runs(bframe_video, tmp_path):
    """The keyframe of the GOP holding frame 500 is overwritten: each way of decoding yields the
    frames before it, then names the same first frame that does not decode."""
    with av.open(str(bframe_video)) as container:
        packets = [(p.pos, p.size) for p in container.demux(video=0)
                   if p.pts is not None and p.is_keyframe]
    position, size = packets[10]  # a keyframe every 50 frames: frame 500's
    damaged = tmp_path / "damaged.mp4"
    data = bytearray(bframe_video.read_bytes())
    data[position + 4 : position + size] = bytes(size - 4)  # keep the NAL length, zero the rest
    damaged.write_bytes(bytes(data))
    outcomes = []
    for workers in (1, 3):
        got = []
        with VideoDecoder(damaged, workers=workers) as decoder, \
                pytest.raises(CorruptMediaError) as err:
            for i, _ in decoder.iter_frames([10, 300, 510, 800]):
                got.append(i)
        outcomes.append((got, err.value.record, str(err.value)))
    assert outcomes[0] == outcomes[1]
    got, record = outcomes[0][0], outcomes[0][1]
    # the first frame that does not decode is in the damaged GOP, or among the B-frames before
    # its keyframe that reference it (3 at most); which one depends on x264's frame types
    assert got == [10, 300] and record.startswith("frame ")
    assert 497 <= int(record.removeprefix("frame ")) < 550


def test_workers_must_be_positive(bframe_video):
    with pytest.raises(ValueError, match="workers"):
        VideoDecoder(bframe_video, workers=0)


# -- fork: a decoder opened (and used) in the parent decodes in a forked child -----------------


@pytest.mark.parametrize("workers", [1, 3])
def test_a_decoder_used_before_a_fork_decodes_in_the_child(bframe_video, bframe_reference,
                                                           workers):
    # FFmpeg's frame threads, the parallel runs' helper decoders and swscale's contexts are the
    # parent's: the child opens the file again and converts on contexts of its own (issue 36)
    wanted = [3, 420, 730, 980]
    with VideoDecoder(bframe_video, workers=workers, threads=0) as decoder:
        decoder.get_frames([5, 400, 700, 950])  # the parent's threads and helpers now exist
        if workers > 1:
            assert decoder.last_stats.workers > 1

        def child() -> bool:
            frames = decoder.get_frames(wanted)
            ok = all(np.array_equal(f, bframe_reference[i]) for i, f in zip(wanted, frames,
                                                                           strict=True))
            decoder.close()  # the child's own container; the parent's stays open
            return ok

        check_in_forked_child(child)
        frames = decoder.get_frames(wanted)  # the parent's decoder is untouched
    assert all(np.array_equal(f, bframe_reference[i]) for i, f in zip(wanted, frames,
                                                                      strict=True))


def test_frames_convert_in_a_child_forked_after_pyav_converted_with_slice_threads(bframe_video):
    # PyAV keeps one swscale context per thread, with automatic slice threads: after a plain
    # ``to_ndarray`` in the parent, a forked child's own call would wait on them forever
    with av.open(str(bframe_video)) as container:
        frame = next(container.decode(video=0))
        want = frame.to_ndarray(format="rgb24")
        small = Resize(max_side=96)
        want_small = frame_to_rgb(frame, small)
        assert np.array_equal(frame_to_rgb(frame), want)  # threads=1: the same pixels
        check_in_forked_child(lambda: np.array_equal(frame_to_rgb(frame), want)
                              and np.array_equal(frame_to_rgb(frame, small), want_small))


def test_a_decoder_left_in_a_reference_cycle_is_not_finalised_in_a_forked_child(bframe_video):
    # garbage the parent had not collected yet: the child's first collection would free its
    # codec context and join FFmpeg's frame threads, which do not exist there (issue 36: the
    # child hung in avcodec_free_context, holding the GIL). m3kit.forks freezes it at the fork.
    import gc

    gc.disable()  # the cycle stays uncollected in the parent until the fork
    try:
        lost = VideoDecoder(bframe_video, workers=1, threads=0)
        lost.get_frames([5, 400, 950])  # its frame threads now exist
        cycle: list[object] = [lost]
        cycle.append(cycle)
        del lost, cycle

        def child() -> bool:
            gc.collect()
            with VideoDecoder(bframe_video, workers=3) as decoder:
                return [read_frame_code(f) for f in decoder.get_frames([3, 730])] == [3, 730]

        check_in_forked_child(child)
    finally:
        gc.enable()
    gc.collect()  # the parent frees it as ever: unfrozen after the fork
