"""The locks in requirements/ agree with pyproject.toml, and the README's commands install through
them (README, "Installing: the lock").

A lock that lags pyproject.toml installs what pyproject.toml no longer asks for, or a version
its range excludes; a README command that bypasses the lock installs whatever the registry
released yesterday. Both fail here, offline, before any install.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from m3kit.harness.environment import (
    canonical_name,
    environment_card,
    lock_pins,
)

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
# The platform every lock is resolved for (tools/lock): CPython 3.11 on x86-64 Linux.
TARGET = default_environment() | {
    "python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
    "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
    "implementation_name": "cpython", "platform_python_implementation": "CPython",
}
# uv's annotation of a package that the project itself asks for
VIA_PROJECT = "m3kit (pyproject.toml)"


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """The runtime requirements and those of ``extras``, self-references (``m3kit[a,b]``)
    expanded, markers evaluated for the locks' target."""
    meta = project()
    found: list[Requirement] = [Requirement(line) for line in meta["dependencies"]]
    pending, seen = list(extras), set()
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in meta["optional-dependencies"][extra]:
            requirement = Requirement(line)
            if canonical_name(requirement.name) == "m3kit":
                pending += sorted(requirement.extras)
            else:
                found.append(requirement)
    return [r for r in found if r.marker is None or r.marker.evaluate(TARGET)]


def in_file(path: Path) -> list[Requirement]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


def via(text: str) -> dict[str, set[str]]:
    """What uv says brought each locked package in (its ``# via`` lines)."""
    sources: dict[str, set[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
        if pin:
            current = canonical_name(pin.group(1))
            sources[current] = set()
        elif current is not None and line.startswith("    # via"):
            rest = line.removeprefix("    # via").strip()
            if rest:
                sources[current].add(rest)
        elif current is not None and line.startswith("    #   "):
            sources[current].add(line.removeprefix("    #   ").strip())
    return sources


def disagreements(wanted: list[Requirement], lock: Path,
                  overrides: Sequence[Requirement] = ()) -> list[str]:
    """How ``lock`` disagrees with ``wanted``: a requirement not locked, a locked version its
    range excludes (``overrides``' range instead, for a package they name), a package locked
    for the project that it no longer asks for."""
    text = lock.read_text(encoding="utf-8")
    pins = lock_pins(text)
    ranges = {canonical_name(r.name): r for r in overrides}
    problems = []
    names = set()
    for requirement in wanted:
        name = canonical_name(requirement.name)
        names.add(name)
        held = ranges.get(name, requirement)
        if name not in pins:
            problems.append(f"{requirement} is not in {lock.name}")
        elif not held.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{lock.name} locks {name}=={pins[name]}, outside {held}")
    for name, sources in via(text).items():
        if sources and sources <= {VIA_PROJECT} and name not in names:
            problems.append(f"{lock.name} locks {name} for m3kit, which no longer asks for it")
    return problems


def test_the_main_lock_agrees_with_pyproject() -> None:
    assert disagreements(requirements(("offline", "dev")), LOCKS / "main.lock") == []


def test_the_no_deps_lock_agrees_with_its_input() -> None:
    lock = LOCKS / "main-nodeps.lock"
    wanted = in_file(LOCKS / "main-nodeps.in")
    assert disagreements(wanted, lock) == []
    assert set(lock_pins(lock.read_text())) == {canonical_name(r.name) for r in wanted}


def test_the_cognee_lock_agrees_with_pyproject_and_its_overrides() -> None:
    lock = LOCKS / "cognee.lock"
    overrides = in_file(LOCKS / "cognee-overrides.txt")
    wanted = requirements(("cognee",)) + in_file(LOCKS / "cognee.in")
    assert disagreements(wanted, lock, overrides) == []
    pins = lock_pins(lock.read_text())  # each override holds, whoever else asks for less
    assert all(r.specifier.contains(pins[canonical_name(r.name)]) for r in overrides)


def test_a_change_to_pyproject_shows_as_a_disagreement(tmp_path: Path) -> None:
    lock = LOCKS / "main.lock"
    pins = lock_pins(lock.read_text())
    wanted = requirements(("offline", "dev"))
    added = wanted + [Requirement("left-pad-for-python>=1")]
    assert disagreements(added, lock) == [f"left-pad-for-python>=1 is not in {lock.name}"]
    narrowed = [Requirement(f"numpy<{pins['numpy']}") if r.name == "numpy" else r
                for r in wanted]
    assert disagreements(narrowed, lock) == [
        f"{lock.name} locks numpy=={pins['numpy']}, outside numpy<{pins['numpy']}"]
    removed = [r for r in wanted if r.name != "openpyxl"]
    assert disagreements(removed, lock) == [
        f"{lock.name} locks openpyxl for m3kit, which no longer asks for it"]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)\n```", text, re.S)
    assert block is not None, "the README starts with a bash block of its two commands"
    return block.group(1).splitlines()


def test_both_readme_commands_install_through_the_locks() -> None:
    first, second = readme_commands()
    assert "pip install -c requirements/main.lock -e \".[offline]\"" in first
    assert "pip install -c requirements/main.lock -e \".[dev]\"" in second
    assert "pip install --no-deps -r requirements/main-nodeps.lock" in second
    assert "pip install --no-deps -r requirements/cognee.lock -e ." in second
    # every pip install of the two commands names a lock
    for command in (first, second):
        for install in re.findall(r"pip install[^&]*", command):
            assert "requirements/" in install, install


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == readme_commands()[1]


def test_a_card_names_the_lock_and_what_differs_from_it(tmp_path: Path) -> None:
    (tmp_path / "main.lock").write_text("# made by tools/lock\nnumpy==2.0.0\n    # via x\n"
                                        "torch==2.13.0+cpu\n")
    (tmp_path / "main-nodeps.lock").write_text("memoryos-pro==0.1.0\n")
    (tmp_path / "cognee.lock").write_text("numpy==1.0.0\ncognee==1.6.5\n")
    installed = {"numpy": "2.0.0", "torch": "2.13.0+cpu", "memoryos-pro": "0.1.0", "pip": "23"}
    card = environment_card(installed, tmp_path)
    assert card.lock == "main" and card.lock_differs == () and card.packages == 4
    assert card.text().startswith(f"lock main {card.lock_sha256[:12]} (as locked) · 4 packages")
    moved = environment_card(installed | {"torch": "2.15.0"}, tmp_path)
    assert moved.lock == "main" and moved.lock_differs == ("torch 2.15.0 (locked 2.13.0+cpu)",)
    assert moved.packages_sha256 != card.packages_sha256
    assert moved.lock_sha256 == card.lock_sha256
    # another lock file, another identity; no lock matched, none named
    (tmp_path / "main-nodeps.lock").write_text("memoryos-pro==0.1.1\n")
    assert environment_card(installed, tmp_path).lock_sha256 != card.lock_sha256
    assert environment_card({"pip": "23"}, tmp_path).lock is None


@pytest.mark.skipif(not (LOCKS / "main.lock").is_file(), reason="no locks beside the package")
def test_this_environment_is_named_by_its_lock() -> None:
    card = environment_card()
    assert card.lock in {"main", "cognee"}
    assert card.packages > 50
