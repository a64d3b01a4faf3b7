"""`make bench`, generator section: generation time of big CRDs and of the whole corpus, and
the import time of one kind of the biggest generated group-versions (issue 15's targets);
then, for each infrastructure provider present locally (a Crossplane provider package's
~2,000 CRDs, issue 30's targets): generation time and peak RSS, the time of a re-run on
unchanged input (and that it rewrote nothing), mypy --strict of a file that imports three
kinds of the biggest group, and the import time of one kind.

Every step runs the real CLI or a fresh interpreter, as a user would. Inputs are the largest
CRD files of ../shared/data/crds (plus any `--crd PATH`, e.g. argo's 2.8 MB Workflow CRD,
which the issue's 15 s target is about). Import time is that of
`from <package>.<group>.<version> import <Kind>` in a fresh interpreter that has already
imported pydantic and the runtime (which every program using the models pays anyway), and
the first `model_validate` of a small object after it (pydantic builds validators then).

    python -m bench.generator [--crd PATH]... [--largest 3] [--no-corpus] [--provider DIR]...

Providers are looked up in ../providers/*/package/crds (next to the repository; extract a
provider's `package/crds` there, e.g. crossplane-contrib/provider-upjet-aws's) unless
`--provider DIR` names them; the section says so in one line when there is none.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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
# issue 30's targets, for a ~2,000-CRD provider on 2 cores
PROVIDERS = REPO.parent / "providers"
PROVIDER_GENERATE_S = 60.0
PROVIDER_RSS_MB = 1024.0
PROVIDER_RERUN_S = 5.0  # "a no-op in a few seconds"
PROVIDER_MYPY_S = 15.0

# Runs a command and prints the children's peak RSS (largest process) and CPU seconds.
_MEASURED = """
import ctypes, ctypes.util, json, resource, signal, subprocess, sys, time

def die_with_parent():  # the measured command ends when this wrapper ends, however it ends
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass

die_with_parent()
t0 = time.perf_counter()
code = subprocess.run(sys.argv[1:], preexec_fn=die_with_parent).returncode
wall = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall_s": wall, "cpu_s": r.ru_utime + r.ru_stime,
                  "rss_mb": r.ru_maxrss / 1024}))
"""

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
            api_version = f"{resource.group}/{resource.version}"
            if best is None or size > best[0]:
                best = (size, module, cls, api_version)
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


def measured(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall and CPU seconds and peak RSS of `cmd` (its output is discarded)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *cmd],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def providers(given: list[Path]) -> list[Path]:
    if given:
        return given
    if not PROVIDERS.is_dir():
        return []
    return sorted(p for p in PROVIDERS.glob("*/package/crds") if p.is_dir())


def _mtimes(root: Path) -> dict[str, int]:
    return {
        str(p): p.stat().st_mtime_ns for p in root.rglob("*.py") if "__pycache__" not in p.parts
    }


def usage_kinds(out: Path, package: str, count: int = 3) -> list[tuple[str, str]]:
    """(module, class) of `count` kinds of the group-version with the most kinds."""
    registry = (out / package / "registry.py").read_text()
    paths = sorted(set(re.findall(rf'"({re.escape(package)}\.[\w.]+):(\w+)"', registry)))
    by_gv: dict[str, list[tuple[str, str]]] = {}
    for module, cls in paths:
        by_gv.setdefault(module.rsplit(".", 1)[0], []).append((module, cls))
    biggest = max(sorted(by_gv), key=lambda gv: len(by_gv[gv]))
    return by_gv[biggest][:count]


USAGE = """\
from __future__ import annotations

{imports}


def names(objects: list[{first}]) -> list[str]:
    return [o.metadata.name or "" for o in objects if o.metadata is not None]


def parse(data: dict[str, object]) -> {first}:
    return {first}.model_validate(data)
"""


def mypy_time(out: Path, package: str, work: Path) -> dict[str, Any]:
    """mypy --strict, cold (a fresh cache), of a file importing three kinds of the biggest
    group-version: what a user (or an IDE) pays to type-check code using the provider."""
    kinds = usage_kinds(out, package)
    aliases = [f"K{i}" for i in range(len(kinds))]
    imports = "\n".join(
        f"from {m} import {c} as {a}" for (m, c), a in zip(kinds, aliases, strict=True)
    )
    usage = work / "usage_provider.py"
    usage.write_text(USAGE.format(imports=imports, first=aliases[0]))
    cache = work / "mypy-cache"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(usage)]
    t0 = time.perf_counter()
    done = subprocess.run(
        cmd,
        cwd=work,
        env=dict(os.environ, MYPYPATH=str(out), PYTHONPATH=f"{out}{os.pathsep}{REPO}"),
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "ok": done.returncode == 0,
        "output": done.stdout[-2000:],
        "kinds": [f"{m}.{c}" for m, c in kinds],
    }


def provider_bench(crds: Path, tmp: Path, index: int) -> dict[str, Any]:
    package = f"bench_provider_{index}"
    out = tmp / package
    cache = tmp / "xdg-cache"
    cmd = [sys.executable, "-m", "kubeinformers.generator", "generate", "-q", "--crd", str(crds)]
    cmd += ["--out", str(out), "--package", package]
    env = {"XDG_CACHE_HOME": str(cache)}
    first = measured(cmd, env)
    if first["code"] != 0:
        raise RuntimeError(f"generating {crds} failed (exit {first['code']})")
    before = _mtimes(out)
    rerun = measured(cmd, env)
    rewritten = sum(1 for p, m in _mtimes(out).items() if before.get(p) != m)
    typing = mypy_time(tmp, package, tmp)
    imp = import_time(tmp, package)
    return {
        "input": str(crds),
        "crds": len([p for p in crds.rglob("*") if p.suffix in (".yaml", ".yml")]),
        "bytes_in": sum(p.stat().st_size for p in crds.rglob("*") if p.is_file()),
        "generate": first,
        "rerun": {**rerun, "rewritten": rewritten},
        "files": len(before),
        "mypy": typing,
        "import": imp,
        "load": os.getloadavg(),
    }


PROVIDER_COLUMNS = (
    f"{'provider':<12} {'CRDs':>5} {'MB in':>5} {'files':>5} {'load':>5} "
    f"{'generate (CPU)':>17} {'<=':>3} {'peak RSS':>8} {'<=':>3} {'re-run (rewritten)':>18} {'<=':>3} "
    f"{'mypy 3 kinds':>12} {'<=':>3} {'import 1 kind':>13} {'<=':>3}"
)


def provider_name(crds: Path) -> str:
    """`aws` for ../providers/aws/package/crds; else the folder's own name."""
    parts = crds.resolve().parts
    if len(parts) >= 3 and parts[-2:] == ("package", "crds"):
        return parts[-3]
    return crds.name


