"""The Python environment a run was made in, for its card (``m3kit.schema.card.EnvironmentCard``).

OCR, embeddings, speech transcripts and tokenizers come from installed packages, so a number
m3kit prints can move with a package's release while m3kit stays the same. A card therefore
names the environment whole: every installed distribution by name and version (one sha256 over
them all), and the lock it was installed from (README, "Installing: the lock"), with the
packages whose installed version is not the locked one.

The locks are the files ``requirements/<environment>.lock`` of a source checkout, beside
``src/``; ``<environment>-nodeps.lock`` belongs to ``<environment>`` (packages installed with
``--no-deps`` beside it). The environment's lock is the one most of whose pins are installed at
their version; an installed wheel of m3kit has no checkout beside it and records no lock.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from importlib.metadata import distributions
from pathlib import Path

from m3kit.schema.card import EnvironmentCard

__all__ = [
    "LOCK_DIR",
    "canonical_name",
    "environment_card",
    "installed_versions",
    "lock_pins",
    "locks_folder",
]

# The locks' folder in a checkout, relative to the folder that holds ``src/``.
LOCK_DIR = "requirements"
LOCK_SUFFIX = ".lock"
NODEPS_SUFFIX = "-nodeps"
# ``name==version`` at the start of a line of a lock (uv pip compile's output)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def canonical_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``Foo_Bar`` is ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_versions() -> dict[str, str]:
    """Every distribution this interpreter can import from, by canonical name: its version
    (the first one on ``sys.path`` where a name is installed twice, as imports see it)."""
    versions: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(canonical_name(name), dist.version)
    return versions


def lock_pins(text: str) -> dict[str, str]:
    """The pins of a lock file's ``text``: canonical name → version."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            pins[canonical_name(match.group(1))] = match.group(2)
    return pins


def locks_folder() -> Path | None:
    """``requirements/`` of the checkout this m3kit was imported from (``None`` for an
    installed wheel, or a checkout without locks)."""
    folder = Path(__file__).resolve().parents[3] / LOCK_DIR
    return folder if any(folder.glob(f"*{LOCK_SUFFIX}")) else None


def _lock_groups(folder: Path) -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.glob(f"*{LOCK_SUFFIX}")):
        name = path.name.removesuffix(LOCK_SUFFIX).removesuffix(NODEPS_SUFFIX)
        groups.setdefault(name, []).append(path)
    return groups


def environment_card(installed: Mapping[str, str] | None = None,
                     folder: Path | None = None) -> EnvironmentCard:
    """The card of this interpreter's environment (``installed``: name → version, default
    ``installed_versions()``), against the locks in ``folder`` (default ``locks_folder()``)."""
    versions = dict(installed) if installed is not None else installed_versions()
    listing = "\n".join(f"{name}=={versions[name]}" for name in sorted(versions))
    card = EnvironmentCard(packages=len(versions),
                           packages_sha256=hashlib.sha256(listing.encode()).hexdigest())
    folder = folder if folder is not None else locks_folder()
    if folder is None:
        return card
    best: tuple[int, str, list[Path], list[str]] | None = None
    for name, paths in _lock_groups(folder).items():
        pins: dict[str, str] = {}
        for path in paths:
            pins |= lock_pins(path.read_text(encoding="utf-8"))
        matched = sum(1 for pkg, version in pins.items() if versions.get(pkg) == version)
        differs = _differences(pins, versions)
        if matched and (best is None or matched > best[0]):
            best = (matched, name, paths, differs)
    if best is None:
        return card
    _, name, paths, differs = best
    return card.model_copy(update={"lock": name, "lock_sha256": _files_sha256(paths),
                                   "lock_differs": tuple(differs)})


def _differences(pins: Mapping[str, str], versions: Mapping[str, str]) -> list[str]:
    """``name installed (locked version)`` for each pin installed at another version. A pin
    not installed is no difference: the README's first command installs only the offline part
    of the main lock."""
    return [f"{pkg} {versions[pkg]} (locked {version})" for pkg, version in sorted(pins.items())
            if pkg in versions and versions[pkg] != version]


def _files_sha256(paths: Iterable[Path]) -> str:
    sha = hashlib.sha256()
    for path in paths:
        sha.update(hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()
