"""Opening a built suite folder: its manifest, checked, and every file it lists present.

Both synthetic suites (M3Eval-style probes, egocentric persons) are folders with a
``suite.json`` manifest; a reused cache folder must be whole, so a suite half-deleted by hand
is reported and rebuilt rather than evaluated with holes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from m3kit.synth.errors import SynthError

MANIFEST = "suite.json"

M = TypeVar("M", bound=BaseModel)


def read_manifest(root: Path, model: type[M], files: Callable[[M], Sequence[str]]) -> M:
    """``root/suite.json`` as ``model``; ``SynthError`` names the manifest when it is missing
    or malformed, or when any of ``files(manifest)`` (paths relative to ``root``) is absent."""
    path = root / MANIFEST
    try:
        manifest = model.model_validate_json(path.read_text("utf-8"))
    except FileNotFoundError:
        raise SynthError("no suite here (suite.json is missing); build it first",
                         path=path) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SynthError(err["msg"], path=path,
                         field=".".join(str(x) for x in err["loc"]) or None) from None
    missing = [rel for rel in files(manifest) if not (root / rel).is_file()]
    if missing:
        raise SynthError(f"{len(missing)} file(s) of the suite are missing, first {missing[0]}",
                         path=path)
    return manifest
