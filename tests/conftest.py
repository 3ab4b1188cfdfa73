"""Fixtures shared by all test folders: small generated videos, made once per session; a tiny
question on a real video (``make_q``); the scripted OpenAI-compatible server on loopback
(``scripted``, ``serve``); isolated inspect/m3kit caches for tests that run the harness
(``isolated_dirs``); a tiny synthetic egocentric suite to review (``review_suite``, built once
per session, and ``suite_root``, a fresh copy per test: decisions and exports are written beside
it)."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from m3kit.media.generate import write_pattern_video
from m3kit.schema import Choice, Question, VideoRef
from m3kit.synth.ego import EgoSuite, EgoSuiteConfig, build_ego_suite

REPO_ROOT = Path(__file__).resolve().parents[1]

def _register_fakeserver() -> None:
    """Make ``tests/fakeserver.py`` (the scripted OpenAI-compatible server) importable as
    ``fakeserver``: tests are not a package, and this conftest runs before any of them."""
    if "fakeserver" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location("fakeserver",
                                                  Path(__file__).with_name("fakeserver.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fakeserver"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)


_register_fakeserver()

# importable once registered
from fakeserver import ScriptedServer  # noqa: E402 (only after the registration above)

# Tests never read or fill the user's caches (frames, OCR, suites): one fresh cache per session.
# Each process (xdist's workers too) removes its own at exit: a suite run leaves no folder behind.
_SESSION_CACHE = tempfile.mkdtemp(prefix="m3kit-test-cache-")
os.environ["M3KIT_CACHE_DIR"] = _SESSION_CACHE
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)


def shared_data_path(*parts: str) -> Path:
    """A path under the project's shared data (``../shared/data`` beside the repository, or
    ``$M3KIT_SHARED_DATA``); the calling test is skipped when it is not there."""
    root = Path(os.environ.get("M3KIT_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    path = root.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture(scope="session")
def pancake() -> Path:
    """A real 10 s H.264 video in Matroska, 426x240, 30 fps (310 frames)."""
    return shared_data_path("videos", "flipping_a_pancake.mkv")


@pytest.fixture(scope="session")
def unordered() -> Path:
    """A tiny mov whose frames are stored out of presentation order."""
    return shared_data_path("videos", "unordered.mov")


@pytest.fixture(scope="session")
def corrupted() -> Path:
    """A deliberately corrupted mp4: opens, then fails to decode at frame 28."""
    return shared_data_path("videos", "corrupted.mp4")


@pytest.fixture(scope="session")
def m3exam_persona() -> Path:
    """One real M3Exam persona folder in the released layout."""
    return shared_data_path("m3exam", "Alex_Veterinarian")


@pytest.fixture(scope="session")
def pattern_video_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``make(seconds=, fps=, width=, height=, keyint=, bframes=, hue=)`` -> a pattern video.

    Each distinct set of parameters is encoded once per session; frames carry their own index
    (``m3kit.media.generate.read_frame_code``). Defaults: 4 s at 25 fps, 160x120, a keyframe
    every 25 frames, 2 B-frames (100 frames, stored out of display order).
    """
    folder = tmp_path_factory.mktemp("pattern_videos")
    made: dict[tuple[float, ...], Path] = {}

    def make(
        *,
        seconds: float = 4.0,
        fps: float = 25.0,
        width: int = 160,
        height: int = 120,
        keyint: int = 25,
        bframes: int = 2,
        hue: float = 0.0,
    ) -> Path:
        key = (seconds, fps, width, height, keyint, bframes, hue)
        if key not in made:
            name = "pattern_" + "_".join(f"{k:g}" for k in key) + ".mp4"
            made[key] = write_pattern_video(
                folder / name, seconds=seconds, fps=fps, width=width, height=height,
                keyint=keyint, bframes=bframes, hue=hue,
            )
        return made[key]

    return make


@pytest.fixture(scope="session")
def small_video(pattern_video_factory: Callable[..., Path]) -> Path:
    """100 frames, 160x120, 25 fps, a keyframe every 25 frames, 2 B-frames."""
    return pattern_video_factory()


# -- questions on a probe video, the scripted server, isolated caches ------------------------------

SECRET = "sk-m3kit-test-0123456789abcdef"


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """inspect's response cache, sample buffer and data dirs, and m3kit's cache, per test (the
    folders that run the harness use it for every test)."""
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


# 2 persons x 3 days of 8 scenes of 6 s at 1 fps; person 1's second day is transcript-only.
REVIEW_SUITE = EgoSuiteConfig(seed=5, persons=2, sessions=3, segments=8, fps=1.0, size=256,
                              answerable_per_skill=2, unanswerable=3)


@pytest.fixture(scope="session")
def review_suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("review_suite"), REVIEW_SUITE)


@pytest.fixture
def suite_root(review_suite: EgoSuite, tmp_path: Path) -> Path:
    """A fresh copy of the review suite (its decisions and exports are the test's own)."""
    root = tmp_path / "suite"
    shutil.copytree(review_suite.root, root)
    return root
