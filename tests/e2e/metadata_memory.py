"""Memory per cached pod: full typed informer vs metadata-only informers (issue 5).

    .venv/bin/python -m tests.e2e.metadata_memory [--n 5000]

One LocalApiServer holds N realistic pods (bench/pods.py); each informer syncs them in a fresh
process, which reports the bytes tracemalloc sees allocated after the sync (after a full GC),
divided by N. Printed as a table; nothing is written.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from kubeinformers.runtime.api.resource import GroupVersionResource

PODS = GroupVersionResource("", "v1", "pods")
VARIANTS = {
    "full": "generated Pod model, SharedInformerFactory",
    "full-stripped": "generated Pod model, transform=strip_managed_fields",
    "dynamic": "plain dicts, DynamicSharedInformerFactory",
    "metadata": "PartialObjectMetadata[ObjectMeta], MetadataSharedInformerFactory",
    "metadata-stripped": "PartialObjectMetadata[ObjectMeta] + strip_managed_fields",
}


def _factory(variant: str, api: Any) -> tuple[Any, Any]:
    """(factory, informer) of one variant, not started."""
    from kubeinformers.runtime.cache.transforms import strip_managed_fields

    strip = strip_managed_fields if variant.endswith("stripped") else None
    if variant.startswith("full"):
        from kubeinformers.generated.informers import SharedInformerFactory

        full = SharedInformerFactory(api, transform=strip)
        return full, full.core().v1().pods().informer()
    if variant == "dynamic":
        from kubeinformers.runtime.cache.dynamic import DynamicSharedInformerFactory

        dynamic = DynamicSharedInformerFactory(api)
        return dynamic, dynamic.for_resource(PODS).informer()
    from kubeinformers.generated.meta.v1 import ObjectMeta
    from kubeinformers.runtime.cache.dynamic import MetadataSharedInformerFactory

    metadata = MetadataSharedInformerFactory(api, metadata_model=ObjectMeta, transform=strip)
    return metadata, metadata.for_resource(PODS).informer()


def child(variant: str, kubeconfig: str, n: int) -> dict[str, Any]:
    from kubernetes import config

    api = config.new_client_from_config(kubeconfig)  # type: ignore[no-untyped-call]
    factory, informer = _factory(variant, api)  # models imported before measuring
    for _ in range(3):
        gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    factory.start()
    synced = factory.wait_for_cache_sync(timeout=600)
    keys = len(informer.get_indexer().list_keys())
    for _ in range(3):
        gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    factory.shutdown()
    return {
        "variant": variant,
        "synced": all(synced.values()),
        "objects": keys,
        "bytes_per_object": (after - before) / max(n, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.metadata_memory")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--child", choices=sorted(VARIANTS))
    parser.add_argument("--kubeconfig")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.kubeconfig, args.n)))
        return 0

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.pods import realistic_pod
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer() as server, tempfile.TemporaryDirectory() as tmp:
        namespaces = sorted({realistic_pod(i)["metadata"]["namespace"] for i in range(args.n)})
        existing = {o["metadata"]["name"] for o in server.list("v1", "Namespace")}
        for ns in namespaces:
            if ns not in existing:
                server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(args.n):
            server.create({"apiVersion": "v1", "kind": "Pod", **realistic_pod(i)})
        kubeconfig = str(server.write_kubeconfig(Path(tmp) / "kubeconfig"))
        print(f"{args.n} realistic pods; bytes allocated per cached pod after sync (tracemalloc)")
        results: dict[str, dict[str, Any]] = {}
        for variant in VARIANTS:  # one at a time: each child has the machine to itself
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tests.e2e.metadata_memory",
                    "--child",
                    variant,
                    "--kubeconfig",
                    kubeconfig,
                    "--n",
                    str(args.n),
                ],
                capture_output=True,
                text=True,
                check=False,
                timeout=1200,
            )
            if done.returncode != 0:
                print(f"{variant}: failed\n{done.stderr[-2000:]}")
                return 1
            results[variant] = json.loads(done.stdout.strip().splitlines()[-1])
    base = results["full"]["bytes_per_object"]
    for variant, text in VARIANTS.items():
        r = results[variant]
        print(
            f"  {variant:<18} {r['bytes_per_object']:>9,.0f} B/pod  ({r['bytes_per_object'] / base:5.1%}"
            f" of full)  objects={r['objects']} synced={r['synced']}  {text}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
