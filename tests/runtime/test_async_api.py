"""The asyncio API (issue 17) against a LocalApiServer, under asyncio debug mode.

`async with factory` (H3-H5 on the loop), `informer.events()` (F4, F8, G1, G2 as typed
events), read your own writes for every queue kind (B15 generalised), health and the watch
idle timeout (D4: a silent watch is re-watched from the last resourceVersion).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.cache.events import Added, Deleted, Updated
from kubeinformers.runtime.cache.factory import CacheSyncTimeoutError
from kubeinformers.runtime.cache.informer import QUEUE_KINDS, QueueKind
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.support.waiting import eventually

R = TypeVar("R")
TIMEOUT = 30.0  # headroom for a loaded CI machine; every wait ends as soon as its event comes


def run_debug(main: Callable[[], Awaitable[R]], caplog: pytest.LogCaptureFixture) -> R:
    """Run `main()` with asyncio debug mode: fail on a never-awaited coroutine or a slow
    callback of ours (a blocked loop)."""

    async def wrapped() -> R:
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = 0.5  # headroom for a loaded machine; default is 0.1 s
        return await main()

    # What earlier tests of this process left (xdist runs many in one) is moved out of the
    # collector's reach first: a full collection walking it (0.5 s on a loaded machine) would
    # otherwise be charged to whichever step of ours it interrupts.
    gc.collect()
    gc.freeze()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = asyncio.run(wrapped(), debug=True)
    finally:
        gc.unfreeze()
    never_awaited = [w for w in caught if "was never awaited" in str(w.message)]
    assert not never_awaited, never_awaited
    slow = [
        r.getMessage() for r in caplog.records if r.name == "asyncio" and "took" in r.getMessage()
    ]
    assert not slow, slow
    return result


@pytest.fixture(autouse=True, scope="module")
def _typed_core_v1_imported() -> None:
    """Importing the generated core/v1 code and the transport takes over a second on a loaded
    machine: done before any loop runs, so the slow-callback check sees only the loop's work."""
    from kubernetes import client

    api = client.ApiClient()
    SharedInformerFactory(api).core().v1().config_maps().informer()
    api.close()  # type: ignore[no-untyped-call]


def configmap(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"v": value},
    }


async def next_event(events: Any) -> Any:
    return await asyncio.wait_for(anext(events), TIMEOUT)


@pytest.mark.parametrize("queue", QUEUE_KINDS)
def test_events_and_read_your_writes_for_every_queue(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture, queue: QueueKind
) -> None:
    """F8/G2 as typed events in order; after each write, wait_for_resource_version_async
    returns True and the cache holds that write (for delta, ordered and atomic queues)."""
    server = local_api_server
    api = server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop
    server.create(configmap("before", "0"))

    async def main() -> None:
        factory = SharedInformerFactory(api, queue=queue)
        informer = factory.core().v1().config_maps().informer()
        async with factory.running(timeout=TIMEOUT):
            async with informer.events(buffer=2) as events:
                first = await next_event(events)
                assert isinstance(first, Added) and first.is_in_initial_list
                assert first.obj.metadata is not None and first.obj.metadata.name == "before"

                created = await asyncio.to_thread(server.create, configmap("web", "1"))
                rv = created["metadata"]["resourceVersion"]
                assert await informer.wait_for_resource_version_async(rv, TIMEOUT)
                cached = informer.get_indexer().get_by_key("default/web")
                assert cached is not None and cached.data == {"v": "1"}
                added = await next_event(events)
                assert isinstance(added, Added) and not added.is_in_initial_list

                changed = dict(created, data={"v": "2"})
                updated_obj = await asyncio.to_thread(server.replace, changed)
                rv2 = updated_obj["metadata"]["resourceVersion"]
                assert await informer.wait_for_resource_version_async(rv2, TIMEOUT)
                update = await next_event(events)
                assert isinstance(update, Updated)
                assert update.old.data == {"v": "1"} and update.new.data == {"v": "2"}

                await asyncio.to_thread(server.delete, "v1", "ConfigMap", "web", "default")
                deleted = await next_event(events)
                assert isinstance(deleted, Deleted)
                assert informer.get_indexer().get_by_key("default/web") is None
            assert informer.health().healthy
            assert factory.health().healthy
        assert informer.is_stopped()  # leaving `running` shut the factory down

    run_debug(main, caplog)


