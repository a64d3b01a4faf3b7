"""Every Python block in README.md and docs/ is type-checked, and the runnable ones run (issue 18).

A doc whose example does not type-check under our own settings, or does not run, teaches the
wrong thing. Each ```python block must be preceded by one of these markers (an HTML comment,
invisible on the rendered page):

    <!-- doc-test: run -->        type-checked with mypy --strict, then run as a script with
                                  KUBECONFIG pointing at a LocalApiServer (see SEED below)
    <!-- doc-test: typecheck -->  type-checked only (needs a real cluster, runs forever, ...)

A block is a whole program: its own imports, no names from an earlier block. Blocks run from
a folder outside the repository with the repository on PYTHONPATH (so `examples.informers`,
the demo CRDs' generated package, is importable), each in its own process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeinformers.testing.local_api_server import LocalApiServer

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!--\s*doc-test:\s*(run|typecheck)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")

# What a runnable block finds in its cluster: the README's pod default/nginx among others, and
# the demo CRDs of crds/ (installed first) with widgets and the gadgets attached to them.
DEMO = "demo.kubeinformers.io/v1"
SEED: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "web", "tier": tier},
        },
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    for name, tier in (("nginx", "fe"), ("api", "be"))
] + [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"greeting": "hello"},
    }
]
SEED_AFTER_CRDS: list[dict[str, Any]] = [
    {
        "apiVersion": DEMO,
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "labels": {"size": size}},
        "spec": {"size": size, "color": color},
    }
    for name, size, color in (("w-1", "small", "red"), ("w-2", "large", "blue"))
] + [
    {
        "apiVersion": DEMO,
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {
            "model": "g",
            "attachedTo": [{"namespace": "default", "name": widget} for widget in widgets],
        },
    }
    for name, widgets in (("g-1", ["w-1"]), ("g-2", ["w-1", "w-2"]), ("g-3", ["w-2"]))
]


def demo_crds() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((REPO / "crds").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


@dataclass(frozen=True)
class Block:
    doc: str  # path relative to the repository
    line: int  # line of the opening fence
    mode: str  # "run", "typecheck" or "" (unmarked)
    code: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def module(self) -> str:
        stem = re.sub(r"[^a-z0-9]+", "_", self.doc.lower().removesuffix(".md"))
        return f"doc_{stem}_l{self.line}"


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def python_blocks(path: Path) -> Iterator[Block]:
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start = i
        end = start + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if fence.group(1) in ("python", "py"):
            before = next((s for s in reversed(lines[:start]) if s.strip()), "")
            marker = MARKER.search(before)
            yield Block(
                str(path.relative_to(REPO)),
                start + 1,
                marker.group(1) if marker else "",
                "\n".join(lines[start + 1 : end]) + "\n",
            )
        i = end + 1


BLOCKS = [block for path in doc_files() for block in python_blocks(path)]


def test_issue18_every_python_block_in_the_docs_is_marked_run_or_typecheck() -> None:
    assert BLOCKS, "no Python blocks found in README.md and docs/"
    unmarked = [b.where for b in BLOCKS if not b.mode]
    assert not unmarked, (
        "put <!-- doc-test: run --> or <!-- doc-test: typecheck --> on the line before "
        "each of these ```python blocks: " + ", ".join(unmarked)
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MYPYPATH"] = str(REPO)
    return env


def test_issue18_every_python_block_in_the_docs_type_checks_with_mypy_strict(
    tmp_path: Path,
) -> None:
    files = {}
    for block in BLOCKS:
        name = f"{block.module}.py"
        (tmp_path / name).write_text(block.code)
        files[name] = block
    done = subprocess.run(
        # The repository's cache (filled by `make typecheck`) spares re-analysing kubeinformers.
        [
            *(sys.executable, "-m", "mypy", "--strict"),
            *("--cache-dir", str(REPO / ".mypy_cache")),
            *sorted(files),
        ],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )

    def to_doc(match: re.Match[str]) -> str:
        block = files[match.group(1)]
        return f"{block.doc}:{block.line + int(match.group(2))}:"

    report = re.sub(r"^(doc_\w+\.py):(\d+):", to_doc, done.stdout, flags=re.M)
    assert done.returncode == 0, report + done.stderr


@pytest.fixture(scope="module")
def seeded_kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with LocalApiServer() as server:
        for obj in [*SEED, *demo_crds(), *SEED_AFTER_CRDS]:
            server.create(obj)
        yield server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mode == "run"], ids=lambda b: b.where)
def test_issue18_runnable_python_blocks_in_the_docs_run(
    block: Block, seeded_kubeconfig: Path, tmp_path: Path
) -> None:
    script = tmp_path / f"{block.module}.py"
    script.write_text(block.code)
    env = _env()
    env["KUBECONFIG"] = str(seeded_kubeconfig)
    done = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{block.where} failed:\n{done.stdout}\n{done.stderr}"
