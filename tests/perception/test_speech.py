"""Speech transcripts with the real Whisper tiny.en model, on audio written here with PyAV.

No text-to-speech engine is installed and no speech recording ships with the project, so the
always-on tests check what can be checked without words: silence and tones give no segments,
spans cut the audio at the right samples (told apart by their pitch), soundtracks of videos are
read, bad input is named. ``test_real_speech`` runs Whisper on a real recording when one is
provided (``M3KIT_SPEECH_SAMPLE``, or ``audio/speech.*`` in the shared data) and checks that
span transcripts land at the same absolute times as the full transcript.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import av
import numpy as np
import pytest

from m3kit.errors import MediaError, MediaNotFoundError
from m3kit.perception.base import SpeechRecognizer
from m3kit.perception.speech import SAMPLE_RATE, WhisperRecognizer, decode_audio

from ..forking import check_in_forked_child

REPO_ROOT = Path(__file__).resolve().parents[2]


def write_audio(path: Path, samples: np.ndarray, rate: int, *, video: bool = False) -> Path:
    """Encode mono float samples in [-1, 1]: AAC in ``.m4a``/``.mp4``, PCM in ``.wav``.

    With ``video``, a small H.264 picture track of the same length is muxed first, as in a
    real recording.
    """
    with av.open(str(path), "w") as container:
        picture = None
        if video:
            picture = container.add_stream("libx264", rate=10)
            picture.width, picture.height, picture.pix_fmt = 64, 48, "yuv420p"
        pcm = path.suffix == ".wav"
        sound = container.add_stream("pcm_s16le" if pcm else "aac", rate=rate)
        sound.layout = "mono"
        if picture is not None:
            for n in range(int(len(samples) / rate * 10)):
                frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), n * 5 % 255, np.uint8))
                container.mux(picture.encode(frame))
            container.mux(picture.encode(None))
        step = 1024
        for start in range(0, len(samples), step):
            chunk = samples[start : start + step]
            if pcm:
                data = (np.clip(chunk, -1, 1) * 32767).astype(np.int16)[None, :]
                frame = av.AudioFrame.from_ndarray(data, format="s16", layout="mono")
            else:
                frame = av.AudioFrame.from_ndarray(chunk.astype(np.float32)[None, :],
                                                   format="fltp", layout="mono")
            frame.sample_rate, frame.pts = rate, start
            container.mux(sound.encode(frame))
        container.mux(sound.encode(None))
    return path


def tone(freq: float, seconds: float, rate: int, amplitude: float = 0.4) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def pitch(samples: np.ndarray, rate: int = SAMPLE_RATE) -> float:
    """The strongest frequency in ``samples``, in Hz."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))])


@pytest.fixture(scope="module")
def recognizer() -> WhisperRecognizer:
    return WhisperRecognizer()


@pytest.fixture(scope="module")
def audio_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audio")


@pytest.fixture(scope="module")
def two_tones(audio_dir: Path) -> Path:
    """4 s of AAC at 44.1 kHz: 440 Hz for two seconds, then 1000 Hz."""
    rate = 44_100
    return write_audio(audio_dir / "tones.m4a",
                       np.concatenate([tone(440, 2, rate), tone(1000, 2, rate)]), rate)


def test_is_a_speech_recognizer(recognizer) -> None:
    assert isinstance(recognizer, SpeechRecognizer)
    assert not recognizer._engine.loaded  # lazy: nothing loaded until the first transcription


@pytest.mark.parametrize("span", [(0.5, 1.5), (2.5, 3.5), (1.75, 2.25)])
def test_span_cuts_the_audio_at_the_right_samples(two_tones: Path, span) -> None:
    audio, offset = decode_audio(two_tones, span)
    assert audio.dtype == np.float32
    assert abs(offset - span[0]) < 1 / SAMPLE_RATE
    assert abs(audio.size - (span[1] - span[0]) * SAMPLE_RATE) <= 1
    # The AAC encoder's priming delay is trimmed: each half carries its own pitch.
    quarter = audio.size // 4
    first, last = audio[: quarter], audio[-quarter:]
    expected = [440 if span[0] < 2 else 1000, 1000 if span[1] > 2 else 440]
    assert abs(pitch(first) - expected[0]) < 20 and abs(pitch(last) - expected[1]) < 20


