"""`python -m bench.shards`: per-replica memory and sync time of sharded informers (issue 29).

N pods are loaded into a real kube-apiserver (with the ShardedListAndWatch gate unless
`--gate off`); then, for each replica count R of `--replicas`, each of the R static shards
(`Shard.static(i, R)`) is synced by a pod informer in a fresh process, one replica at a time
(as replicas on their own nodes: no CPU shared between them). Each prints one JSON line:
objects cached, sync seconds, its baseline RSS (after the imports and the informer's
construction: what every replica pays), the RSS the sync added over it, and who filtered
("server" or "client"). The report gives, per R, the median over its replicas, the ratio to
R = 1, and RSS and CPU seconds fitted as `fixed + shared / R` (least squares). With the gate,
a replica's memory and sync time should be about 1/R of one replica's plus a fixed part;
without it (client filtering), memory still shrinks but every replica receives and decodes
the identity of every pod.

With more than one replica, each then moves its informer to the next shard
(`factory.set_shard(Shard.static(index + 1, R))`, rule N8) and measures how long until its
cache holds it (`move s`: the relist, the departed objects dropped, the new ones added), next
to its first sync.

`--layouts ring` measures replicas of a shard ring over Leases instead (run together, as a
ring needs its members live at once); `--layouts static,ring` measures both on one server,
loaded once (loading 100,000 pods takes minutes). The result, with the load average before
and after each layout, is written to bench/results/<timestamp>-shards.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.measure import MemoryProbe, machine, stopwatch
from bench.servers import NAMESPACE, RealBenchServer, real_server_available

GATE = "--feature-gates=ShardedListAndWatch=true"
RESULTS = Path(__file__).resolve().parent / "results"
LAYOUTS = ("static", "ring")
# Seconds one replica may take to sync (and to move): 100,000 pods take about a minute
# alone; several replicas at once on two shared cores, and a neighbour's load, several.
SYNC_TIMEOUT = 900.0


def measure_sync(factory: Any, informer: Any) -> dict[str, Any]:
    """Start `factory` and wait for its caches; what the sync cost: objects cached, wall and
    CPU seconds, who filtered, and RSS over the baseline taken after the informer was built
    (the baseline itself, `rss_baseline`: the interpreter, the imports, the client and the
    informer, is every replica's fixed cost)."""
    probe = MemoryProbe(trace=False)
    probe.start()
    with stopwatch() as synced:
        factory.start()
        factory.wait_for_cache_sync_or_raise(timeout=SYNC_TIMEOUT)
    objects = len(informer.get_store().list_keys())
    result: dict[str, Any] = {
        "objects": objects,
        "sync_seconds": synced[0],
        "cpu_seconds": synced[1],
        "filter": informer.health().shard_filter,
        "rss_baseline": float(probe.rss_before),
    }
    return result | probe.per_object(objects)


def replica(kubeconfig: str, index: int, total: int, namespace: str) -> dict[str, Any]:
    """One replica: a pod informer of shard `index` of `total`, synced and measured."""
    from kubernetes import config

    from kubeinformers import Shard
    from kubeinformers.generated.informers import SharedInformerFactory

    api = config.new_client_from_config(config_file=kubeconfig)
    factory = SharedInformerFactory(api, namespace=namespace, shard=Shard.static(index, total))
    informer = factory.core().v1().pods().informer()
    result: dict[str, Any] = {"index": index, "total": total} | measure_sync(factory, informer)
    if total > 1:
        with stopwatch() as moved:
            factory.set_shard(Shard.static((index + 1) % total, total))
            factory.wait_for_cache_sync_or_raise(timeout=SYNC_TIMEOUT)
        result |= {
            "move_seconds": moved[0],
            "move_cpu_seconds": moved[1],
            "left_shard": informer.metrics().left_shard,
        }
    factory.shutdown()
    return result


def ring_replica(kubeconfig: str, identity: str, members: int, ring_name: str) -> None:
    """One replica of a shard ring of `members`: once the ring has settled, a pod informer of
    the shard it holds, synced and measured (one JSON line); then it stays in the ring until
    its stdin closes, so that the others' shards do not change while they measure."""
    import threading

    from kubernetes import config

    from kubeinformers import ShardRing
    from kubeinformers.generated.informers import SharedInformerFactory

    api = config.new_client_from_config(config_file=kubeconfig)
    ring = ShardRing(
        api,
        ring_name,
        identity,
        namespace=NAMESPACE,
        lease_duration=10.0,
        renew_deadline=8.0,
        retry_period=0.5,
    )
    stop = threading.Event()
    thread = threading.Thread(target=ring.run, args=(stop,), name="ring")
    thread.start()
    try:
        while not (ring.health().healthy and len(ring.health().members) == members):
            if stop.wait(0.1):  # the ring settling: every member sees all, holds its share
                return
        factory = SharedInformerFactory(api, namespace=NAMESPACE, shard=ring.shard())
        informer = factory.core().v1().pods().informer()
        result: dict[str, Any] = {
            "identity": identity,
            "total": members,
            "buckets": ring.health().held_buckets,
        } | measure_sync(factory, informer)
        print(json.dumps(result), flush=True)
        sys.stdin.read()  # until the bench has every replica's line
        factory.shutdown()
    finally:
        stop.set()
        thread.join()


def run_ring(kubeconfig: str, total: int) -> list[dict[str, Any]]:
    """`total` ring replicas at once (a ring needs its members running together)."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.shards",
                "ring-replica",
                "--kubeconfig",
                kubeconfig,
                "--identity",
                f"replica-{i}",
                "--members",
                str(total),
                "--ring",
                f"bench-{total}",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.getcwd()},
        )
        for i in range(total)
    ]
    try:
        results = []
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"a ring replica ended without a result ({proc.wait()})")
            results.append(json.loads(line))
        return results
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run_replica(kubeconfig: str, index: int, total: int) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.shards",
            "replica",
            "--kubeconfig",
            kubeconfig,
            "--index",
            str(index),
            "--total",
            str(total),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        timeout=2 * SYNC_TIMEOUT + 120,  # a sync and a move
    )
    line: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return line


def summarize(total: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of the report: the median over the replicas of one replica count."""
    return {
        "replicas": total,
        "filter": sorted({r["filter"] for r in results}),
        "objects": statistics.median(r["objects"] for r in results),
        "rss_mb": statistics.median(r["rss_after_over_baseline"] for r in results) / 2**20,
        "baseline_mb": statistics.median(r["rss_baseline"] for r in results) / 2**20,
        "peak_mb": statistics.median(r.get("peak_rss_over_baseline", 0) for r in results) / 2**20,
        "sync_s": statistics.median(r["sync_seconds"] for r in results),
        "cpu_s": statistics.median(r["cpu_seconds"] for r in results),
        "move_s": statistics.median(r.get("move_seconds", 0.0) for r in results),
    }


def fixed_and_shared(rows: list[dict[str, Any]], key: str) -> dict[str, float] | None:
    """`key` per replica fitted as fixed + shared / R by least squares over the replica counts
    (None with fewer than two counts): the part every replica pays whatever its shard, and the
    part split among the replicas."""
    points = [(1 / r["replicas"], r[key]) for r in rows]
    if len({x for x, _ in points}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return {"fixed": my - slope * mx, "shared": slope}


def print_layout(pods: int, gate: str, layout: str, rows: list[dict[str, Any]]) -> None:
    base = rows[0]
    kind = "ring replicas, run together" if layout == "ring" else "static shards, one at a time"
    print(f"{pods} pods, gate {gate}, {kind}; per replica, median:")
    print(
        "replicas filter  objects  RSS MB (x of 1)  peak MB  base MB  sync s (x of 1)  cpu s  "
        "move s (x of its sync)"
    )
    for r in rows:
        move = (
            f"{r['move_s']:>7.2f} ({r['move_s'] / r['sync_s']:.2f})"
            if r["replicas"] > 1 and r["move_s"]
            else "      -"
        )
        print(
            f"{r['replicas']:>8} {','.join(r['filter']):<7} {r['objects']:>8.0f} "
            f"{r['rss_mb']:>7.1f} ({r['rss_mb'] / base['rss_mb']:.2f}) {r['peak_mb']:>8.1f} "
            f"{r['baseline_mb']:>8.1f} "
            f"{r['sync_s']:>7.2f} ({r['sync_s'] / base['sync_s']:.2f}) {r['cpu_s']:>7.2f}  " + move
        )
    for key, unit in (("rss_mb", "MB"), ("cpu_s", "CPU s")):
        fit = fixed_and_shared(rows, key)
        if fit is not None:
            print(
                f"  {key}: fixed {fit['fixed']:.2f} {unit} + {fit['shared']:.2f} {unit} / replicas"
                + (f" (+ the process's {base['baseline_mb']:.1f} MB)" if key == "rss_mb" else "")
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.shards")
    sub = parser.add_subparsers(dest="command")
    one = sub.add_parser("replica", help="(internal) one replica's measurement")
    one.add_argument("--kubeconfig", required=True)
    one.add_argument("--index", type=int, required=True)
    one.add_argument("--total", type=int, required=True)
    member = sub.add_parser("ring-replica", help="(internal) one ring replica's measurement")
    member.add_argument("--kubeconfig", required=True)
    member.add_argument("--identity", required=True)
    member.add_argument("--members", type=int, required=True)
    member.add_argument("--ring", required=True)
    parser.add_argument(
        "--layouts",
        default="static",
        help="static (shards synced one at a time), ring (replicas of a shard ring over Leases, "
        "run together) or both, comma-separated: measured one after the other on one server",
    )
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--replicas", default="1,2,4")
    parser.add_argument("--gate", choices=["on", "off"], default="on")
    args = parser.parse_args(argv)
    if args.command == "replica":
        result = replica(args.kubeconfig, args.index, args.total, NAMESPACE)
        print(json.dumps(result))
        return
    if args.command == "ring-replica":
        ring_replica(args.kubeconfig, args.identity, args.members, args.ring)
        return
    layouts = args.layouts.split(",")
    if not set(layouts) <= set(LAYOUTS):
        parser.error(f"--layouts: a comma-separated list of {', '.join(LAYOUTS)}")
    if not real_server_available():
        sys.exit(
            "bench.shards needs a real kube-apiserver (../shared/realk8s or KUBEBUILDER_ASSETS)"
        )
    counts = [int(r) for r in args.replicas.split(",")]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = os.getloadavg()
    server = RealBenchServer(extra_apiserver_args=(GATE,) if args.gate == "on" else ())
    measured: dict[str, Any] = {}
    try:
        print(f"loading {args.pods} pods into {server.label}, gate {args.gate} ...", flush=True)
        t0 = time.perf_counter()
        server.load_pods(args.pods)
        load_seconds = time.perf_counter() - t0
        print(f"loaded in {load_seconds:.0f} s", flush=True)
        for layout in layouts:
            before = os.getloadavg()
            rows, replicas = [], []
            for total in counts:
                if layout == "ring":
                    results = run_ring(server.kubeconfig, total)
                else:
                    results = [run_replica(server.kubeconfig, i, total) for i in range(total)]
                assert sum(r["objects"] for r in results) == args.pods, results
                rows.append(summarize(total, results))
                replicas.append(results)
            measured[layout] = {
                "loadavg_before": before,
                "loadavg_after": os.getloadavg(),
                "rows": rows,
                "fit": {k: fixed_and_shared(rows, k) for k in ("rss_mb", "cpu_s")},
                "replicas": replicas,
            }
            print_layout(args.pods, args.gate, layout, rows)
            print(
                "  load average (1, 5, 15 min) before "
                + ", ".join(f"{v:.2f}" for v in before)
                + "; after "
                + ", ".join(f"{v:.2f}" for v in measured[layout]["loadavg_after"]),
                flush=True,
            )
        label = server.label
    finally:
        server.close()
    result = {
        "started": started,
        "server": {"kind": "real", "label": label},
        "n": args.pods,
        "gate": args.gate,
        "namespace": NAMESPACE,
        "load_seconds": load_seconds,
        "machine": machine() | {"loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "method": __doc__,
        "layouts": measured,
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-shards.json"
    out.write_text(json.dumps(result, indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
