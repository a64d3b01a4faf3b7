"""The newest installed Python other than the one running this (maintainers' tool).

`make test-newest-python` runs `make verify` and the CPython-internals tests there: one
supported Python is not all of them (H35). Looked for: `python3.N` on PATH and the
interpreters pyenv keeps (`$PYENV_ROOT/versions/*/bin/python3`, which its shims do not run
unless selected). Each candidate is run once to ask its version (a shim that refuses is no
candidate).

    python tools/newest_python.py    # prints "3.13 /path/to/python3.13", or nothing
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

OLDEST_SUPPORTED = (3, 11)
_NEWEST_MINOR = 20  # python3.12 ... python3.20 are looked for on PATH


def candidates() -> list[str]:
    """Interpreters that may be another Python 3 (not yet run)."""
    found: list[str] = []
    for minor in range(_NEWEST_MINOR, OLDEST_SUPPORTED[1] - 1, -1):
        path = shutil.which(f"python3.{minor}")
        if path is not None:
            found.append(path)
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found += sorted(str(p) for p in root.glob("versions/3.*/bin/python3") if p.is_file())
    return found


def version_of(python: str) -> tuple[int, int] | None:
    """(major, minor) of `python`, or None when it does not run."""
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.split()
        return int(out[0]), int(out[1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def newest_other() -> tuple[tuple[int, int], str] | None:
    """The newest supported Python whose version is not this one's, and its path."""
    own = sys.version_info[:2]
    best: tuple[tuple[int, int], str] | None = None
    for python in candidates():
        version = version_of(python)
        if version is None or version == own or version < OLDEST_SUPPORTED:
            continue
        if best is None or version > best[0]:
            best = (version, python)
    return best


def main() -> None:
    found = newest_other()
    if found is not None:
        (major, minor), python = found
        print(f"{major}.{minor} {python}")


if __name__ == "__main__":
    main()