def test_whole_file_decodes_from_time_zero(two_tones: Path) -> None:
    audio, offset = decode_audio(two_tones)
    assert offset == 0.0
    assert abs(audio.size / SAMPLE_RATE - 4.0) < 0.05
    assert abs(pitch(audio[SAMPLE_RATE // 2 : SAMPLE_RATE]) - 440) < 20


def test_silence_and_tones_give_no_words(recognizer, audio_dir: Path, two_tones: Path) -> None:
    silence = write_audio(audio_dir / "silence.wav", np.zeros(5 * 16_000, np.float32), 16_000)
    assert recognizer.transcribe(silence) == []
    assert recognizer.transcribe(two_tones) == []
    assert recognizer.transcribe(two_tones, span=(1.0, 3.0)) == []


def test_reads_the_soundtrack_of_a_video(recognizer, audio_dir: Path) -> None:
    clip = write_audio(audio_dir / "clip.mp4", tone(300, 3, 48_000, 0.2), 48_000, video=True)
    audio, _ = decode_audio(clip, (1.0, 2.0))
    assert abs(pitch(audio) - 300) < 20
    assert recognizer.transcribe(clip) == []


def test_bad_input_is_named(recognizer, small_video: Path, tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=f"{re.escape(str(small_video))}: has no audio stream"):
        recognizer.transcribe(small_video)
    with pytest.raises(MediaNotFoundError, match="nowhere.wav"):
        recognizer.transcribe(tmp_path / "nowhere.wav")
    with pytest.raises(ValueError, match="span"):
        recognizer.transcribe(small_video, span=(3.0, 1.0))


def test_a_span_past_the_end_is_empty(recognizer, two_tones: Path) -> None:
    audio, _ = decode_audio(two_tones, (10.0, 12.0))
    assert audio.size == 0
    assert recognizer.transcribe(two_tones, span=(10.0, 12.0)) == []


def _speech_sample() -> Path | None:
    if os.environ.get("M3KIT_SPEECH_SAMPLE"):
        return Path(os.environ["M3KIT_SPEECH_SAMPLE"])
    shared = Path(os.environ.get("M3KIT_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    return next(iter(sorted((shared / "audio").glob("speech.*"))), None)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


@pytest.fixture
def speech_sample() -> Path:
    path = _speech_sample()
    if path is None or not path.is_file():
        pytest.skip("no speech recording: set M3KIT_SPEECH_SAMPLE or add shared/data/audio/"
                    "speech.* (no offline text-to-speech engine is installed)")
    return path


def test_real_speech(recognizer, speech_sample: Path) -> None:
    """Words are found, times are absolute, and a span's segments match the full transcript's
    segments at the same moments (within half a second, most of the same words)."""
    full = recognizer.transcribe(speech_sample)
    audio, _ = decode_audio(speech_sample)
    duration = audio.size / SAMPLE_RATE
    assert full and all(s.text for s in full)
    assert all(0 <= s.start <= s.end <= duration + 1e-6 for s in full)
    assert [s.start for s in full] == sorted(s.start for s in full)
    span = (duration / 3, 2 * duration / 3)
    part = recognizer.transcribe(speech_sample, span=span)
    assert part and all(span[0] - 1e-6 <= s.start <= s.end <= span[1] + 1e-6 for s in part)
    inner = [s for s in full if s.start > span[0] + 1 and s.end < span[1] - 1]
    for segment in inner:
        twin = min(part, key=lambda s: abs(s.start - segment.start))
        assert abs(twin.start - segment.start) < 0.5
        a, b = _words(twin.text), _words(segment.text)
        assert len(a & b) >= 0.6 * len(a | b)


def test_fixture_helpers_roundtrip(audio_dir: Path) -> None:
    """The PCM writer is exact, so the tests above measure the decoder, not the encoder."""
    samples = tone(500, 1, 16_000)
    audio, _ = decode_audio(write_audio(audio_dir / "exact.wav", samples, 16_000))
    np.testing.assert_allclose(audio, samples, atol=1 / 16_000)


def test_a_recognizer_used_before_a_fork_transcribes_in_the_child(audio_dir: Path) -> None:
    # CTranslate2's OpenMP pool and its model's threads stay in the parent: the child loads
    # its own model on a thread of its own
    recognizer = WhisperRecognizer(vad_filter=False)
    clip = write_audio(audio_dir / "fork.wav", tone(300, 3, 16_000, 0.2), 16_000)
    want = recognizer.transcribe(clip)
    check_in_forked_child(lambda: recognizer.transcribe(clip) == want)
    assert recognizer.transcribe(clip) == want
