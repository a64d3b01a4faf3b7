"""Step 4: deterministic, formatted output; stale generated files removed; a check mode.

Every file is formatted with black (installed with datamodel-code-generator; one formatter
for models and templates alike, so a run is byte-identical to the last one) and starts with
the marker line. Each file is written to a temporary name beside it and renamed into place,
so no module is ever left truncated (H21). After writing, each `.py` file of the package's
own layout whose first line is the marker and that this run does not produce is deleted,
as client-go's `kube_codegen.sh` does: files of removed kinds vanish, hand-written files
(no marker) stay, and so does everything outside the layout: another generated package
below the output folder, hidden folders, virtualenvs (H20). A run with failed inputs
removes nothing (H22).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kubeinformers.generator.models import HEADER

log = logging.getLogger("kubeinformers.generator.write")

LINE_LENGTH = 100

# The PEP 561 marker file written (empty) at the root of every generated package (H34).
TYPED_MARKER = "py.typed"


def format_source(code: str, path: str = "<generated>") -> str:
    """black, line length 100, Python 3.11; the marker is made the first line."""
    import black

    mode = black.Mode(line_length=LINE_LENGTH, target_versions={black.mode.TargetVersion.PY311})
    try:
        code = black.format_str(code, mode=mode)
    except Exception as e:
        raise ValueError(f"generated {path} is not valid Python: {e}") from e
    if not code.startswith(HEADER):
        code = f"{HEADER}\n{code}"
    return code


# black formats ~250 KB of generated source per second; below this much, starting worker
# processes (each imports black, ~0.5 s) costs more than it saves.
PARALLEL_MIN_BYTES = 300_000


def format_all(
    files: Mapping[str, str], preformatted: frozenset[str] = frozenset(), *, jobs: int = 1
) -> dict[str, str]:
    """black over every file but the `preformatted` ones, in `jobs` worker processes when
    there is much to format (the informers, listers and accessors of 157 CRDs: 1.6 MB, 7 s
    in one process, 3.7 s in two).

    Model modules come formatted: by datamodel-code-generator's own (pinned, deterministic)
    formatter at the same line length, or laid out as that formatter would by `crd_models`;
    black over the 15 MB of models of 157 real CRDs takes two minutes.
    """
    out: dict[str, str] = {}
    pending: dict[str, str] = {}
    for path, code in files.items():
        if path in preformatted:
            code = code if code.startswith(HEADER) else f"{HEADER}\n{code}"
            out[path] = code if code.endswith("\n") else f"{code}\n"
        else:
            pending[path] = code
    if jobs > 1 and sum(map(len, pending.values())) >= PARALLEL_MIN_BYTES:
        from kubeinformers.generator import workers

        with workers.bound_pool(jobs) as pool:
            for formatted in pool.map(_format_batch, _batches(pending, jobs)):
                out.update(formatted)
    else:
        out.update(_format_batch(pending))
    return dict(sorted(out.items()))


def _format_batch(files: Mapping[str, str]) -> dict[str, str]:
    """For worker processes too: `format_source` over each file."""
    return {path: format_source(code, path) for path, code in files.items()}


def _batches(files: Mapping[str, str], count: int) -> list[dict[str, str]]:
    """`files` in `count` batches of about equal size (largest first, each to the smallest
    batch), so that no worker waits for another at the end."""
    batches: list[dict[str, str]] = [{} for _ in range(count)]
    sizes = [0] * count
    for path, code in sorted(files.items(), key=lambda item: (-len(item[1]), item[0])):
        smallest = sizes.index(min(sizes))
        batches[smallest][path] = code
        sizes[smallest] += len(code)
    return [batch for batch in batches if batch]


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # Stale files left in place because some inputs failed (H22).
    kept: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[str]:
        """In check mode: files that would be written or removed."""
        return sorted(self.written + self.removed)


class WriteError(OSError):
    """Writing one file failed; the files before it were written (the output may be partial)."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, f"{path}: {cause.strerror or cause}")
        self.path = path

    def __str__(self) -> str:
        return str(self.strerror)


def is_generated(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as f:
            return f.readline().rstrip("\n") == HEADER
    except (OSError, UnicodeDecodeError):
        return False


# The root module of a generated package: another package's root is never this one's file.
_ROOT_CLASS = re.compile(r"^class (?:CustomInformers|SharedInformerFactory)\b", re.MULTILINE)


def in_layout(rel: str) -> bool:
    """Whether a generated package could hold this relative path (H20): `<module>.py`,
    `<group>/<module>.py`, `<group>/<version>/<module>.py`,
    `<group>/<version>/apply/<module>.py`."""
    parts = rel.split("/")
    if any(not p.removesuffix(".py").isidentifier() for p in parts):
        return False
    return len(parts) <= 3 or (len(parts) == 4 and parts[2] == "apply")


def _other_package_root(folder: Path) -> bool:
    init = folder / "informers.py"
    if not is_generated(init):
        return False
    try:
        return _ROOT_CLASS.search(init.read_text(encoding="utf-8")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def _candidates(out: Path) -> Iterator[Path]:
    """The `.py` files under `out` at most 4 levels down, outside hidden folders,
    virtualenvs and other generated packages' roots."""

    def walk(folder: Path, depth: int) -> Iterator[Path]:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_file() and entry.suffix == ".py":
                yield entry
            elif entry.is_dir() and depth < 4:
                if entry.name.startswith((".", "__")) or (entry / "pyvenv.cfg").exists():
                    continue
                if entry.name in {"site-packages", "node_modules"} or _other_package_root(entry):
                    continue
                yield from walk(entry, depth + 1)

    if out.is_dir():
        yield from walk(out, 1)


def existing_generated(out: Path) -> set[str]:
    """This package's generated files found under `out` (H20)."""
    found = set()
    for p in _candidates(out):
        rel = p.relative_to(out).as_posix()
        if in_layout(rel) and is_generated(p):
            found.add(rel)
    return found


def _write_atomically(target: Path, content: str) -> None:
    """`content` to a temporary name beside `target`, then renamed over it (H21): an error
    or an interrupt leaves the old file or the new one, never a part of one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(content)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_tree(
    out: Path, files: Mapping[str, str], *, check: bool = False, keep_stale: bool = False
) -> Outcome:
    """Write `files` (already formatted) under `out`; in check mode only compare.

    With `keep_stale` (some inputs failed) no stale file is removed (H22): they are listed
    in `Outcome.kept`. Raises `WriteError` naming the file that could not be written."""
    outcome = Outcome()
    stale = existing_generated(out) - set(files)
    for rel in sorted(files):
        target = out / rel
        content = files[rel]
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == content:
            outcome.unchanged.append(rel)
            continue
        outcome.written.append(rel)
        if not check:
            try:
                _write_atomically(target, content)
            except OSError as e:
                raise WriteError(target, e) from e
    for rel in sorted(stale):
        if keep_stale:
            outcome.kept.append(rel)
            continue
        outcome.removed.append(rel)
        if not check:
            try:
                (out / rel).unlink()
            except OSError as e:
                raise WriteError(out / rel, e) from e
            _prune_empty_dirs((out / rel).parent, out)
    return outcome


def _prune_empty_dirs(folder: Path, stop: Path) -> None:
    while folder != stop and folder.is_dir():
        leftovers = [p for p in folder.iterdir() if p.name != "__pycache__"]
        if leftovers:
            return
        for cache in folder.iterdir():
            for f in cache.iterdir():
                f.unlink()
            cache.rmdir()
        folder.rmdir()
        folder = folder.parent
