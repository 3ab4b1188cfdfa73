"""Seeded, cached, refused when broken."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.synth.ego import EgoSuite, EgoSuiteConfig, build_ego_suite, load_ego_suite
from m3kit.synth.errors import SynthError

from .conftest import TINY


def _digest(root: Path) -> dict[str, str]:
    """Hashes of every released file (suite.json holds the build time, so it is left out)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "data").rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_questions(ego_suite: EgoSuite,
                                                         tmp_path: Path) -> None:
    again = build_ego_suite(tmp_path / "again", TINY)
    assert _digest(again.root) == _digest(ego_suite.root)
    assert again.manifest.truth == ego_suite.manifest.truth
    assert again.manifest.persons == ego_suite.manifest.persons
    other = build_ego_suite(tmp_path / "other", TINY.model_copy(update={"seed": 6}))
    assert [q.question for q in other.questions] != [q.question for q in ego_suite.questions]


def test_a_built_suite_is_reused(ego_suite: EgoSuite) -> None:
    qa = ego_suite.all_qa
    before = qa.stat().st_mtime_ns
    reused = build_ego_suite(ego_suite.root, TINY)
    assert reused.cached and qa.stat().st_mtime_ns == before
    assert reused.questions == ego_suite.questions


def test_default_folder_is_in_the_m3kit_cache(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("M3KIT_CACHE_DIR", str(tmp_path))
    config = TINY.model_copy(update={"persons": 1, "sessions": 2})
    suite = build_ego_suite(config=config)
    assert suite.root == tmp_path / "synth" / "ego" / config.config_hash()[:16]


def test_incomplete_suite_is_named(ego_suite: EgoSuite, tmp_path: Path) -> None:
    with pytest.raises(SynthError, match="suite.json is missing"):
        load_ego_suite(tmp_path)
    copy = build_ego_suite(tmp_path / "copy", TINY)
    (copy.root / "data/video/Person_2/P2_D1.mp4").unlink()
    with pytest.raises(SynthError, match="P2_D1.mp4"):
        load_ego_suite(copy.root)
    rebuilt = build_ego_suite(copy.root, TINY)  # a broken folder is rebuilt, not reused
    assert not rebuilt.cached and (copy.root / "data/video/Person_2/P2_D1.mp4").is_file()


def test_config_refuses_what_cannot_be_rendered() -> None:
    with pytest.raises(ValueError, match="even"):
        EgoSuiteConfig(size=255)
    with pytest.raises(ValueError, match="whole number of frames"):
        EgoSuiteConfig(segment_seconds=1.25, fps=2.0)


def test_cli_synth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    assert main(["supermemory", "synth", "--out", str(out), "--persons", "1",
                 "--sessions", "2", "--segments", "8", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().endswith(str(out))
    assert load_ego_suite(out).manifest.config.persons == 1
    assert main(["supermemory", "synth", "--persons", "0"]) == 2
    assert "persons" in capsys.readouterr().err


def test_another_suite_in_the_folder_is_refused(tmp_path: Path) -> None:
    """Issue 23, item 13: a folder holding a suite of another config (or anything else) is
    refused with one line, so no stale day of the earlier suite joins the new one's persons;
    this suite's own folder, even broken or cut short, is built in."""
    small = TINY.model_copy(update={"persons": 1, "sessions": 2})
    out = tmp_path / "ego"
    build_ego_suite(out, small.model_copy(update={"sessions": 3}))
    with pytest.raises(SynthError, match="not empty and does not hold this suite"):
        build_ego_suite(out, small)
    assert (out / "data/video/Person_1/P1_D3.mp4").is_file()  # nothing was deleted
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(SynthError, match="not empty"):
        build_ego_suite(other, small)
    # a build of this config cut short (its marker, no suite.json) is finished in place
    again = tmp_path / "again"
    build_ego_suite(again, small)
    (again / "suite.json").unlink()
    (again / ".building").write_text(small.config_hash())
    assert not build_ego_suite(again, small).cached


def test_cli_synth_refusals_are_one_line(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23, item 14: ``--out`` naming a file, or a folder of another suite: one line,
    exit 2, no traceback."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    args = ["--persons", "1", "--sessions", "2", "--segments", "8", "--fps", "1"]
    assert main(["supermemory", "synth", "--out", str(a_file), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a folder" in err and "Traceback" not in err
    out = tmp_path / "ego"
    assert main(["supermemory", "synth", "--out", str(out), *args]) == 0
    capsys.readouterr()
    assert main(["supermemory", "synth", "--out", str(out), *args[:2], "--sessions", "3",
                 *args[4:]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not empty and does not hold this suite" in err
