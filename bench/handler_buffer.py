"""Memory a stuck handler's buffer holds (issue 27 §3): `python -m bench.handler_buffer MODE`.

LocalApiServer (in this process) serves 20 configmaps of ~2.5 KB; the informer decodes lazily;
a fast handler reads every update in full (so each version is built into its model), a second
handler is stuck until the end. After 20 x 100 updates, tracemalloc says what the process
holds above the synced state. MODE: `off` (no stuck handler: the baseline, mostly the
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


def main(mode: str) -> None:
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
            _ = new.data  # a full read: the version is built into its model
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
        print(
            f"mode={mode}: {OBJECTS * ROUNDS} updates, buffered={m.buffered}, "
            f"coalesced={m.coalesced}, held {held / 1e6:.1f} MB above the synced state"
        )
        release.set()
        factory.shutdown()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "none")
