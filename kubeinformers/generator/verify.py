"""`python -m kubeinformers.generator.verify` (`make verify`): is the committed output current?

Regenerates (in memory) the built-in tree from ../shared/data/openapi (v3
folder preferred, else swagger.json) and the example CRDs (crds/ → examples/informers,
package examples.informers), then compares with the committed trees. Exits 1 listing every
differing, missing or stale file; 0 when all is current. Without ../shared/data it says so
and checks only what it can.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kubeinformers.generator import cli, write

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    """One committed tree and how to regenerate it."""

    name: str
    out: Path
    package: str
    openapi: tuple[Path, ...] = ()
    crds: tuple[Path, ...] = ()


def targets(repo: Path = REPO, shared: Path | None = None) -> tuple[list[Target], list[str]]:
    """The trees to check, and what cannot be checked (and why)."""
    shared = shared if shared is not None else repo.parent / "shared" / "data"
    found: list[Target] = []
    skipped: list[str] = []
    v3 = shared / "openapi" / "v3"
    v2 = shared / "openapi" / "swagger.json"
    spec = v3 if v3.is_dir() else v2 if v2.is_file() else None
    if spec is None:
        skipped.append(
            f"built-in tree kubeinformers/generated: {shared / 'openapi'} is absent, not checked"
        )
    else:
        found.append(
            Target(
                "built-ins",
                repo / "kubeinformers" / "generated",
                "kubeinformers.generated",
                openapi=(spec,),
            )
        )
    crds = repo / "crds"
    crd_files = (
        [p for p in crds.rglob("*") if p.suffix in (".yaml", ".yml", ".json")]
        if crds.is_dir()
        else []
    )
    if crd_files:
        found.append(
            Target(
                "example CRDs", repo / "examples" / "informers", "examples.informers", crds=(crds,)
            )
        )
    else:
        skipped.append("example CRDs: crds/ holds no CRD files, not checked")
    return found, skipped


def check(target: Target) -> list[str]:
    """Paths (relative to the target's tree) that differ from a fresh generation.

    The fresh generation stays in memory and is compared file by file with the committed
    tree, stale generated files included (write_tree's check mode).
    """
    model = cli.collect(target.openapi, target.crds)
    result = cli.build(model, target.package)
    if result.errors:
        return [f"(input error) {e}" for e in result.errors]
    return write.write_tree(target.out, result.files, check=True).differing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kubeinformers.generator.verify",
        description="Fail when the committed generated code is not what the generator makes now.",
    )
    parser.add_argument("--shared", type=Path, default=None, help="the shared data folder")
    args = parser.parse_args(argv)
    found, skipped = targets(shared=args.shared)
    for note in skipped:
        print(f"verify: {note}", file=sys.stderr)
    failed = False
    for target in found:
        differing = check(target)
        rel = target.out.relative_to(REPO) if target.out.is_relative_to(REPO) else target.out
        if differing:
            failed = True
            print(
                f"verify: {target.name}: {len(differing)} file(s) differ in {rel}:", file=sys.stderr
            )
            for path in differing:
                print(f"  {rel}/{path}", file=sys.stderr)
        else:
            print(f"verify: {target.name}: {rel} is up to date", file=sys.stderr)
    if failed:
        from kubeinformers.generator.render import tool_versions

        print(
            "verify: run `make generate-builtins` / `make generate` and commit; the output "
            f"depends on the tools' versions (installed: {tool_versions()}; the committed "
            "versions are named in each tree's registry.py)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
