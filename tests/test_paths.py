"""The one resolver every loader uses for paths read from data files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from m3kit.errors import SchemaError, UnsafePathError
from m3kit.paths import relative_data_path, resolve_in_root


@pytest.mark.parametrize(("value", "normal"), [
    ("videos/a.mp4", "videos/a.mp4"),
    ("./videos//a.mp4", "videos/a.mp4"),
    ("videos/x/../a.mp4", "videos/a.mp4"),
    ("videos\\a.mp4", "videos/a.mp4"),  # written on Windows
])
def test_relative_paths_are_normalised(value: str, normal: str) -> None:
    assert relative_data_path(value) == normal


@pytest.mark.parametrize(("value", "reason"), [
    ("../x.png", "leaves the data root"),
    ("a/../../x.png", "leaves the data root"),
    ("/etc/passwd", "is absolute"),
    ("C:/data/x.png", "is absolute"),
    ("\\\\server\\share\\x.png", "is absolute"),
    ("img\x00.png", "NUL byte"),
    ("img\n.png", "control character"),
    ("\ud800.png", "cannot be encoded"),
    ("x" * 256, "longer than"),
    (".", "names the data root"),
    ("", "missing or empty"),
    (7, "missing or empty"),
])
def test_unsafe_or_invalid_paths_are_refused_and_named(value: object, reason: str) -> None:
    with pytest.raises(UnsafePathError, match=reason) as info:
        relative_data_path(value, path="q.json", record="r1", field="video")
    error = info.value
    assert isinstance(error, SchemaError)
    assert (error.path, error.record, error.field) == ("q.json", "r1", "video")


def test_symlinks_are_followed_then_checked(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "images").mkdir(parents=True)
    (root / "images" / "a.png").write_bytes(b"a")
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"s")
    (root / "images" / "inside.png").symlink_to(root / "images" / "a.png")
    (root / "images" / "out.png").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    (root / "loop").symlink_to(root / "loop")
    assert resolve_in_root(root, "images/inside.png") == (root / "images" / "a.png").resolve()
    assert resolve_in_root(root, "images/new.png") == (root / "images" / "new.png").resolve()
    with pytest.raises(UnsafePathError, match="through a symbolic link"):
        resolve_in_root(root, "images/out.png")
    with pytest.raises(UnsafePathError, match="through a symbolic link"):
        resolve_in_root(root, "linked/secret.png")
    with pytest.raises(UnsafePathError, match="symbolic link loop|cannot be resolved"):
        resolve_in_root(root, "loop/x.png")
    # a folder link out of the root is refused like a file link; one inside the root is fine
    (root / "pictures").symlink_to(root / "images", target_is_directory=True)
    assert resolve_in_root(root, "pictures/a.png") == (root / "images" / "a.png").resolve()
    with pytest.raises(UnsafePathError, match="'linked/secret.png' leaves the data root through "
                                              "a symbolic link"):
        resolve_in_root(root, "linked/secret.png")


def test_the_root_itself_may_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "disk" / "data"
    (real / "images").mkdir(parents=True)
    link = tmp_path / "data"
    os.symlink(real, link, target_is_directory=True)
    assert resolve_in_root(link, "images/a.png") == real.resolve() / "images" / "a.png"
