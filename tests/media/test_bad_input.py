"""Every bad input gives a typed m3kit error that names the file: never a PyAV traceback."""

from __future__ import annotations

import pytest

from m3kit.errors import (
    CorruptMediaError,
    MediaError,
    MediaNotFoundError,
    NotAVideoError,
    SamplingError,
)
from m3kit.media import VideoDecoder, decode_frames, video_info
from m3kit.media.frames import sample_frames

BAD_FILES = [
    ("missing", MediaNotFoundError, "no such file"),
    ("directory", NotAVideoError, "directory"),
    ("empty", NotAVideoError, "empty"),
    ("truncated_mp4", CorruptMediaError, "truncated"),
    ("audio_only", NotAVideoError, "no video stream"),
    ("text", NotAVideoError, "not a video"),
    ("image", NotAVideoError, "still image"),
]


@pytest.fixture()
def bad_path(request, media_dir, truncated_mp4, audio_only, text_file, image_file, empty_file):
    return {
        "missing": media_dir / "does-not-exist.mp4",
        "directory": media_dir,
        "empty": empty_file,
        "truncated_mp4": truncated_mp4,
        "audio_only": audio_only,
        "text": text_file,
        "image": image_file,
    }[request.param]


@pytest.mark.parametrize(("bad_path", "error", "reason"), BAD_FILES, indirect=["bad_path"])
@pytest.mark.parametrize("entry", ["probe", "decoder", "sample"])
def test_bad_file_is_a_typed_error_naming_it(bad_path, error, reason, entry):
    with pytest.raises(error) as caught:
        if entry == "probe":
            video_info(bad_path)
        elif entry == "decoder":
            VideoDecoder(bad_path)
        else:
            sample_frames(bad_path, "uniform", 8)
    assert isinstance(caught.value, MediaError)
    assert caught.value.path == str(bad_path)
    assert str(bad_path) in str(caught.value) and reason in str(caught.value)


def test_corrupted_video_fails_at_the_damaged_frame(corrupted):
    info = video_info(corrupted)  # the header and the first frames are fine
    assert info.frame_count == 50
    with pytest.raises(CorruptMediaError) as caught:
        decode_frames(corrupted, list(range(info.frame_count)))
    message = str(caught.value)
    assert str(corrupted) in message and "frame" in message
    assert caught.value.record is not None and caught.value.record.startswith("frame ")


def test_corrupted_video_frames_before_the_damage_decode(corrupted):
    frames = decode_frames(corrupted, [0, 10, 20])
    assert [f.shape for f in frames] == [(720, 1280, 3)] * 3


def test_truncated_matroska_is_read_up_to_the_cut(truncated_mkv):
    info = video_info(truncated_mkv)
    frames = decode_frames(truncated_mkv, [0, info.frame_count - 1])
    assert len(frames) == 2


@pytest.mark.parametrize("n", [0, -1])
def test_non_positive_n(pancake, n):
    with pytest.raises(SamplingError, match="positive"):
        sample_frames(pancake, "uniform", n)


def test_span_outside_the_video(pancake):
    with pytest.raises(SamplingError, match="span"):
        sample_frames(pancake, "uniform", 8, span=(20.0, 30.0))


def test_errors_survive_pickling_for_worker_processes(corrupted):
    import pickle

    err = CorruptMediaError("bad packet", path=corrupted, record="frame 28", field="video")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is CorruptMediaError and str(again) == str(err)
    assert str(again) == f"{corrupted}: record frame 28: field 'video': bad packet"
