"""`make bench`: kubeinformers beside client-go and the official client, on one server, one run.

By default the server is a real kube-apiserver + etcd (kubeinformers.testing.RealApiServer)
when its binaries are found, else LocalApiServer (`--server local` asks for it); the report
names which. N realistic pods are loaded into one namespace once and shared by every
contender. Each measurement runs in a fresh process, contenders alternated within a round
(forward, then reversed), median of the rounds with [min-max]. Ratios against client-go (its
default watch-list and its LIST+WATCH, via the client-go probe) and the official client are
printed and written to bench/results/<timestamp>.json with the machine and the method.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.measure import machine, peak_rss_bytes
from bench.report import METHOD, print_report, verdicts
from bench.servers import NAMESPACE, BenchServer, open_server, real_server_available

RESULTS = Path(__file__).resolve().parent / "results"
WATCH_LIST_GATE = "KUBE_FEATURE_WatchListClient"
# client-go's WaitForCacheSync polls every 100 ms: the probe's sync times are rounded up to it.
PROBE_POLL_SECONDS = 0.1


@dataclass(frozen=True)
class Contender:
    """One line of the report: a `bench.child` contender (or the client-go probe) in an env."""

    name: str
    label: str
    child: str | None  # bench.child contender; None runs the client-go probe
    watch_list: bool = True  # KUBE_FEATURE_WatchListClient for this contender's process
    real_only: bool = False  # needs a real server (protobuf)
    extra_env: dict[str, str] = field(default_factory=dict)
    tree: str | None = None  # run bench.child from this tree's code (--baseline), not ours


SYNC = (
    Contender("kubeinformers", "kubeinformers default (lazy, watch-list)", "kubeinformers"),
    Contender(
        "kubeinformers-listwatch", "kubeinformers LIST+WATCH", "kubeinformers", watch_list=False
    ),
    Contender("kubeinformers-json", "kubeinformers lazy over JSON", "kubeinformers-json"),
    Contender(
        "kubeinformers-json-listwatch",
        "kubeinformers lazy over JSON, LIST+WATCH",
        "kubeinformers-json",
        watch_list=False,
    ),
    Contender("kubeinformers-eager", 'kubeinformers decode="eager"', "kubeinformers-eager"),
    Contender(
        "kubeinformers-eager-listwatch",
        'kubeinformers decode="eager", LIST+WATCH',
        "kubeinformers-eager",
        watch_list=False,
    ),
    Contender(
        "kubeinformers-compact",
        'kubeinformers cache_compression="zlib"',
        "kubeinformers-compact",
    ),
    Contender("kubeinformers-metadata", "kubeinformers metadata-only", "kubeinformers-metadata"),
    Contender("official-informer", "official kubernetes SharedInformer", "official-informer"),
    Contender("client-go", "client-go watch-list (its default)", None),
    Contender("client-go-listwatch", "client-go LIST+WATCH", None, watch_list=False),
    Contender("raw-orjson", "floor: one GET (gzip) + orjson.loads", "raw-orjson"),
    Contender(
        "watch-list-json-bytes", "floor: watch-list JSON bytes, no decode", "watch-list-json-bytes"
    ),
    Contender(
        "watch-list-protobuf-bytes",
        "floor: watch-list protobuf bytes (client-go's)",
        "watch-list-protobuf-bytes",
        real_only=True,
    ),
)
# Issue 26: what a controller experiences, the sync and then a reconcile's read of every pod.
READ = (
    Contender(
        "kubeinformers-read",
        "kubeinformers default, then every pod read",
        "kubeinformers-read",
    ),
    Contender(
        "kubeinformers-json-read",
        "kubeinformers lazy over JSON, then read",
        "kubeinformers-json-read",
    ),
    Contender(
        "kubeinformers-eager-read",
        'kubeinformers decode="eager", then read',
        "kubeinformers-eager-read",
    ),
    Contender(
        "pydantic-floor",
        "FLOOR: pydantic validating only what is read",
        "pydantic-floor",
    ),
)
# `--baseline DIR`: the same rows run from another tree's code (an export of main, say), as
# extra contenders in the same rounds: before/after ratios measured side by side.
BASELINE_READ = ("kubeinformers-read", "kubeinformers-json-read")
REPLAY = (
    Contender(
        "kubeinformers-replay", "kubeinformers informer (whole pipeline)", "kubeinformers-replay"
    ),
    Contender("kubeinformers-watch", "kubeinformers watch only (decode)", "kubeinformers-watch"),
    Contender(
        "kubeinformers-watch-json",
        "kubeinformers watch only over JSON (decode)",
        "kubeinformers-watch-json",
    ),
    Contender("official-replay", "official Watch.stream (decode)", "official-replay"),
    Contender("client-go-replay", "client-go Watch ResultChan (decode)", None),
)
TRACED = ("kubeinformers", "kubeinformers-listwatch", "kubeinformers-compact", "official-informer")


def baseline_contenders(tree: str) -> tuple[Contender, ...]:
    """The read rows run from the code in `tree`, named `base-...`, labelled 'before'."""
    path = str(Path(tree).resolve())
    return tuple(
        Contender(
            "base-" + c.name.removeprefix("kubeinformers-"),
            "BEFORE: " + c.label.removeprefix("kubeinformers "),
            c.child,
            tree=path,
        )
        for c in READ
        if c.name in BASELINE_READ
    )


def child_timeout(n: int, *, trace: bool = False) -> float:
    """Seconds a child may take: 15 minutes up to 90,000 pods, 0.01 s per pod beyond;
    tracemalloc runs (several times slower) get twice as long."""
    per_pod = 0.02 if trace else 0.01
    return max(900.0, per_pod * n)


class ChildFailed(RuntimeError):
    """A contender's process failed or ran out of time."""


