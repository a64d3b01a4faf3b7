"""Memory a stuck handler's buffer holds (issue 27 §3): `python -m bench.handler_buffer MODE [READ]`.

LocalApiServer (in this process) serves 20 configmaps of ~2.5 KB; the informer decodes lazily;
a fast handler reads every update (READ `field`, the default: its `data`, built alone, K13;
`whole`: the whole model, as a dump or a copy builds it), a second handler is stuck until the
end (it buffers lazy twins of what the fast one reads, G12). After 20 x 100 updates,
tracemalloc says what the process holds above the synced state, and what draining the buffer
gives back per buffered notification. MODE: `off` (no stuck handler: the baseline, mostly the
server's own watch history), `none` (stuck, unbounded buffer), or N (stuck, `max_buffer=N`).
Compare a mode with `off` from the same machine; the figures move with load.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import tracemalloc
from typing import Any

from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.testing.local_api_server import LocalApiServer

OBJECTS, ROUNDS = 20, 100


def main(mode: str, read: str = "field") -> None:
    if read not in ("field", "whole"):
        raise SystemExit(f"READ is field or whole, not {read!r}")
    bound = None if mode in ("none", "off") else int(mode)
    with LocalApiServer() as server:
        for i in range(OBJECTS):
            server.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                    "data": {f"k{j}": "x" * 40 for j in range(50)},
                }
            )
        factory = SharedInformerFactory(server.api_client(), namespace="default")
        informer = factory.core().v1().config_maps().informer()
        release = threading.Event()
        seen = [0]

        def fast(old: Any, new: Any) -> None:
            if read == "whole":
                new.model_dump()  # the whole version is built into its model
            else:
                _ = new.data  # its data is built (K13)
            seen[0] += 1

        def stuck(*_: Any) -> None:
            if mode != "off":
                release.wait()

        informer.add_event_handler(on_update=fast)
        registration = informer.add_event_handler(on_add=stuck, on_update=stuck, max_buffer=bound)
        factory.start()
        factory.wait_for_cache_sync(timeout=30)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for r in range(ROUNDS):
            for i in range(OBJECTS):
                obj = server.get("v1", "ConfigMap", f"cm-{i}", "default")
                obj["data"]["k0"] = f"r{r}"
                server.replace(obj)
        deadline = time.monotonic() + 60
        while seen[0] < OBJECTS * ROUNDS and time.monotonic() < deadline:
            release.wait(0.05)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        m = registration.metrics()
        release.set()
        # What the buffer held: the memory its draining gives back.
        while registration.metrics().buffered and time.monotonic() < deadline + 60:
            time.sleep(0.05)
        gc.collect()
        drained = tracemalloc.get_traced_memory()[0] - base
        per = f", {(held - drained) / max(m.buffered, 1) / 1e3:.1f} KB per buffered notification"
        print(
            f"mode={mode} read={read}: {OBJECTS * ROUNDS} updates, buffered={m.buffered}, "
            f"coalesced={m.coalesced}, held {held / 1e6:.1f} MB above the synced state"
            + (per if m.buffered else "")
        )
        factory.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:3]) if len(sys.argv) > 1 else main("none")