def print_provider(row: dict[str, Any]) -> None:
    """One row per provider, each measure beside its target's verdict (PROVIDER_COLUMNS)."""
    gen, rerun, typing, imp = row["generate"], row["rerun"], row["mypy"], row["import"]
    rerun_value = rerun["wall_s"] + (1e9 if rerun["rewritten"] else 0)
    mypy_value = typing["seconds"] + (0 if typing["ok"] else 1e9)
    print(
        f"{provider_name(Path(row['input']))[:12]:<12} {row['crds']:>5} "
        f"{row['bytes_in'] / 1e6:>5.0f} {row['files']:>5} {row['load'][0]:>5.1f} "
        f"{gen['wall_s']:>7.1f} s ({gen['cpu_s']:>4.0f} s) "
        f"{_verdict(gen['wall_s'], PROVIDER_GENERATE_S):>3} "
        f"{gen['rss_mb']:>5.0f} MB {_verdict(gen['rss_mb'], PROVIDER_RSS_MB):>3} "
        f"{rerun['wall_s']:>9.1f} s ({rerun['rewritten']:>4}) "
        f"{_verdict(rerun_value, PROVIDER_RERUN_S):>3} "
        f"{typing['seconds']:>9.1f} s{'' if typing['ok'] else '!'} "
        f"{_verdict(mypy_value, PROVIDER_MYPY_S):>3} "
        + (
            f"{imp['import_s']:>11.3f} s {_verdict(imp['import_s'], IMPORT_ONE_KIND_S):>3}"
            if imp is not None
            else f"{'-':>13} {'':>3}"
        )
    )
    if not typing["ok"]:
        print(f"  ! mypy failed on {', '.join(typing['kinds'])}:\n{typing['output']}")


def _verdict(value: float, bound: float) -> str:
    return "yes" if value <= bound else "NO"


def _crd_section(
    inputs: list[Path], no_corpus: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Issue 15's rows: each big CRD file, then the whole corpus."""
    print("\ngenerator bench (issue 15): one CRD file per run; fresh interpreters")
    rows: list[dict[str, Any]] = []
    corpus: dict[str, Any] | None = None
    if not inputs and not CORPUS.is_dir():
        print(f"no inputs: {CORPUS} is absent and no --crd was given")
        return rows, corpus
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
        if not no_corpus and CORPUS.is_dir():
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
    return rows, corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generator")
    parser.add_argument("--crd", action="append", type=Path, default=[], metavar="PATH")
    parser.add_argument("--largest", type=int, default=3, help="largest corpus CRDs to time")
    parser.add_argument("--no-corpus", action="store_true", help="skip the whole-corpus run")
    parser.add_argument(
        "--provider",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help=f"a provider's CRD folder (default: {PROVIDERS}/*/package/crds)",
    )
    parser.add_argument("--no-providers", action="store_true", help="skip the providers")
    args = parser.parse_args(argv)

    inputs = [*args.crd, *largest_crds(args.largest)]
    rows: list[dict[str, Any]] = []
    corpus: dict[str, Any] | None = None
    if inputs or not args.no_corpus:
        rows, corpus = _crd_section(inputs, args.no_corpus)
    provider_rows: list[dict[str, Any]] = []
    found = [] if args.no_providers else providers(args.provider)
    if args.no_providers:
        pass
    elif not found:
        print(f"providers: none at {PROVIDERS}/*/package/crds (and no --provider): skipped")
    else:
        print("\ngenerator at a provider's scale (issue 30): fresh interpreters, cold mypy cache")
        print(PROVIDER_COLUMNS)
        for i, crds in enumerate(found):
            with tempfile.TemporaryDirectory() as tmp:
                row = provider_bench(crds, Path(tmp), i)
            provider_rows.append(row)
            print_provider(row)
        print(
            f"targets: generate <= {PROVIDER_GENERATE_S:.0f} s, peak RSS <= "
            f"{PROVIDER_RSS_MB:.0f} MB, a re-run on unchanged input <= {PROVIDER_RERUN_S:.0f} s "
            f"rewriting nothing, mypy --strict (cold) of a file importing 3 kinds <= "
            f"{PROVIDER_MYPY_S:.0f} s, import of one kind <= {IMPORT_ONE_KIND_S} s. Timings on "
            f"a shared machine are noisy: compare CPU seconds and the load (1 min, "
            f"{os.cpu_count()} CPUs)."
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-generator.json"
    out.write_text(
        json.dumps({"inputs": rows, "corpus": corpus, "providers": provider_rows}, indent=2)
    )
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
