"""The lowest versions of the runtime dependencies pyproject.toml declares (maintainers' tool).

Declared ranges are promises: `make test-lowest` installs exactly these into `.venv-lowest`
and runs the real-server typed path there.

    python tools/lowest_deps.py           # pins, one per line: kubernetes==31.0.0 ...
    python tools/lowest_deps.py --check   # fail unless this interpreter has exactly them
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_LOWER = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][^,;\s]*)\s*$")


def lowest_pins() -> dict[str, str]:
    """{distribution: lowest declared version} for every runtime dependency."""
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    pins: dict[str, str] = {}
    for dep in deps:
        match = _LOWER.match(dep)
        if match is None:
            raise SystemExit(f"{PYPROJECT}: {dep!r} has no plain lower bound (name>=version)")
        pins[match[1]] = match[2]
    return pins


def main(argv: list[str]) -> int:
    pins = lowest_pins()
    if "--check" not in argv:
        print("\n".join(f"{name}=={v}" for name, v in pins.items()))
        return 0
    wrong = []
    for name, want in pins.items():
        try:
            have = version(name)
        except PackageNotFoundError:
            have = "missing"
        if have != want:
            wrong.append(f"{name} {have} (want the declared lowest, {want})")
    if wrong:
        print("not the lowest declared versions: " + "; ".join(wrong), file=sys.stderr)
        return 1
    print("lowest declared versions: " + ", ".join(f"{n} {v}" for n, v in pins.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