def _env(c: Contender) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0", **c.extra_env)
    env.pop(WATCH_LIST_GATE, None)
    if not c.watch_list:
        env[WATCH_LIST_GATE] = "false"
    return env


def run_child(
    c: Contender, server: BenchServer, n: int, *, trace: bool = False, from_rv: str = ""
) -> dict[str, Any]:
    if c.child is None:
        return run_probe(c, server, n, from_rv=from_rv)
    cmd = [sys.executable, "-m", "bench.child", c.child, "--kubeconfig", server.kubeconfig]
    env = _env(c)
    if c.tree is not None:
        env["PYTHONPATH"] = c.tree
    cmd += ["--n", str(n), "--namespace", NAMESPACE]
    if trace:
        cmd.append("--trace")
    if from_rv:
        cmd += ["--from-rv", from_rv]
    timeout = child_timeout(n, trace=trace)
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=env,
            cwd=c.tree,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"{c.name} did not finish within {timeout:,.0f} s") from None
    if done.returncode != 0:
        raise ChildFailed(f"{c.name} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run_probe(c: Contender, server: BenchServer, n: int, *, from_rv: str = "") -> dict[str, Any]:
    """The client-go probe; its peak RSS is sampled from /proc while it runs (VmHWM)."""
    if server.probe is None:
        raise ChildFailed("the client-go probe is not available")
    cmd = [str(server.probe), "-kubeconfig", server.kubeconfig, "-namespace", NAMESPACE]
    cmd += ["-n", str(n)]
    if from_rv:
        cmd += ["-replay-from", from_rv]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(c)
    )
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.005):
            hwm = peak_rss_bytes(proc.pid)
            if hwm:
                peak[0] = max(peak[0], hwm)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # The children's CPU time grows by exactly this probe's once it is waited for (the
    # bench's other children have all ended, the servers' processes have not).
    cpu_before = _children_cpu()
    try:
        out, err = proc.communicate(timeout=child_timeout(n))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise ChildFailed(f"{c.name} did not finish") from None
    finally:
        stop.set()
        sampler.join()
    if proc.returncode != 0:
        raise ChildFailed(f"{c.name} failed:\n{err[-4000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["cpu_seconds"] = _children_cpu() - cpu_before  # the whole process, start-up included
    if not from_rv:
        after = result["rss_per_object"] * n
        result["rss_after_over_baseline"] = after
        if peak[0]:
            baseline = result["rss_bytes"] - after
            result["peak_rss_over_baseline"] = peak[0] - baseline
        result["sync_rounded_up_to_seconds"] = PROBE_POLL_SECONDS
    return result


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = {k for r in runs for k, v in r.items() if isinstance(v, (int, float))}
    return {k: statistics.median(r[k] for r in runs if k in r) for k in sorted(keys)}


def spread_of(runs: list[dict[str, Any]], key: str) -> list[float] | None:
    values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
    return [min(values), max(values)] if values else None


def run_rounds(
    contenders: tuple[Contender, ...],
    server: BenchServer,
    n: int,
    rounds: int,
    *,
    from_rv: str = "",
    metric: str,
) -> dict[str, list[dict[str, Any]]]:
    """Each contender once per round, in a fresh process; the order reversed every other round."""
    runs: dict[str, list[dict[str, Any]]] = {c.name: [] for c in contenders}
    for r in range(rounds):
        for c in contenders if r % 2 == 0 else tuple(reversed(contenders)):
            server.collect_garbage()  # none pays for the garbage of the ones before it
            server_cpu = server.server_cpu_seconds()
            try:
                result = run_child(c, server, n, from_rv=from_rv)
                after = server.server_cpu_seconds()
                if server_cpu is not None and after is not None:
                    result["server_cpu_seconds"] = after - server_cpu
                runs[c.name].append(result)
            except ChildFailed as e:
                # what failed and its last line (the exception a child's traceback ends with)
                lines = [line for line in str(e).splitlines() if line.strip()]
                why = " ".join(lines[:1] + lines[-1:] if len(lines) > 1 else lines)
                print(f"  round {r + 1} {c.name}: FAILED ({why})", flush=True)
                continue
            value = runs[c.name][-1].get(metric, 0.0)
            print(f"  round {r + 1} {c.name}: {metric} {value:,.3f}", flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bench")
    parser.add_argument(
        "--server",
        choices=("real", "local"),
        default=None,
        help="real kube-apiserver + etcd (default when its binaries are found) or LocalApiServer",
    )
    parser.add_argument("--pods", type=int, default=None, help="pods to sync (default 10,000)")
    parser.add_argument("--big", action="store_true", help="100,000 pods (same as --pods 100000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=5_000, help="watch replay events")
    parser.add_argument(
        "--only",
        choices=("all", "read"),
        default="all",
        help="read: only the sync + reconcile read rows beside client-go (issue 26)",
    )
    parser.add_argument(
        "--no-generator",
        action="store_true",
        help="skip the generator section (bench/generator.py)",
    )
    parser.add_argument(
        "--provider",
        action="append",
        default=[],
        metavar="DIR",
        help="a provider's CRD folder for the generator section, one row each "
        "(default: ../providers/*/package/crds)",
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        default=None,
        help="also run the read rows from the code in DIR (e.g. `git archive main | tar -x -C "
        "DIR`), as 'before' contenders in the same rounds",
    )
    args = parser.parse_args(argv)
    n = args.pods or (100_000 if args.big else 10_000)
    kind = args.server or ("real" if real_server_available() else "local")
    if args.server is None and kind == "local":
        print("no kube-apiserver/etcd binaries found: measuring against LocalApiServer")

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = os.getloadavg()
    server = open_server(kind, history_size=args.events + 10)
    try:
        print(f"kubeinformers bench on {server.label}")
        print(
            f"{n:,} pods in namespace {NAMESPACE!r}, {args.rounds} rounds, "
            f"{args.events:,} replay events",
            flush=True,
        )
        t0 = time.perf_counter()
        server.load_pods(n)
        load_seconds = time.perf_counter() - t0
        print(f"loaded {n:,} pods in {load_seconds:.1f} s", flush=True)
        only_read = args.only == "read"
        sync = tuple(
            c
            for c in (
                (*SYNC, *READ)
                if not only_read
                else (*READ, *(c for c in SYNC if c.name == "client-go"))
            )
            if (c.child is not None or server.probe is not None)
            and (kind == "real" or not c.real_only)
        )
        if args.baseline:
            sync += baseline_contenders(args.baseline)
        replay = tuple(c for c in REPLAY if c.child is not None or server.probe is not None)
        if server.probe is None:
            print("the client-go probe is not available: no client-go contenders", flush=True)
        # Untimed warm-up of both request paths (a long-running server has served them).
        for warm in ("raw-orjson", "kubeinformers", "kubeinformers-listwatch"):
            run_child(next(c for c in SYNC if c.name == warm), server, n)

        rounds = run_rounds(sync, server, n, args.rounds, metric="sync_seconds")
        traced: dict[str, dict[str, Any]] = {}
        replays: dict[str, list[dict[str, Any]]] = {}
        imports: list[dict[str, Any]] = []
        if only_read:
            return _finish(args, kind, server, n, started, load_before, load_seconds, rounds)
        print("  tracemalloc runs", flush=True)
        for name in TRACED:
            try:
                traced[name] = run_child(
                    next(c for c in SYNC if c.name == name), server, n, trace=True
                )
            except ChildFailed as e:
                print(f"  tracemalloc run of {name} skipped: {str(e).splitlines()[0]}")

        from_rv = server.buffer_updates(args.events, n)
        print(f"  {args.events:,} updates buffered after resourceVersion {from_rv}", flush=True)
        run_child(REPLAY[0], server, args.events, from_rv=from_rv)  # warm-up
        replays = run_rounds(
            replay, server, args.events, args.rounds, from_rv=from_rv, metric="events_per_second"
        )
        import_child = Contender("import-time", "import", "import-time")
        imports = [run_child(import_child, server, 1) for _ in range(args.rounds)]
    finally:
        server.close()
    return _finish(
        args, kind, server, n, started, load_before, load_seconds, rounds, traced, replays, imports
    )


def _finish(
    args: argparse.Namespace,
    kind: str,
    server: BenchServer,
    n: int,
    started: str,
    load_before: tuple[float, float, float],
    load_seconds: float,
    rounds: dict[str, list[dict[str, Any]]],
    traced: dict[str, dict[str, Any]] | None = None,
    replays: dict[str, list[dict[str, Any]]] | None = None,
    imports: list[dict[str, Any]] | None = None,
) -> int:
    traced, replays, imports = traced or {}, replays or {}, imports or []
    med = {c: median_of(v) for c, v in rounds.items() if v}
    for c, t in traced.items():
        for key in ("traced_per_object", "traced_peak_over_after"):
            med[c][key] = t.get(key)
    spread = {
        c: {
            k: spread_of(v, k)
            for k in (
                "sync_seconds",
                "cpu_seconds",
                "rss_per_object",
                "sync_and_read_seconds",
                "rss_per_object_after_reconcile",
                "rss_per_object_after_full_read",
            )
        }
        for c, v in rounds.items()
    }
    rep = {c: median_of(v) for c, v in replays.items() if v}
    rep_spread = {c: spread_of(v, "events_per_second") for c, v in replays.items()}
    imp = median_of(imports) if imports else {}
    result: dict[str, Any] = {
        "started": started,
        "server": {"kind": kind, "label": server.label},
        "n": n,
        "namespace": NAMESPACE,
        "rounds": args.rounds,
        "events": args.events,
        "load_seconds": load_seconds,
        "machine": machine() | {"loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "method": METHOD,
        "labels": {
            c.name: c.label
            for c in SYNC
            + READ
            + REPLAY
            + (baseline_contenders(args.baseline) if args.baseline else ())
        },
        "client_go_sync_rounded_up_to_seconds": PROBE_POLL_SECONDS,
        "sync": {"median": med, "min_max": spread, "rounds": rounds, "traced": traced},
        "replay": {"median": rep, "min_max": rep_spread, "rounds": replays},
        "import": imp,
    }
    result["targets"] = verdicts(result)
    print_report(result)

    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = RESULTS / f"{stamp}-{kind}.json"
    out.write_text(json.dumps(result, indent=2))
    print(f"\nwritten {out}")
    if not args.no_generator and args.only == "all":
        from bench.generator import main as generator_bench

        generator_bench([arg for d in args.provider for arg in ("--provider", d)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
