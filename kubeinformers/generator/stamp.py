"""A re-run on unchanged input does nothing: the stamp of the last run of an output folder.

After writing, the generator records a digest of everything the output depends on (the
input files' paths and bytes, the options, the generator's own code, templates and data,
the versions of datamodel-code-generator and black, the built-in shapes CRD models are
matched against) and a digest of the generated files it wrote. When the next run computes
the same input digest and finds the output folder's generated files as written (none
edited, added or removed), it stops before loading anything: nothing is rewritten, no
mtime changes. `--force` skips the check; `--cluster` never uses it (a server's documents
are not files whose bytes could be hashed before reading them).

The stamp lives in the user's cache folder (`$XDG_CACHE_HOME/kubeinformers`, else
`~/.cache/kubeinformers`), not in the output folder, which holds only generated code.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from kubeinformers.generator import load, shapes, write
from kubeinformers.generator.schema import SHARED_BUILTINS

GENERATOR = Path(__file__).resolve().parent


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubeinformers" / "generate"


def _stamp_path(out: Path) -> Path:
    name = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:24]
    return cache_dir() / f"{name}.json"


def _add_file(h: hashlib._Hash, path: Path) -> None:
    h.update(str(path).encode() + b"\0")
    h.update(hashlib.sha256(path.read_bytes()).digest())


def input_digest(
    *,
    openapi: Sequence[Path],
    crds: Sequence[Path],
    package: str,
    keep_going: bool,
    groups: Sequence[str],
    prefer: Sequence[Path],
) -> str | None:
    """The digest of everything a run reads; None when an input cannot be read (the run
    itself will say why)."""
    h = hashlib.sha256()
    try:
        tools = [version("datamodel-code-generator"), version("black")]
    except PackageNotFoundError:
        return None  # the run says which extra is missing
    options = {
        "package": package,
        "keep_going": keep_going,
        "groups": sorted(groups),
        "prefer": [str(p) for p in prefer],
        "openapi": [str(p) for p in openapi],
        "crd": [str(p) for p in crds],
        "tools": tools,
    }
    h.update(json.dumps(options, sort_keys=True).encode())
    try:
        for path in [*openapi, *crds]:
            for f in load.crd_files(path) if path.is_dir() else [path]:
                _add_file(h, f)
        for f in sorted(GENERATOR.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                _add_file(h, f)
        builtin_shapes = _module_file(f"{SHARED_BUILTINS}.{shapes.MODULE}")
        if builtin_shapes is not None:
            _add_file(h, builtin_shapes)
    except OSError:
        return None
    return h.hexdigest()


def _module_file(module: str) -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin)


def output_digest(out: Path) -> str:
    """The digest of the generated files (marker first line) under `out`."""
    h = hashlib.sha256()
    for rel in sorted(write.existing_generated(out)):
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256((out / rel).read_bytes()).digest())
    # The marker has no marker line: a run must write it again if it is gone (H34).
    h.update(f"{write.TYPED_MARKER}:{(out / write.TYPED_MARKER).is_file()}".encode())
    return h.hexdigest()


def up_to_date(out: Path, digest: str) -> bool:
    """Whether the last run into `out` had input `digest` and its files are as written."""
    try:
        recorded = json.loads(_stamp_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or recorded.get("input") != digest:
        return False
    try:
        return recorded.get("output") == output_digest(out)
    except OSError:
        return False


def record(out: Path, digest: str) -> None:
    """Remember that `out` now holds the output of input `digest` (best effort: a cache
    that cannot be written only costs the next run its shortcut)."""
    try:
        path = _stamp_path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps({"out": str(out.resolve()), "input": digest, "output": output_digest(out)}),
            encoding="utf-8",
        )
        tmp.replace(path)
    except OSError:
        pass


def forget(out: Path) -> None:
    try:
        _stamp_path(out).unlink()
    except OSError:
        pass
