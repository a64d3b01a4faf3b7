"""How an eager decoder should hand a pod's JSON to pydantic: `python -m bench.validate_modes`.

Why: `decode="eager"` spends most of its client time in pydantic's validation, and pydantic
has two entry points. `model_validate_json` parses the bytes itself (Rust) and builds every
string and container as it validates; `model_validate` takes Python objects, so a faster
parser (msgspec) could build them first and pydantic would reuse its strings and the
managedFields trees as they are. Which is cheaper is measured here, in this process, on the
bench's realistic pods, with managedFields and without (their FieldsV1 trees are dicts of
dicts that no schema describes), with the collector off as in a sync. Best of 5 per line.

Measured 2026-11-24 (AMD EPYC, 2 cores, idle, pods with managedFields): model_validate_json
41-43 µs per pod, msgspec + model_validate 45-47 µs: the parse-it-yourself path wins, so the
eager decoder keeps `model_validate_json`. With another process busy on the second core both
grow (to about 60 and 72 µs): the cores share caches.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import msgspec

from bench.pods import realistic_pod


def _best_us(fn: Callable[[bytes], Any], items: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        kept = [fn(item) for item in items]
        best = min(best, time.perf_counter() - start)
        del kept
    return best / len(items) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.validate_modes")
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    from kubeinformers.generated.core.v1 import Pod

    pods = [realistic_pod(i, "perf") for i in range(args.pods)]
    stripped = [json.loads(json.dumps(p)) for p in pods]
    for pod in stripped:
        pod["metadata"].pop("managedFields", None)
    decode = msgspec.json.Decoder().decode

    def python_mode(item: bytes) -> Pod:
        return Pod.model_validate(decode(item))

    Pod.model_validate_json(json.dumps(pods[0]))  # build the validator outside the timing
    gc.disable()
    try:
        print(f"{args.pods} realistic pods, best of {args.repeat}, µs per pod")
        for label, objects in (("with managedFields", pods), ("without", stripped)):
            items = [json.dumps(p, separators=(",", ":")).encode() for p in objects]
            size = sum(map(len, items)) // len(items)
            print(f"  {label} ({size} bytes of JSON each):")
            for name, fn in (
                ("model_validate_json", Pod.model_validate_json),
                ("msgspec parse only", decode),
                ("msgspec + model_validate", python_mode),
            ):
                print(f"    {name:26s} {_best_us(fn, items, args.repeat):6.1f}")
    finally:
        gc.enable()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
