"""One replica of a sharded controller in a shard ring, as a process, for the ring's
multi-process tests (tests/e2e/test_ring_real.py) and `make bench-shards`.

    python -m tests.e2e.ring_replica --kubeconfig K --namespace NS --ring R --identity I \
        --out DIR [--lease 2 --renew 1.5 --retry 0.3 --requeue 3]

It joins ring R, caches the ConfigMaps of NS in its shard (a factory following the ring) and
runs a reconcile loop over them (admitting only the held buckets' keys). Every reconcile
appends `S <identity> <key> <monotonic ns>` at its start and `E ...` at its end to
DIR/<identity>.log (CLOCK_MONOTONIC: one clock for every process of the machine) and asks to
look at the key again after --requeue seconds, so every key is reconciled again and again.
DIR/<identity>.json is rewritten every 0.2 s with what the test waits on: the shard held,
the objects cached, the ring's and the informer's health. SIGTERM ends it cleanly (drain,
leave the ring); it dies with its parent (PR_SET_PDEATHSIG) if the test is killed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes import config

from kubeinformers.generated.core.v1.models import ConfigMap
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.reconcile.loop import ReconcileLoop
from kubeinformers.runtime.ring.ring import ShardRing

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    die_with_parent()
    p = argparse.ArgumentParser()
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--ring", required=True)
    p.add_argument("--identity", required=True)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--lease", type=float, default=2.0)
    p.add_argument("--renew", type=float, default=1.5)
    p.add_argument("--retry", type=float, default=0.3)
    p.add_argument("--requeue", type=float, default=3.0)
    p.add_argument("--work", type=float, default=0.001, help="seconds each reconcile takes")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument(
        "--slow",
        type=int,
        default=0,
        help="keys cm-0 .. cm-<slow - 1> take --slow-work seconds and come back at once: "
        "always being reconciled, so that two replicas working on one would overlap",
    )
    p.add_argument("--slow-work", type=float, default=0.5)
    p.add_argument(
        "--static",
        default="",
        help="INDEX/TOTAL: a static shard (Shard.static) instead of the ring",
    )
    args = p.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format=f"%(asctime)s {args.identity} %(name)s %(levelname)s %(message)s",
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    api = config.new_client_from_config(args.kubeconfig)  # type: ignore[no-untyped-call]
    if args.static:
        index, total = (int(n) for n in args.static.split("/"))
        return run_static(args, api, Shard.static(index, total), stop)
    ring = ShardRing(
        api,
        args.ring,
        args.identity,
        namespace=args.namespace,
        lease_duration=args.lease,
        renew_deadline=args.renew,
        retry_period=args.retry,
    )
    ring_thread = threading.Thread(target=ring.run, args=(stop,), name="ring")
    ring_thread.start()
    shard = None
    while shard is None and not stop.is_set():
        shard = ring.wait_for_shard(0.5)
    if shard is None:
        ring_thread.join()
        return 0

    log = (args.out / f"{args.identity}.log").open("a", buffering=1)
    write = threading.Lock()

    slow = {f"{args.namespace}/cm-{i}" for i in range(args.slow)}

    def reconcile(key: str) -> float:
        with write:
            log.write(f"S {args.identity} {key} {time.monotonic_ns()}\n")
        # The work; a stopping replica still finishes it.
        time.sleep(args.slow_work if key in slow else args.work)
        with write:
            log.write(f"E {args.identity} {key} {time.monotonic_ns()}\n")
        return 0.01 if key in slow else float(args.requeue)

    factory = SharedInformerFactory(api, namespace=args.namespace, shard=shard)
    ring.follow(factory)
    informer = factory.informer(ConfigMap)
    lister = factory.lister(ConfigMap)
    loop: ReconcileLoop[str] = ReconcileLoop("configmaps", reconcile, workers=args.workers)
    loop.watch(informer)
    ring.admit(loop)
    factory.start()

    status_path = args.out / f"{args.identity}.json"

    def report() -> None:
        while True:
            health = ring.health()
            held = ring.shard()
            ih = informer.health()
            status = {
                "identity": args.identity,
                "pid": os.getpid(),
                "held": held.selector() if held is not None else None,
                "held_buckets": health.held_buckets,
                "members": list(health.members),
                "ring_healthy": health.healthy,
                "cached": len(lister.list()),
                "synced": informer.has_synced(),
                "filter": ih.shard_filter,
                "metrics": ring.metrics().buckets_started,
            }
            tmp = status_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(status))
            tmp.replace(status_path)
            if stop.wait(0.2):
                return

    reporter = threading.Thread(target=report, name="status", daemon=True)
    reporter.start()
    try:
        loop.run(stop)
    finally:
        stop.set()
        ring_thread.join()
        factory.shutdown()
        log.close()
    return 0


def run_static(args: argparse.Namespace, api: Any, shard: Shard, stop: threading.Event) -> int:
    """A replica of a static shard (N4): the same informer, loop and logs, without a ring."""
    log = (args.out / f"{args.identity}.log").open("a", buffering=1)
    write = threading.Lock()

    def reconcile(key: str) -> float:
        with write:
            log.write(f"S {args.identity} {key} {time.monotonic_ns()}\n")
        time.sleep(args.work)
        with write:
            log.write(f"E {args.identity} {key} {time.monotonic_ns()}\n")
        return float(args.requeue)

    factory = SharedInformerFactory(api, namespace=args.namespace, shard=shard)
    informer = factory.informer(ConfigMap)
    lister = factory.lister(ConfigMap)
    loop: ReconcileLoop[str] = ReconcileLoop("configmaps", reconcile, workers=args.workers)
    loop.watch(informer)
    factory.start()
    status_path = args.out / f"{args.identity}.json"

    def report() -> None:
        while True:
            status = {
                "identity": args.identity,
                "held": shard.selector(),
                "members": [],
                "ring_healthy": True,
                "cached": len(lister.list()),
                "synced": informer.has_synced(),
                "filter": informer.health().shard_filter,
            }
            tmp = status_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(status))
            tmp.replace(status_path)
            if stop.wait(0.2):
                return

    threading.Thread(target=report, name="status", daemon=True).start()
    try:
        loop.run(stop)
    finally:
        factory.shutdown()
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
