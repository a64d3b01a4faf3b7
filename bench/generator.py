"""`make bench`, generator section: generation time of big CRDs and of the whole corpus, and
the import time of one kind of the biggest generated group-versions (issue 15's targets).

Every step runs the real CLI or a fresh interpreter, as a user would. Inputs are the largest
CRD files of ../shared/data/crds (plus any `--crd PATH`, e.g. argo's 2.8 MB Workflow CRD,
which the issue's 15 s target is about). Import time is that of
`from <package>.<group>.<version> import <Kind>` in a fresh interpreter that has already
imported pydantic and the runtime (which every program using the models pays anyway), and
the first `model_validate` of a small object after it (pydantic builds validators then).

    python -m bench.generator [--crd PATH]... [--largest 3] [--no-corpus]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "data" / "crds"
RESULTS = Path(__file__).resolve().parent / "results"

# issue 15's targets
IMPORT_ONE_KIND_S = 0.5
GENERATE_BIG_CRD_S = 15.0  # "generating the argo Workflow CRD <= 15 s"
CORPUS_LIMIT_S = 300.0  # the corpus test's pytest timeout; "well under" = at most half
CORPUS_TARGET_S = CORPUS_LIMIT_S / 2

_IMPORT_PROBE = """
import json, sys, time
sys.path.insert(0, {root!r})
import pydantic, kubeinformers.runtime.api.model  # paid by every user of the models
t0 = time.perf_counter()
from {module} import {kind} as model
t1 = time.perf_counter()
model.model_validate({{"apiVersion": {api_version!r}, "kind": {kind!r}, "metadata": {{"name": "x"}}}})
t2 = time.perf_counter()
loaded = [m for m in sys.modules if m.startswith({package!r} + ".")]
print(json.dumps({{"import_s": t1 - t0, "first_validate_s": t2 - t1, "modules": len(loaded)}}))
"""


def generate(crds: list[Path], out: Path, package: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "kubeinformers.generator", "generate", "-q"]
    for crd in crds:
        cmd += ["--crd", str(crd)]
    cmd += ["--out", str(out / package), "--package", package]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"generating {crds} failed:\n{done.stderr[-3000:]}")
    files = [p for p in (out / package).rglob("*.py") if "__pycache__" not in p.parts]
    return {
        "seconds": seconds,
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "classes": sum(p.read_text().count("\nclass ") for p in files),
    }


def biggest_kind(out: Path, package: str) -> tuple[str, str, str] | None:
    """(module, kind, apiVersion) of the kind with the largest model module."""
    registry_path = out / package / "registry.py"
    if not registry_path.exists():
        return None
    sys.path.insert(0, str(out))
    try:
        import importlib

        registry = importlib.import_module(f"{package}.registry")
        best: tuple[int, str, str, str] | None = None
        for resource in registry.RESOURCES:
            path = registry.MODELS.get(resource.gvr)
            if path is None:
                continue
            module, _, cls = path.partition(":")
            size = (out / (module.replace(".", "/") + ".py")).stat().st_size
            version_pkg = module.rsplit(".", 1)[0]
            api_version = f"{resource.group}/{resource.version}"
            if best is None or size > best[0]:
                best = (size, version_pkg, cls, api_version)
        return None if best is None else best[1:]
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


def import_time(out: Path, package: str, runs: int = 3) -> dict[str, Any] | None:
    found = biggest_kind(out, package)
    if found is None:
        return None
    module, kind, api_version = found
    probe = _IMPORT_PROBE.format(
        root=str(out), module=module, kind=kind, api_version=api_version, package=package
    )
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "kind": f"{module}.{kind}",
        "import_s": statistics.median(s["import_s"] for s in samples),
        "first_validate_s": statistics.median(s["first_validate_s"] for s in samples),
        "modules": samples[0]["modules"],
    }


def largest_crds(n: int) -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = [p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(files, key=lambda p: -p.stat().st_size)[:n]


def _verdict(value: float, bound: float) -> str:
    return "yes" if value <= bound else "NO"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generator")
    parser.add_argument("--crd", action="append", type=Path, default=[], metavar="PATH")
    parser.add_argument("--largest", type=int, default=3, help="largest corpus CRDs to time")
    parser.add_argument("--no-corpus", action="store_true", help="skip the whole-corpus run")
    args = parser.parse_args(argv)

    inputs = [*args.crd, *largest_crds(args.largest)]
    print("\ngenerator bench (issue 15): one CRD file per run; fresh interpreters")
    if not inputs:
        print(f"no inputs: {CORPUS} is absent and no --crd was given")
        return 0
    rows: list[dict[str, Any]] = []
    header = (
        f"{'input':<44} {'size':>7} {'generate':>9} {'<=':>4} {'classes':>7} "
        f"{'import 1 kind':>13} {'<=':>4} {'1st parse':>9}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for i, crd in enumerate(inputs):
            package = f"bench_gen_{i}"
            gen = generate([crd], Path(tmp), package)
            imp = import_time(Path(tmp), package)
            row = {"input": str(crd), "bytes_in": crd.stat().st_size, **gen, "import": imp}
            rows.append(row)
            imp_s = imp["import_s"] if imp else float("nan")
            print(
                f"{crd.name[:44]:<44} {crd.stat().st_size / 1e6:>6.1f}M "
                f"{gen['seconds']:>8.1f}s {_verdict(gen['seconds'], GENERATE_BIG_CRD_S):>4} "
                f"{gen['classes']:>7} {imp_s:>12.3f}s "
                f"{_verdict(imp_s, IMPORT_ONE_KIND_S) if imp else '':>4} "
                f"{(imp['first_validate_s'] if imp else float('nan')):>8.3f}s"
            )
        corpus: dict[str, Any] | None = None
        if not args.no_corpus and CORPUS.is_dir():
            corpus = generate([CORPUS], Path(tmp), "bench_gen_corpus")
            print(
                f"{'whole corpus (' + str(CORPUS.relative_to(REPO.parent)) + ')':<44} "
                f"{'':>7} {corpus['seconds']:>8.1f}s "
                f"{_verdict(corpus['seconds'], CORPUS_TARGET_S):>4} {corpus['classes']:>7}"
            )
    print(
        f"targets: generation <= {GENERATE_BIG_CRD_S:.0f} s per big CRD (issue: argo Workflow); "
        f"import of one kind <= {IMPORT_ONE_KIND_S} s; corpus <= {CORPUS_TARGET_S:.0f} s "
        f"(half its {CORPUS_LIMIT_S:.0f} s test limit). Timings on a shared machine are noisy."
    )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-generator.json"
    out.write_text(json.dumps({"inputs": rows, "corpus": corpus}, indent=2))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
