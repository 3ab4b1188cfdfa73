"""``m3kit demo`` with no VIDEO: the shared pancake video is found from any working
folder, via ``$M3KIT_SHARED_DATA`` or beside the checkout; otherwise one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.cli.demo import find_demo_video
from m3kit.cli.main import main
from m3kit.errors import M3kitError


def test_demo_without_a_video_runs_from_any_folder(pancake: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # a folder that is not the repository: the old cwd-relative default failed here
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("M3KIT_SHARED_DATA", raising=False)
    assert main(["demo", "--swaps", "1"]) == 0
    out = capsys.readouterr().out
    assert "split_screen probe: 852x240" in out and "swaps: 1" in out
    assert (work / "m3kit-demo" / "split_probe.mp4").is_file()


def test_the_environment_variable_comes_first(pancake: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared_data"
    (shared / "videos").mkdir(parents=True)
    (shared / "videos" / "flipping_a_pancake.mkv").symlink_to(pancake)
    no_checkout = tmp_path / "no" / "checkout"
    env = {"M3KIT_SHARED_DATA": str(shared)}
    assert find_demo_video(env, no_checkout) == shared / "videos" / "flipping_a_pancake.mkv"
    # set but empty there: the checkout's shared/data is the fallback
    checkout_shared = tmp_path / "repo_parent"
    (checkout_shared / "shared" / "data" / "videos").mkdir(parents=True)
    video = checkout_shared / "shared" / "data" / "videos" / "flipping_a_pancake.mkv"
    video.symlink_to(pancake)
    env_empty = {"M3KIT_SHARED_DATA": str(tmp_path / "empty")}
    assert find_demo_video(env_empty, checkout_shared / "main") == video


def test_no_video_anywhere_is_one_clear_error(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(M3kitError) as info:
        find_demo_video({}, tmp_path / "checkout")
    message = str(info.value)
    assert "\n" not in message
    assert "m3kit demo PATH/TO/VIDEO.mp4" in message and "M3KIT_SHARED_DATA" in message
    assert str(tmp_path / "shared" / "data" / "videos" / "flipping_a_pancake.mkv") in message
    # through the CLI a missing explicit VIDEO is still one line, exit 2
    monkeypatch.chdir(tmp_path)
    assert main(["demo", str(tmp_path / "nope.mkv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("m3kit: error: ") and "Traceback" not in err
