"""Atomic writes: whole content, no temporary file left, the old file kept on failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from m3kit.files import (
    atomic_file,
    atomic_write_bytes,
    atomic_write_text,
    commit_temp,
    is_temp_name,
    new_temp_beside,
)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_text_and_bytes_land_whole_and_leave_no_temp(tmp_path):
    text_path = atomic_write_text(tmp_path / "sub" / "a.json", "héllo\n")
    assert text_path == tmp_path / "sub" / "a.json"
    assert text_path.read_bytes() == "héllo\n".encode()
    atomic_write_bytes(tmp_path / "sub" / "b.bin", b"\x00\x01\x02")
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\x01\x02"
    assert listing(tmp_path / "sub") == ["a.json", "b.bin"]


def test_overwrite_replaces_content(tmp_path):
    path = tmp_path / "a.txt"
    atomic_write_text(path, "old, longer content")
    atomic_write_text(path, "new", durable=False)
    assert path.read_text() == "new"
    assert listing(tmp_path) == ["a.txt"]


def test_failure_keeps_old_file_and_removes_temp(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_file(path, "w") as fh:
        fh.write("half of the new")
        raise RuntimeError("writer failed")
    assert path.read_text() == "old"
    assert listing(tmp_path) == ["a.txt"]


def test_failure_without_old_file_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_file(tmp_path / "a.bin") as fh:
        fh.write(b"x")
        raise RuntimeError("writer failed")
    assert listing(tmp_path) == []


def test_temp_is_hidden_beside_target_and_recognisable(tmp_path):
    target = tmp_path / "frames.json"
    first, second = new_temp_beside(target), new_temp_beside(target)
    assert first != second and first.parent == tmp_path
    assert first.name.startswith(".frames.json.") and first.name.endswith(".tmp")
    assert is_temp_name(first.name)
    assert not is_temp_name("frames.json") and not is_temp_name(".hidden")
    # An ordinary file's permissions, not mkstemp's private 0600.
    umask = os.umask(0)
    os.umask(umask)
    assert first.stat().st_mode & 0o777 == 0o666 & ~umask
    first.write_bytes(b"done")
    assert commit_temp(first, target) == target
    assert target.read_bytes() == b"done" and not first.exists()


def test_mode_must_be_a_write_mode(tmp_path):
    with pytest.raises(ValueError, match="'a'"):
        atomic_file(tmp_path / "x", "a")  # type: ignore[call-overload]


def test_link_or_copy_links_on_one_file_system_and_keeps_a_link(tmp_path: Path) -> None:
    from m3kit.files import link_or_copy

    source = tmp_path / "a" / "video.mp4"
    source.parent.mkdir()
    source.write_bytes(b"frames")
    target = tmp_path / "b" / "video.mp4"
    assert link_or_copy(source, target) == "linked"
    assert target.samefile(source) and not target.is_symlink()
    assert link_or_copy(source, target) == "kept"
    other = tmp_path / "other.mp4"
    other.write_bytes(b"else")
    assert link_or_copy(other, target) == "linked"  # a stale file there is replaced
    assert target.read_bytes() == b"else"


def test_folder_replaced_puts_a_whole_folder_in_place_or_nothing(tmp_path: Path) -> None:
    from m3kit.errors import M3kitError
    from m3kit.files import folder_replaced

    out = tmp_path / "export"
    with folder_replaced(out, earlier="done.json") as temp:
        (temp / "a.txt").write_text("first")
        assert not out.exists()  # a reader never sees half of it
    (out / "done.json").write_text("{}")
    with pytest.raises(RuntimeError), folder_replaced(out, earlier="done.json") as temp:
        (temp / "a.txt").write_text("second")
        raise RuntimeError("killed half way")
    assert (out / "a.txt").read_text() == "first"  # a failure leaves the earlier build
    with folder_replaced(out, earlier="done.json") as temp:
        (temp / "b.txt").write_text("second")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"]  # replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no temporary left
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("data")
    with pytest.raises(M3kitError, match="holds other data"), \
            folder_replaced(mine, earlier="done.json"):
        pass
    assert (mine / "keep.txt").read_text() == "data"
