"""Should asyncio users get an asyncio HTTP stack? Our threaded transport vs aiohttp, measured.

    python -m bench.async_transport [--objects 3000] [--rounds 3]

Not part of `make test` or `make bench`. The server is a LocalApiServer (the in-process fake
API server) run in a child process, loaded with N ConfigMaps, so that its threads do not
compete with the client for this process's interpreter lock. The contenders alternate within
each round (median of the rounds [min-max]), all decoding with the same codec
(`default_decoder(ConfigMap)`; `--decode eager` for validated models) and consuming on the
event loop:

- informer + events(): our informer with `informer.events()` consumed on the loop (the
  urllib3 transport on the reflector thread, events bridged with `call_soon_threadsafe`);
  its replay reads a watch with the same transport on a worker thread, bridged the same way;
- bare threaded: the same transport without the informer (LIST pages via `to_thread`), and
  the same bridge with one loop wake-up per batch instead of per event;
- bare aiohttp: a minimal asyncio-native paged LIST and WATCH read and decoded on the loop;
  no cache, no handlers, so it does less than the informer;
- (reference) the threaded transport's replay read on its own thread, nothing reaching the
  loop: what the HTTP stack costs without a hand-off.

Per contender: the sync time (N objects delivered to a coroutine), the events/s of a watch
replaying the N creations from the resourceVersion before them, and the worst event-loop
lag (a 1 ms ticker coroutine) during each.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from kubeinformers.runtime.client.transport import DecodeMode

NAMESPACE = "default"
PAGE_SIZE = 500  # the reflector's page size (client-go's default)
TICK = 0.001


# --- the server (child process) --------------------------------------------------------------


def serve(n: int) -> None:
    """Child: start a LocalApiServer, load N ConfigMaps, print URL and the RV before them,
    serve until stdin closes."""
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer(history_size=n + 1000) as server:
        rv0 = server.resource_version
        for i in range(n):
            server.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i:05d}", "namespace": NAMESPACE},
                    "data": {"key": "value " * 20, "index": str(i)},
                }
            )
        total = len(server.list("v1", "ConfigMap", NAMESPACE))
        print(server.url, rv0, total, flush=True)
        sys.stdin.read()


# --- measuring ------------------------------------------------------------------------------


class LagMeter:
    """The worst delay of a 1 ms ticker coroutine: how long the loop was kept from running."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, loop.time() - t - TICK)

    def __enter__(self) -> LagMeter:
        self._task = asyncio.ensure_future(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


@dataclass
class Result:
    sync_seconds: float
    sync_lag: float
    replay_events_per_second: float
    replay_lag: float


async def timed(work: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """(seconds, worst loop lag) of `work()`."""
    await asyncio.sleep(0.05)  # let the previous contender's leftovers settle
    with LagMeter() as lag:
        start = time.perf_counter()
        await work()
        seconds = time.perf_counter() - start
    return seconds, lag.worst


def api_client(url: str) -> Any:
    from kubernetes.client import ApiClient, Configuration

    config = Configuration()
    config.host = url
    return ApiClient(config)


async def threaded(url: str, rv0: str, n: int, decode: DecodeMode) -> Result:
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.runtime.api.listwatch import ListOptions
    from kubeinformers.runtime.cache.events import Added

    api = await asyncio.to_thread(api_client, url)  # building it takes ~0.2 s: not on the loop
    factory = SharedInformerFactory(api, namespace=NAMESPACE, decode=decode)
    informer = factory.informer(ConfigMap)

    async def sync() -> None:
        async with informer.events(buffer=100) as events:
            factory.start()
            added = 0
            async for event in events:
                if isinstance(event, Added):
                    added += 1
                    if added == n:
                        return

    sync_seconds, sync_lag = await timed(sync)
    await factory.shutdown_async()

    transport: Any = factory.informer(ConfigMap).lister_watcher
    loop = asyncio.get_running_loop()

    async def replay() -> None:
        queue: asyncio.Queue[object] = asyncio.Queue()
        options = ListOptions(resource_version=rv0, timeout_seconds=300)
        watch = await asyncio.to_thread(transport.watch, options)

        def read() -> None:
            for event in watch:
                loop.call_soon_threadsafe(queue.put_nowait, event)

        reader = asyncio.ensure_future(asyncio.to_thread(read))
        for _ in range(n):
            await queue.get()
        watch.stop()  # unblocks the reader
        await reader

    replay_seconds, replay_lag = await timed(replay)
    return Result(sync_seconds, sync_lag, n / replay_seconds, replay_lag)


async def bare_threaded(url: str, rv0: str, n: int, decode: DecodeMode) -> Result:
    return await _bare_threaded(url, rv0, n, decode, batched=False)


async def bare_threaded_batched(url: str, rv0: str, n: int, decode: DecodeMode) -> Result:
    return await _bare_threaded(url, rv0, n, decode, batched=True)


async def thread_only(url: str, rv0: str, n: int, decode: DecodeMode) -> Result:
    return await _bare_threaded(url, rv0, n, decode, batched=None)


async def _bare_threaded(
    url: str, rv0: str, n: int, decode: DecodeMode, *, batched: bool | None
) -> Result:
    """batched: None reads the replay on the thread only (nothing reaches the loop)."""
    """The threaded transport without the informer: LIST pages read and decoded on a worker
    thread (`asyncio.to_thread` per page), the replay as in `threaded`."""
    from kubeinformers.generated.core.v1 import ConfigMap, ConfigMapLister
    from kubeinformers.runtime.api.listwatch import ListOptions
    from kubeinformers.runtime.client.transport import ApiListerWatcher

    api = await asyncio.to_thread(api_client, url)
    transport = ApiListerWatcher(
        api,
        ConfigMapLister.RESOURCE,
        ConfigMap,
        namespace=NAMESPACE,
        decode=decode,
    )

    async def sync() -> None:
        items: list[Any] = []
        cont: str | None = None
        while True:
            options = ListOptions(limit=PAGE_SIZE, continue_=cont)
            page = await asyncio.to_thread(transport.list, options)
            items.extend(page.items)
            cont = page.continue_
            if not cont:
                break
        assert len(items) == n, (len(items), n)

    sync_seconds, sync_lag = await timed(sync)

    async def replay() -> None:
        options = ListOptions(resource_version=rv0, timeout_seconds=300)
        watch = await asyncio.to_thread(transport.watch, options)
        if batched is None:
            await asyncio.to_thread(_read_on_thread, watch, n)
        elif batched:
            await _consume_batched(watch, n)
        else:
            await _consume(watch, n)

    replay_seconds, replay_lag = await timed(replay)
    return Result(sync_seconds, sync_lag, n / replay_seconds, replay_lag)


def _read_on_thread(watch: Any, n: int) -> None:
    seen = 0
    for _ in watch:
        seen += 1
        if seen == n:
            break
    watch.stop()


async def _consume(watch: Any, n: int) -> None:
    """One `call_soon_threadsafe` per event (what `informer.events()` does)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()

    def read() -> None:
        for event in watch:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    reader = asyncio.ensure_future(asyncio.to_thread(read))
    for _ in range(n):
        await queue.get()
    watch.stop()  # unblocks the reader
    await reader


async def _consume_batched(watch: Any, n: int) -> None:
    """Events collect in a deque; the loop is woken only when it is not already due to
    drain it (one `call_soon_threadsafe` per batch)."""
    loop = asyncio.get_running_loop()
    pending: collections.deque[object] = collections.deque()
    lock = threading.Lock()
    wake_due = False
    ready = asyncio.Event()

    def wake() -> None:
        nonlocal wake_due
        with lock:
            wake_due = False
        ready.set()

    def read() -> None:
        nonlocal wake_due
        for event in watch:
            with lock:
                pending.append(event)
                if wake_due:
                    continue
                wake_due = True
            loop.call_soon_threadsafe(wake)

    reader = asyncio.ensure_future(asyncio.to_thread(read))
    seen = 0
    while seen < n:
        await ready.wait()
        ready.clear()
        while pending and seen < n:
            pending.popleft()
            seen += 1
    watch.stop()  # unblocks the reader
    await reader


async def native(url: str, rv0: str, n: int, decode: DecodeMode) -> Result:
    import aiohttp

    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.runtime.client.transport import default_decoder

    decoder = default_decoder(ConfigMap, decode)
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"

    async with aiohttp.ClientSession(url) as session:

        async def sync() -> None:
            items: list[Any] = []
            cont = ""
            while True:
                params = {"limit": str(PAGE_SIZE)}
                if cont:
                    params["continue"] = cont
                async with session.get(path, params=params) as resp:
                    resp.raise_for_status()
                    page = decoder.decode_list(await resp.read())
                items.extend(page.items)
                cont = page.continue_ or ""
                if not cont:
                    break
            assert len(items) == n, (len(items), n)

        sync_seconds, sync_lag = await timed(sync)

        async def replay() -> None:
            params = {"watch": "1", "resourceVersion": rv0, "timeoutSeconds": "300"}
            async with session.get(path, params=params) as resp:
                resp.raise_for_status()
                seen = 0
                async for line in resp.content:
                    if line.strip():
                        decoder.decode_event(line)
                        seen += 1
                        if seen == n:
                            return

        replay_seconds, replay_lag = await timed(replay)
    return Result(sync_seconds, sync_lag, n / replay_seconds, replay_lag)


CONTENDERS: dict[str, Callable[[str, str, int, DecodeMode], Coroutine[Any, Any, Result]]] = {
    "informer + events() (urllib3 thread -> call_soon_threadsafe)": threaded,
    "bare threaded transport (same, no informer)": bare_threaded,
    "bare threaded, one loop wake-up per batch of events": bare_threaded_batched,
    "bare aiohttp (asyncio-native, decoded on the loop)": native,
    "(reference) threaded transport, replay read on its thread only": thread_only,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decode", choices=["lazy", "eager"], default="lazy")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        sys.exit("aiohttp is not installed (it comes with the kubernetes client): pip install it")

    child = subprocess.Popen(
        [sys.executable, "-m", "bench.async_transport", "--serve", str(args.objects)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        url, rv0, total = child.stdout.readline().split()
        n = int(total)
        decode = cast("DecodeMode", args.decode)
        results: dict[str, list[Result]] = {name: [] for name in CONTENDERS}
        order = list(CONTENDERS)
        for round_ in range(args.rounds):
            for name in order if round_ % 2 == 0 else reversed(order):
                results[name].append(asyncio.run(CONTENDERS[name](url, rv0, n, decode)))
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)

    print(f"server: LocalApiServer (in-process fake, in a child process), {n} ConfigMaps")
    print(
        f"decode={args.decode}; median of {args.rounds} rounds [min-max]; lag = worst delay of a 1 ms ticker"
    )
    header = f"{'contender':<62} {'sync s':>18} {'sync lag ms':>14} {'replay ev/s':>20} {'replay lag ms':>14}"
    print(header)
    print("-" * len(header))
    for name, rs in results.items():

        def cell(values: list[float], fmt: str) -> str:
            return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"

        print(
            f"{name:<62} {cell([r.sync_seconds for r in rs], '{:.2f}'):>18} "
            f"{statistics.median(r.sync_lag for r in rs) * 1000:>14.0f} "
            f"{cell([r.replay_events_per_second for r in rs], '{:.0f}'):>20} "
            f"{statistics.median(r.replay_lag for r in rs) * 1000:>14.0f}"
        )


if __name__ == "__main__":
    main()