def test_wait_for_resource_version_times_out_and_rejects_non_numbers(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A resourceVersion the cache never reaches: False after the timeout (sync and async);
    a made-up one: ValueError that says what to pass."""
    server = local_api_server
    api = server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        async with factory:
            far = str(server.resource_version + 10_000)
            assert not await informer.wait_for_resource_version_async(far, 0.2)
            assert not await asyncio.to_thread(informer.wait_for_resource_version, far, 0.2)
            with pytest.raises(ValueError, match="not a number"):
                informer.wait_for_resource_version("abc", 1.0)
            created = await asyncio.to_thread(server.create, configmap("x", "1"))
            rv = created["metadata"]["resourceVersion"]
            assert await asyncio.to_thread(informer.wait_for_resource_version, rv, TIMEOUT)
            assert int(informer.last_processed_resource_version()) >= int(rv)

    run_debug(main, caplog)


def test_async_with_factory_shuts_down_on_cancellation(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """H4 on the loop: cancelling the task inside `async with factory` stops every informer
    and joins its threads; no informer thread is left."""
    server = local_api_server
    api = server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop
    entered = asyncio.Event

    async def main() -> SharedInformerFactory:
        factory = SharedInformerFactory(api)
        factory.core().v1().config_maps().informer()
        inside = entered()

        async def operator() -> None:
            async with factory:
                inside.set()
                await asyncio.Future()  # runs until cancelled

        task = asyncio.create_task(operator())
        await asyncio.wait_for(inside.wait(), TIMEOUT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return factory

    factory = run_debug(main, caplog)
    assert factory.is_shut_down
    assert all(inf.is_stopped() for inf in factory.informers().values())
    assert not [t for t in threading.enumerate() if t.name.startswith("informer-configmaps")]


def test_events_of_a_never_started_informer_end_when_the_factory_shuts_down(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """H4 for streams: an `events()` stream of an informer the factory never started (it was
    requested after `start`) ends its `async for` at shutdown instead of waiting forever;
    the informer then will not run (F14: it reports stopped)."""
    api = local_api_server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()  # never started
        received: list[Any] = []
        subscribed = asyncio.Event()

        async def consume() -> None:
            async with informer.events() as events:
                subscribed.set()
                async for event in events:
                    received.append(event)

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(subscribed.wait(), TIMEOUT)
        await factory.shutdown_async()
        await asyncio.wait_for(consumer, TIMEOUT)  # hangs (TimeoutError) if the stream stays open
        assert received == []
        assert informer.is_stopped()

    run_debug(main, caplog)


def test_sync_timeout_raises_a_clear_error(caplog: pytest.LogCaptureFixture) -> None:
    """No server: entering `running(timeout=...)` raises CacheSyncTimeoutError naming the
    resource, and the factory is shut down."""
    from kubernetes.client import ApiClient, Configuration

    config = Configuration()
    config.host = "http://127.0.0.1:9"  # discard port: connection refused

    api = ApiClient(config)

    async def main() -> SharedInformerFactory:
        factory = SharedInformerFactory(api)
        factory.core().v1().config_maps().informer()
        with pytest.raises(CacheSyncTimeoutError, match="configmaps"):
            async with factory.running(timeout=0.5):
                raise AssertionError("must not be entered")
        return factory

    factory = run_debug(main, caplog)
    assert factory.is_shut_down
    health = next(iter(factory.informers().values())).health()
    assert not health.synced and health.consecutive_failures >= 1 and health.last_error


def test_health_names_the_watch_failure_the_reflector_retries_itself(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """D10-D13: a re-watch answered with 500 is retried by the reflector without the error
    handler; health() counts it and carries that error itself (not a generic message), and
    is healthy again once events flow."""
    server = local_api_server
    api = server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        server.fail_next(2, status=500, verbs=["watch"])  # the LIST syncs, the watches fail
        async with factory:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TIMEOUT
            while informer.health().consecutive_failures == 0 and loop.time() < deadline:
                await asyncio.sleep(0.02)
            health = informer.health()
            assert health.synced and health.consecutive_failures >= 1
            assert health.last_error is not None
            assert "injected fault" in health.last_error, health.last_error
            assert isinstance(informer.last_error(), Exception)
            created = await asyncio.to_thread(server.create, configmap("after", "1"))
            rv = created["metadata"]["resourceVersion"]
            assert await informer.wait_for_resource_version_async(rv, TIMEOUT)
            assert informer.health().healthy

    run_debug(main, caplog)


def test_health_is_healthy_again_once_list_and_watch_work_with_no_object_to_deliver(
    local_api_server: LocalApiServer,
) -> None:
    """An informer of a resource with no objects gets no event when a failure ends (a 403
    lifted): a list or watch that succeeds ends its failures in a row, as an event does
    (health: synced, running, list and watch not failing)."""
    server = local_api_server
    with SharedInformerFactory(server.api_client()) as factory:
        informer = factory.core().v1().secrets().informer()  # no Secret exists
        factory.start()
        factory.wait_for_cache_sync_or_raise(timeout=TIMEOUT)
        server.forbid("secrets")
        server.drop_watches(clean=True)
        assert eventually(lambda: informer.health().consecutive_failures >= 1)
        server.allow("secrets")
        assert eventually(lambda: informer.health().consecutive_failures == 0)
        assert informer.health().healthy, informer.health()


def test_silent_watch_is_reconnected_after_the_idle_timeout(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A watch with no byte (no event, no bookmark) for `watch_idle_timeout` is ended and
    re-watched from the last resourceVersion (D4); said once at INFO; nothing is lost."""
    server = local_api_server
    api = server.api_client()  # building an ApiClient takes ~0.2 s: not on the loop
    server.set_bookmark_interval(3600.0)
    caplog.set_level(logging.INFO, logger="kubeinformers.transport")

    async def main() -> None:
        factory = SharedInformerFactory(api, watch_idle_timeout=0.3)
        informer = factory.core().v1().config_maps().informer()
        async with factory:
            lister_watcher: Any = informer.lister_watcher
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TIMEOUT
            while lister_watcher.idle_reconnects < 2 and loop.time() < deadline:
                await asyncio.sleep(0.05)
            assert lister_watcher.idle_reconnects >= 2
            created = await asyncio.to_thread(server.create, configmap("late", "1"))
            rv = created["metadata"]["resourceVersion"]
            assert await informer.wait_for_resource_version_async(rv, TIMEOUT)
            assert informer.health().healthy

    run_debug(main, caplog)
    idle_lines = [
        r
        for r in caplog.records
        if r.name == "kubeinformers.transport" and "silent" in r.getMessage()
    ]
    assert [r.levelno for r in idle_lines][:1] == [logging.INFO]
    assert all(r.levelno == logging.DEBUG for r in idle_lines[1:])


@pytest.mark.parametrize("queue", ["delta", "ordered"])
def test_watermark_never_runs_ahead_of_a_key_still_queued(queue: QueueKind) -> None:
    """C1.9 hands out keys in first-queued order: A(rv 10), B(11), A again (12) pops A with
    10 and 12 while B@11 still waits, so a waiter for 11 must not wake before B is in the
    store. RealFIFO (C-2) pops in arrival order: its watermark may follow each entry."""
    from kubeinformers.runtime.api.keys import meta_namespace_key
    from kubeinformers.runtime.cache.delta_fifo import DeltaFIFO
    from kubeinformers.runtime.cache.informer import SharedIndexInformer
    from kubeinformers.runtime.cache.real_fifo import RealFIFO
    from tests.runtime._informer_support import Pod, pod

    informer: SharedIndexInformer[Pod] = SharedIndexInformer(
        None,  # type: ignore[arg-type]  # never run: the queue is driven by hand
        Pod,
        queue=queue,
    )
    indexer = informer.get_indexer()
    fifo: DeltaFIFO[Pod] | RealFIFO[Pod] = (
        DeltaFIFO(key_func=meta_namespace_key, known_objects=indexer)
        if queue == "delta"
        else RealFIFO(meta_namespace_key, indexer, None)
    )
    informer._queue = fifo
    fifo.add(pod("a", "10"))
    fifo.add(pod("b", "11"))
    fifo.update(pod("a", "12", value=1))
    process = informer._handle_deltas if queue == "delta" else informer._handle_batch_deltas
    fifo.pop(process)
    if queue == "delta":
        assert indexer.get_by_key("default/b") is None
        assert not informer.wait_for_resource_version("11", 0)
        fifo.pop(process)  # B: the queue is empty now
    else:
        while len(fifo):
            fifo.pop(process)
    assert indexer.get_by_key("default/b") is not None
    assert informer.wait_for_resource_version("12", 0)
    assert informer.last_processed_resource_version() == "12"


def test_g8_a_closed_stream_lets_go_of_its_buffered_events_before_the_informer_stops(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing a stream unregisters it whole: nothing it buffered stays reachable from the
    informer until the informer stops (a long-lived informer would gather every closed
    stream's unread events)."""
    server = local_api_server
    api = server.api_client()
    for i in range(5):
        server.create(configmap(f"leak-{i}", "1"))

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        async with factory:
            queues = []
            for _ in range(3):
                stream = informer.events()
                await asyncio.wait_for(anext(stream), TIMEOUT)  # the rest stays buffered
                queues.append(weakref.ref(stream._queue))
                await stream.aclose()
                del stream
            # Deliveries already scheduled on the loop, and the removed handlers' threads
            # winding down, hold a queue a moment longer: wait for that, not for the stop.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TIMEOUT
            while any(q() is not None for q in queues) and loop.time() < deadline:
                gc.collect()
                await asyncio.sleep(0.01)
            assert [q() for q in queues] == [None, None, None]
            assert not informer.is_stopped()

    run_debug(main, caplog)


def test_g8_a_closed_stream_still_bound_to_a_name_holds_no_unread_event(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """`async with informer.events() as events:` leaves `events` bound after the block (a
    long-lived task keeps it until it returns): closing lets go of the events it buffered and
    never read, and drops those still on their way to the loop, instead of keeping them for
    as long as the stream object lives."""
    server = local_api_server
    api = server.api_client()
    for i in range(5):
        server.create(configmap(f"unread-{i}", "1"))

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        loop = asyncio.get_running_loop()
        async with factory:
            cached = len(informer.get_store().list())
            async with informer.events() as events:
                await next_event(events)
                # The initial list's other adds reach the stream's buffer, unread.
                deadline = loop.time() + TIMEOUT
                while events._queue.qsize() < cached - 1 and loop.time() < deadline:
                    await asyncio.sleep(0.01)
                assert events._queue.qsize() == cached - 1
                # One more on its way: handed to the loop, not yet in the stream's buffer.
                events._bridge.on_add(informer.get_store().list()[0], False)
            # The delivery scheduled before the close has run now (callbacks run in order).
            barrier = loop.create_future()
            loop.call_soon(barrier.set_result, None)
            await barrier
            assert events._queue.qsize() == 1  # the end marker only
            with pytest.raises(StopAsyncIteration):
                await anext(events)

    run_debug(main, caplog)


def test_h5_a_sync_wait_that_ends_leaves_nothing_with_the_informers(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A readiness check polling `wait_for_cache_sync_async` with a short timeout on an
    informer that cannot sync must not pile up a waiter (its event and loop) per call."""
    server = local_api_server
    api = server.api_client()
    server.forbid("secrets")

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().secrets().informer()
        factory.start()
        try:
            await factory.wait_for_cache_sync_async(0.01)
            before = len(informer._synced_callbacks)
            for _ in range(20):
                await factory.wait_for_cache_sync_async(0.01)
            assert len(informer._synced_callbacks) == before
        finally:
            await factory.shutdown_async()

    run_debug(main, caplog)


def test_h5_a_cancelled_sync_wait_leaves_nothing_with_the_informers(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A wait that is cancelled rather than timed out (its task cancelled, or an outer
    `asyncio.wait_for` giving up, the usual way to bound a wait without a timeout of its
    own) takes its waiter back from the informers too."""
    server = local_api_server
    api = server.api_client()
    server.forbid("secrets")

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().secrets().informer()
        factory.start()
        loop = asyncio.get_running_loop()
        try:
            before = len(informer._synced_callbacks)
            for _ in range(20):
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(factory.wait_for_cache_sync_async(None), 0.01)
            waiting = asyncio.create_task(factory.wait_for_cache_sync_async(None))
            started = loop.create_future()  # runs after the task's first step: registered
            loop.call_soon(started.set_result, None)
            await started
            assert len(informer._synced_callbacks) == before + 1
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert len(informer._synced_callbacks) == before
            assert not informer.has_synced()
        finally:
            await factory.shutdown_async()

    run_debug(main, caplog)


def test_h4_a_factory_that_was_shut_down_cannot_be_entered_again(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A second `async with factory:` would hand out stopped informers whose caches no
    longer follow the server, as if synced: it raises instead."""
    api = local_api_server.api_client()

    async def main() -> None:
        factory = SharedInformerFactory(api)
        factory.core().v1().config_maps().informer()
        async with factory:
            pass
        with pytest.raises(CacheSyncTimeoutError, match="the factory was shut down"):
            async with factory:
                raise AssertionError("must not be entered")

    run_debug(main, caplog)


def test_m1_an_async_wait_for_the_cache_holds_no_thread_and_ends_when_cancelled(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An async client's wait for a delete to leave the cache (`wait_for_cache_async`) is
    checked on the loop, not in a worker thread: cancelled, nothing keeps waiting (a thread
    used to stay blocked for the rest of `read_your_writes_timeout`)."""
    server = local_api_server
    api = server.api_client()

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        async with factory:
            threads = set(threading.enumerate())
            wait = asyncio.ensure_future(informer.wait_for_cache_async(lambda: False, 30.0))
            await asyncio.sleep(0)  # let it begin waiting
            assert not set(threading.enumerate()) - threads  # no worker thread took the wait
            wait.cancel()
            with pytest.raises(asyncio.CancelledError):
                await wait
            assert informer._watermark._async_waiters == []
            # It wakes when the cache changes: the key's arrival ends a wait for it.
            key = "default/arriving"
            arrived = asyncio.ensure_future(
                informer.wait_for_cache_async(
                    lambda: informer.get_indexer().get_by_key(key) is not None, TIMEOUT
                )
            )
            await asyncio.to_thread(server.create, configmap("arriving", "1"))
            assert await arrived
            assert not await informer.wait_for_cache_async(lambda: False, 0.1)

    run_debug(main, caplog)


def test_m1_a_write_does_not_wait_for_the_queue_lock_a_transform_holds(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """M1: whether a write has a cache to wait for was asked with the queue's lock
    (`has_synced()`), which the transform holds while it runs (found against kube-apiserver
    1.36 with a transform slow on one object): the write waited for the transform, past its
    `read_your_writes_timeout`, an async client's write blocked its event loop as long, and
    `health()`, which ReadYourWritesTimeout points at, did too."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.meta.v1 import ObjectMeta
    from kubeinformers.runtime.api.keys import object_name
    from kubeinformers.runtime.cache.freshness import ReadYourWritesTimeout

    held = threading.Event()
    release = threading.Event()

    def transform(obj: Any) -> Any:
        if object_name(obj) == "slow":
            held.set()
            release.wait(5.0)  # the old code waited this out: the write then did not time out
        return obj

    factory = SharedInformerFactory(local_api_server.api_client(), namespace="default")
    informer = factory.core().v1().config_maps().informer()
    informer.set_transform(transform)
    try:
        factory.start()
        assert all(factory.wait_for_cache_sync(TIMEOUT).values())
        client = factory.client(read_your_writes_timeout=0.2)
        with pytest.raises(ReadYourWritesTimeout):
            client.create(ConfigMap(metadata=ObjectMeta(name="slow", namespace="default")))
        assert held.is_set()
        asked = time.monotonic()
        assert informer.health().synced
        assert time.monotonic() - asked < 2.0  # the transform still holds the lock (5 s)

        async def main() -> None:
            slow = factory.async_client(read_your_writes_timeout=0.2)
            with pytest.raises(ReadYourWritesTimeout):
                await slow.patch(ConfigMap, "slow", {"data": {"a": "1"}}, namespace="default")

        run_debug(main, caplog)  # fails on a loop blocked for over 0.5 s
    finally:
        release.set()
        factory.shutdown()


def test_g13_leaving_async_with_factory_with_an_unread_stream_does_not_hang(
    local_api_server: LocalApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """G13: the task that leaves `async with factory` holds an `events()` stream it has not
    read to the end (its buffer is full). The informer's shutdown waits for the stream's
    delivery thread, which waited for the consumer to make room, and the consumer waited for
    the shutdown: `async with` never ended. Now the delivery thread gives up once the informer
    stops; the stream then ends after what was already handed to the loop."""
    server = local_api_server
    api = server.api_client()
    for i in range(4):
        server.create(configmap(f"unread-stream-{i}", "1"))

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()

        opened: list[Any] = []

        async def operator() -> Any:
            async with factory:
                events = informer.events(buffer=1)
                opened.append(events)
                await next_event(events)  # the next add fills the buffer; the rest wait
                return events

        try:
            events = await asyncio.wait_for(operator(), TIMEOUT)  # hung here before
        except TimeoutError:
            await opened[0].aclose()  # lets the stuck shutdown end: fail, do not hang
            raise
        assert informer.is_stopped()
        rest = [event async for event in events]  # ends: no StopAsyncIteration wait forever
        assert len(rest) <= 3 and all(isinstance(e, Added) for e in rest)

    run_debug(main, caplog)


def test_h28_the_raising_sync_wait_has_an_async_twin_with_the_same_verdict(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """H28: `wait_for_cache_sync_or_raise_async` raises what `wait_for_cache_sync_or_raise`
    raises: "start() was not called" for informers requested but never started, and the
    informer that did not sync with its last error (no server here) after the timeout."""
    from kubernetes.client import ApiClient, Configuration

    config = Configuration()
    config.host = "http://127.0.0.1:9"  # discard port: connection refused
    api = ApiClient(config)

    async def main() -> None:
        factory = SharedInformerFactory(api)
        informer = factory.core().v1().config_maps().informer()
        try:
            with pytest.raises(CacheSyncTimeoutError, match="start\\(\\) was not called"):
                await factory.wait_for_cache_sync_or_raise_async(0.1)
            factory.start()
            assert await asyncio.to_thread(
                eventually, lambda: informer.last_error() is not None, TIMEOUT
            )
            with pytest.raises(CacheSyncTimeoutError, match="configmaps") as raised:
                await factory.wait_for_cache_sync_or_raise_async(0.1)
            with pytest.raises(CacheSyncTimeoutError) as raised_sync:
                await asyncio.to_thread(factory.wait_for_cache_sync_or_raise, 0.1)
            assert str(raised.value) == str(raised_sync.value)
        finally:
            await factory.shutdown_async()

    run_debug(main, caplog)
