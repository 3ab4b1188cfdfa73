"""Harness fixtures: isolated inspect/m3kit caches, a tiny question set on a real video, and the
scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakeserver import ScriptedServer

from m3kit.schema import Choice, Question, VideoRef, write_jsonl

SECRET = "sk-m3kit-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """inspect's response cache, sample buffer and data dirs, and m3kit's cache, per test."""
    home = tmp_path / "home"
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(home / "inspect-cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("M3KIT_CACHE_DIR", str(home / "m3kit"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "inspect-logs"))
    # no ambient model or display settings from the developer's shell
    for var in ("INSPECT_EVAL_MODEL", "INSPECT_DISPLAY", "INSPECT_LOG_LEVEL"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def probe_video(pattern_video_factory: Callable[..., Path]) -> Path:
    """A 4 s, 25 fps pattern video (100 frames)."""
    return pattern_video_factory(seconds=4.0, fps=25.0, width=160, height=120)


def make_question(
    i: int,
    video: Path,
    *,
    paradigm: str = "interference",
    time: float | None = None,
    nback: bool = False,
    **metadata: object,
) -> Question:
    """Question ``q<i>`` whose prompt carries ``qid=q<i>`` (the scripted server's sample key).

    Lettered: A correct, B intrusion, C irrelevant distractor. N-Back: A Yes (correct), B No.
    """
    if nback:
        choices = [Choice(letter="A", text="Yes", role="correct"),
                   Choice(letter="B", text="No", role="wrong")]
        paradigm = "nback"
    else:
        choices = [Choice(letter="A", text="red", role="correct"),
                   Choice(letter="B", text="blue", role="intrusion"),
                   Choice(letter="C", text="green", role="irrelevant_distractor")]
    return Question(
        id=f"q{i}",
        benchmark="m3kit-test",
        text=f"What colour was the box? qid=q{i}",
        choices=choices,
        answer="A",
        media=[VideoRef(path=str(video))],
        time=time,
        metadata={"paradigm": paradigm, "condition": "near" if i % 2 else "far", **metadata},
    )


@pytest.fixture
def make_q() -> Callable[..., Question]:
    """``make_q(i, video, **options)``: see ``make_question``."""
    return make_question


@pytest.fixture
def questions(probe_video: Path) -> list[Question]:
    return [make_question(i, probe_video) for i in range(6)]


@pytest.fixture
def suite_dir(tmp_path: Path, probe_video: Path) -> Path:
    """A suite directory in the synthetic suite's layout (``questions.jsonl``, relative media)."""
    root = tmp_path / "suite"
    root.mkdir()
    local = root / "probe.mp4"
    local.write_bytes(probe_video.read_bytes())
    qs = [make_question(i, Path("probe.mp4")) for i in range(3)]
    qs += [make_question(10 + i, Path("probe.mp4"), nback=True, k=4, n=1) for i in range(2)]
    write_jsonl(root / "questions.jsonl", qs)
    return root


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """``start(**options)`` -> a started ``ScriptedServer``; all are stopped after the test."""
    started: list[ScriptedServer] = []

    def start(**options: object) -> ScriptedServer:
        server = ScriptedServer(**options).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """``serve(service, server, key=SECRET)``: see ``use_server``."""
    return lambda service, server, key=SECRET: use_server(monkeypatch, service, server, key)


@pytest.fixture
def secret() -> str:
    return SECRET


def use_server(monkeypatch: pytest.MonkeyPatch, service: str, server: ScriptedServer,
               key: str | None = SECRET) -> str:
    """Point inspect's ``openai-api/<service>/...`` provider at ``server`` (``key`` in
    ``<SERVICE>_API_KEY``, or none); return the model name."""
    prefix = service.upper().replace("-", "_")
    monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url)
    if key is None:
        monkeypatch.delenv(f"{prefix}_API_KEY", raising=False)
    else:
        monkeypatch.setenv(f"{prefix}_API_KEY", key)
    return f"openai-api/{service}/scripted"
