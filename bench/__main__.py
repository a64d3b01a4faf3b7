"""`make bench`: kubeinformers against the official client and the raw floors, in one run.

One LocalApiServer holds N realistic pods; every contender lists them from it in a fresh
process, contenders alternated within each round, median of the rounds. Prints a table with
ratios against the targets of issue 7 and writes bench/results/<timestamp>.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.pods import realistic_pod

RESULTS = Path(__file__).resolve().parent / "results"
SYNC_CONTENDERS = (
    "kubeinformers",
    "kubeinformers-metadata",
    "official-informer",
    "client-list-v1pod",
    "raw-orjson",
)
REPLAY_CONTENDERS = ("kubeinformers-replay", "official-replay")


def child_timeout(n: int, *, trace: bool = False) -> float:
    """Seconds a child may take: 15 minutes up to 90,000 pods, 0.01 s per pod beyond;
    tracemalloc runs (several times slower) get twice as long."""
    per_pod = 0.02 if trace else 0.01
    return max(900.0, per_pod * n)


class ChildFailed(RuntimeError):
    """A contender's process failed or ran out of time."""


def run_child(
    contender: str, kubeconfig: str, n: int, *, trace: bool = False, from_rv: str = ""
) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "bench.child",
        contender,
        "--kubeconfig",
        kubeconfig,
        "--n",
        str(n),
    ]
    if trace:
        cmd.append("--trace")
    if from_rv:
        cmd += ["--from-rv", from_rv]
    env = dict(os.environ, PYTHONHASHSEED="0")
    timeout = child_timeout(n, trace=trace)
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"{contender} did not finish within {timeout:,.0f} s") from None
    if done.returncode != 0:
        raise ChildFailed(f"{contender} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = {k for r in runs for k, v in r.items() if isinstance(v, (int, float))}
    return {k: statistics.median(r[k] for r in runs if k in r) for k in sorted(keys)}


def load_pods(server: Any, n: int) -> None:
    """Create the pods in the server directly (same defaults and events as a POST, no HTTP)."""
    namespaces = sorted({realistic_pod(i)["metadata"]["namespace"] for i in range(min(n, 1000))})
    for ns in namespaces:
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for i in range(n):
        server.create(realistic_pod(i))


def modify_pods(server: Any, m: int, n: int) -> None:
    """M updates spread over the cached pods, kept in the server's event history."""
    for j in range(m):
        pod = realistic_pod(j % n)
        current = server.get("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        current["metadata"]["labels"]["revision"] = str(j)
        server.replace(current)


def fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.3f}{unit}" if abs(v) < 100 else f"{v:,.0f}{unit}"
    return f"{v}{unit}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bench")
    parser.add_argument("--big", action="store_true", help="100,000 pods instead of 10,000")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=20_000, help="watch replay events")
    parser.add_argument(
        "--no-generator",
        action="store_true",
        help="skip the generator section (bench/generator.py)",
    )
    args = parser.parse_args(argv)
    n = args.n or (100_000 if args.big else 10_000)

    from kubeinformers.testing import LocalApiServer

    print(f"kubeinformers bench: {n:,} pods, {args.runs} rounds, {args.events:,} replay events")
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalApiServer(history_size=args.events + 10) as server,
    ):
        kubeconfig = str(Path(tmp) / "kubeconfig")
        server.write_kubeconfig(kubeconfig)
        t0 = time.perf_counter()
        load_pods(server, n)
        print(f"loaded {n:,} pods in {time.perf_counter() - t0:.1f} s")
        # The server shares this process: its loaded objects are moved out of the cyclic
        # collector's reach, or a full collection (~0.2 s here) stalls a random contender.
        gc.collect()
        gc.freeze()
        # A long-running API server has every object's encodings cached (its watch cache's
        # cachingObject): one untimed list and one watch-list warm LocalApiServer's the same
        # way, so no contender pays the first serialisation for the others.
        for warm in ("raw-orjson", "kubeinformers"):
            run_child(warm, kubeconfig, n)

        rounds: dict[str, list[dict[str, Any]]] = {c: [] for c in SYNC_CONTENDERS}
        for r in range(args.runs):
            order = SYNC_CONTENDERS if r % 2 == 0 else tuple(reversed(SYNC_CONTENDERS))
            for c in order:
                rounds[c].append(run_child(c, kubeconfig, n))
                print(
                    f"  round {r + 1} {c}: {rounds[c][-1].get('sync_seconds', 0):.3f} s", flush=True
                )
        print("  tracemalloc runs", flush=True)
        traced: dict[str, dict[str, Any]] = {}
        for c in ("kubeinformers", "official-informer"):
            try:
                traced[c] = run_child(c, kubeconfig, n, trace=True)
            except ChildFailed as e:
                # Memory is then compared by RSS for both contenders (never mixed).
                print(f"  tracemalloc run skipped: {e}; memory compared by RSS", flush=True)

        from_rv = str(server.resource_version)
        modify_pods(server, args.events, n)
        print(f"  {args.events:,} updates buffered from resourceVersion {from_rv}", flush=True)
        run_child("kubeinformers-replay", kubeconfig, args.events, from_rv=from_rv)  # warm-up
        # The updates, their history and their cached encodings were made after the first
        # freeze: out of the collector's reach too, or a full collection in the server stalls
        # a random replay round.
        gc.collect()
        gc.freeze()
        replay: dict[str, list[dict[str, Any]]] = {c: [] for c in REPLAY_CONTENDERS}
        for r in range(args.runs):
            for c in REPLAY_CONTENDERS if r % 2 == 0 else tuple(reversed(REPLAY_CONTENDERS)):
                replay[c].append(run_child(c, kubeconfig, args.events, from_rv=from_rv))
                print(
                    f"  replay {r + 1} {c}: {replay[c][-1]['events_per_second']:,.0f} events/s",
                    flush=True,
                )
        imports = [run_child("import-time", kubeconfig, 1) for _ in range(args.runs)]

    med = {c: median_of(v) for c, v in rounds.items()}
    for c, t in traced.items():
        med[c]["traced_per_object"] = t.get("traced_per_object")
    rep = {c: median_of(v) for c, v in replay.items()}
    imp = median_of(imports)
    ours, official, floor = med["kubeinformers"], med["official-informer"], med["raw-orjson"]

    print()
    print(f"{'contender':<20} {'sync s':>9} {'RSS/obj':>10} {'traced/obj':>11} {'objects':>9}")
    for c in SYNC_CONTENDERS:
        m = med[c]
        print(
            f"{c:<20} {fmt(m.get('sync_seconds')):>9} {fmt(m.get('rss_per_object'), ' B'):>10} "
            f"{fmt(m.get('traced_per_object'), ' B'):>11} {fmt(int(m.get('objects', 0))):>9}"
        )
    print()
    print(f"{'replay':<20} {'events/s':>10}")
    for c in REPLAY_CONTENDERS:
        print(f"{c:<20} {fmt(rep[c].get('events_per_second')):>10}")

    # tracemalloc counts Python's allocations only (no allocator slack): the fairer figure,
    # but only when both contenders have it.
    by, by_label = (
        ("traced_per_object", "traced") if len(traced) == 2 else ("rss_per_object", "RSS")
    )
    mem_ours, mem_official = ours[by], official[by]
    targets = [
        ("sync / raw+orjson (<= 1.0)", ours["sync_seconds"] / floor["sync_seconds"], 1.0, "le"),
        ("official / ours sync (>= 8)", official["sync_seconds"] / ours["sync_seconds"], 8.0, "ge"),
        (f"bytes per cached pod, {by_label} (<= 7000)", mem_ours, 7000.0, "le"),
        ("ours / official memory (<= 0.2)", mem_ours / mem_official, 0.2, "le"),
        (
            "replay events/s (>= 15000)",
            rep["kubeinformers-replay"]["events_per_second"],
            15000.0,
            "ge",
        ),
        (
            "replay ours / official",
            rep["kubeinformers-replay"]["events_per_second"]
            / rep["official-replay"]["events_per_second"],
            None,
            "",
        ),
        ("lister get µs (<= 5)", ours.get("lister_get_us"), 5.0, "le"),
        # The target is for 10,000 pods: a list scans every cached pod, so it scales with N.
        (
            f"selector list ms (<= {10 * n / 10_000:g})",
            ours.get("lister_selector_list_ms"),
            10.0 * n / 10_000,
            "le",
        ),
        ("namespace list ms", ours.get("lister_namespace_list_ms"), None, ""),
        ("import + first informer s (<= 0.5)", imp["import_and_first_informer_seconds"], 0.5, "le"),
    ]
    print()
    print(f"{'target':<38} {'measured':>12} {'met':>5}")
    verdicts = []
    for name, value, bound, how in targets:
        met = (
            ""
            if bound is None or value is None
            else ("yes" if (value <= bound if how == "le" else value >= bound) else "NO")
        )
        verdicts.append({"target": name, "value": value, "bound": bound, "met": met})
        print(f"{name:<38} {fmt(value):>12} {met:>5}")

    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = RESULTS / f"{stamp}.json"
    out.write_text(
        json.dumps(
            {
                "n": n,
                "runs": args.runs,
                "events": args.events,
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                },
                "sync": {"median": med, "rounds": rounds, "traced": traced},
                "replay": {"median": rep, "rounds": replay},
                "import": imp,
                "targets": verdicts,
            },
            indent=2,
        )
    )
    print(f"\nwritten {out}")
    if not args.no_generator:
        from bench.generator import main as generator_bench

        generator_bench([])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
