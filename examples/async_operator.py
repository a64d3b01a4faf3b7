"""Example operator written with the asyncio API only: one ConfigMap per Widget.

    python -m examples.async_operator --local      # against an embedded LocalApiServer
    python -m examples.async_operator              # against your kubeconfig's cluster

For every Widget (the example CRD of crds/, typed informers in examples/informers) it keeps a
ConfigMap `widget-<name>` in the widget's namespace holding the widget's size and colour, and
deletes it when the widget goes. The pieces, all on one event loop:

* `async with factory:` — the Widget and ConfigMap informers (keyed by type:
  `factory.informer(Widget)`), started, synced and shut down with the block;
* a secondary index on ConfigMaps by owning widget (`BY_WIDGET`), which the reconcile reads
  to find what a widget owns;
* an `AsyncReconcileLoop` (`async def reconcile(key)`) with rate-limited retries: a ConfigMap of
  the same name that is not ours makes it `Requeue` until that one is gone;
* writes through the factory's typed client (`factory.async_client()`): server-side apply of
  the ConfigMap's apply configuration (`ConfigMapApply`: only the fields it manages), typed errors, and read-your-writes built in: a write returns once the
  ConfigMap informer has it, so the next reconcile reads fresh state;
* `AsyncLeaderElector`: only the replica holding the Lease reconciles;
* `informer.events()`: a typed audit log of widget changes;
* `/healthz` on a small asyncio HTTP server: 200 when every informer is healthy and the
  elector is not stuck, else 503 with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from examples.informers.demo.v1.widget import Widget, WidgetSpec
from kubeinformers import (
    Added,
    AsyncClient,
    AsyncLeaderElector,
    AsyncReconcileLoop,
    Conflict,
    Deleted,
    DeletedFinalStateUnknown,
    ItemExponentialFailureRateLimiter,
    LeaseLock,
    NotFound,
    NotFoundError,
    Requeue,
    Updated,
)
from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.generated.core.v1.apply import ConfigMapApply
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import ObjectMeta

OWNER_LABEL = "kubeinformers.example/widget"  # "<namespace>.<widget name>" of the owner
BY_WIDGET = "by-widget"  # ConfigMap index: the owning widget's key "ns/name"
LEASE_NAME = "widget-operator"
FIELD_MANAGER = "widget-operator"  # who owns the fields the operator applies

log = logging.getLogger("examples.async_operator")


def configmap_name(widget_name: str) -> str:
    return f"widget-{widget_name}"


def by_widget(obj: Any) -> list[str]:
    """Index function: the key of the widget owning a ConfigMap (none for the others)."""
    labels = (obj.metadata.labels or {}) if obj.metadata else {}
    owner = labels.get(OWNER_LABEL)
    if not owner or "." not in owner:
        return []
    namespace, _, name = owner.partition(".")
    return [f"{namespace}/{name}"]


def _name(obj: Widget | None) -> str:
    return (obj.metadata.name or "") if obj is not None and obj.metadata else "?"


def owner_key(obj: ConfigMap | DeletedFinalStateUnknown[ConfigMap]) -> str:
    """A ConfigMap event enqueues its owning widget (someone deleted or changed ours)."""
    cm = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    keys = by_widget(cm)
    return keys[0] if keys else ""


class WidgetOperator:
    """The operator's parts; `run()` runs them until cancelled."""

    def __init__(self, api: Any, namespace: str, identity: str, health_port: int = 0) -> None:
        self.api = api
        self.namespace = namespace
        self.health_port = health_port
        self.factory = SharedInformerFactory(api, namespace=namespace)
        self.widgets = self.factory.informer(Widget)
        self.config_maps = self.factory.informer(ConfigMap)
        self.config_maps.add_indexers({BY_WIDGET: by_widget})
        self.widget_lister = self.factory.lister(Widget)
        self.reconciler: AsyncReconcileLoop[str] = AsyncReconcileLoop(
            "widget-configmaps",
            self.reconcile,
            workers=2,
            rate_limiter=ItemExponentialFailureRateLimiter(0.05, 5.0),
        )
        self.reconciler.watch(self.widgets)
        self.reconciler.watch(self.config_maps, owner_key, predicate=lambda cm: bool(owner_key(cm)))
        self.elector = AsyncLeaderElector(
            LeaseLock(api, namespace, LEASE_NAME, identity),
            lease_duration=4.0,
            renew_deadline=3.0,
            retry_period=0.5,
            release_on_cancel=True,
            name=identity,
        )
        self.client: AsyncClient = self.factory.async_client(field_manager=FIELD_MANAGER)
        self.health_address: tuple[str, int] | None = None
        self.leading = asyncio.Event()

    # ------------------------------------------------------------------ reconcile

    async def reconcile(self, key: str) -> float | None:
        namespace, _, name = key.partition("/")
        try:
            widget: Widget | None = self.widget_lister.widgets(namespace).get(name)
        except NotFoundError:
            widget = None
        owned: list[ConfigMap] = self.config_maps.get_indexer().by_index(BY_WIDGET, key)
        if widget is None or widget.spec is None:
            for cm in owned:
                if cm.metadata and cm.metadata.name:
                    await self._delete(namespace, cm.metadata.name)
            return None
        desired = {"size": widget.spec.size, "color": widget.spec.color or ""}
        cm_name = configmap_name(name)
        current = self.config_maps.get_indexer().get_by_key(f"{namespace}/{cm_name}")
        if current is not None and current not in owned:
            raise Requeue(f"ConfigMap {namespace}/{cm_name} exists and is not ours")
        if current is not None and current.data == desired:
            return None
        # Server-side apply of exactly the fields the operator manages; the write returns once
        # the ConfigMap informer has it (read your writes), so the next reconcile sees it.
        # An apply configuration: only these fields, typed by mypy, and the answer a ConfigMap.
        ours = ConfigMapApply(
            metadata={
                "name": cm_name,
                "namespace": namespace,
                "labels": {OWNER_LABEL: f"{namespace}.{name}"},
            },
            data=desired,
        )
        try:
            await self.client.apply(ours)
        except Conflict as err:  # another manager owns a field: retry once it has let go
            raise Requeue(f"conflict applying ConfigMap {namespace}/{cm_name}") from err
        log.info("ConfigMap %s/%s now says %s", namespace, cm_name, desired)
        return None

    async def _delete(self, namespace: str, name: str) -> None:
        try:
            await self.client.delete(ConfigMap, name, namespace=namespace)
            log.info("deleted ConfigMap %s/%s: its widget is gone", namespace, name)
        except NotFound:
            pass

    # ------------------------------------------------------------------ audit and health

    async def audit(self) -> None:
        """Typed events of the widget informer, logged."""
        async with self.widgets.events() as events:
            async for event in events:
                match event:
                    case Added(obj=widget):
                        log.info("widget added: %s", _name(widget))
                    case Updated(new=widget):
                        log.info("widget changed: %s", _name(widget))
                    case Deleted(obj=gone):
                        # A tombstone when only a relist noticed the deletion.
                        final = gone.obj if isinstance(gone, DeletedFinalStateUnknown) else gone
                        log.info("widget deleted: %s", _name(final))

    def health(self) -> tuple[bool, str]:
        report = self.factory.health()
        healthy = report.healthy
        detail = report.describe()
        try:
            self.elector.check(max_tolerable_expired_lease=2.0)
        except RuntimeError as err:
            healthy, detail = False, f"{detail}\nleader election: {err}"
        leader = self.elector.get_leader() or "none yet"
        return healthy, f"{detail}\nleader: {leader}"

    async def _serve_health(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 5.0)
            path = request.split()[1].decode() if len(request.split()) > 1 else ""
            if path == "/healthz":
                healthy, detail = self.health()
                status = "200 OK" if healthy else "503 Service Unavailable"
                body = (("ok\n" if healthy else "not ready\n") + detail + "\n").encode()
            else:
                status, body = "404 Not Found", b"try /healthz\n"
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    @contextlib.asynccontextmanager
    async def health_server(self) -> AsyncIterator[tuple[str, int]]:
        server = await asyncio.start_server(self._serve_health, "127.0.0.1", self.health_port)
        host, port = server.sockets[0].getsockname()[:2]
        self.health_address = (host, port)
        log.info("health endpoint: http://%s:%d/healthz", host, port)
        try:
            yield host, port
        finally:
            server.close()
            await server.wait_closed()

    # ------------------------------------------------------------------ running

    async def _lead(self) -> None:
        self.leading.set()
        try:
            await self.reconciler.run()
        finally:
            self.leading.clear()

    async def run(self) -> None:
        """Until cancelled: informers, audit log and health endpoint always; the reconciler
        while this replica holds the Lease."""
        async with self.health_server(), self.factory:
            audit = asyncio.create_task(self.audit(), name="widget-audit")
            try:
                while True:  # a lost lease: campaign again
                    await self.elector.run(self._lead)
            finally:
                audit.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await audit


async def get_healthz(address: tuple[str, int]) -> tuple[int, str]:
    """GET /healthz (a tiny client for the demo and the tests)."""
    reader, writer = await asyncio.open_connection(*address)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    await writer.drain()
    response = (await reader.read()).decode()
    writer.close()
    await writer.wait_closed()
    status = int(response.split()[1])
    return status, response.split("\r\n\r\n", 1)[1]


# --------------------------------------------------------------------------- the demo


def new_widget(namespace: str, name: str, size: Any, color: str) -> Widget:
    return Widget(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=WidgetSpec(size=size, color=color),
    )


async def _wait(condition: Any, what: str, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"async operator demo: timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def demo(api: Any, namespace: str, say: Any = print, timeout: float = 30.0) -> None:
    """Run the operator, create widgets (one blocked by a foreign ConfigMap: retried until
    that is gone), check /healthz, delete a widget, stop. The CRDs must be installed."""
    # Built in a worker thread: creating the informers imports the protobuf schema of the
    # built-in kinds once (a few hundred ms), which must not block the event loop.
    operator = await asyncio.to_thread(
        WidgetOperator, api, namespace, identity=f"{socket.gethostname()}-demo"
    )
    lister = operator.factory.lister(ConfigMap)

    def data(name: str) -> dict[str, str] | None:
        try:
            cm = lister.config_maps(namespace).get(name)
        except NotFoundError:
            return None
        return dict(sorted((cm.data or {}).items())) if cm.metadata and cm.metadata.labels else None

    client = AsyncClient(api)  # the demo's own writes: another actor than the operator
    foreign = ConfigMap(
        metadata=ObjectMeta(name=configmap_name("w-blue"), namespace=namespace),
        data={"owner": "someone else"},
    )
    await client.create(foreign)
    task = asyncio.create_task(operator.run(), name="widget-operator")
    try:
        await _wait(operator.leading.is_set, "the operator to lead", timeout)
        assert operator.health_address is not None
        status, _ = await get_healthz(operator.health_address)
        say(f"  async operator: leading, /healthz answers {status}")
        for name, size, color in (("w-red", "small", "red"), ("w-blue", "large", "blue")):
            await client.create(new_widget(namespace, name, size, color))
        await _wait(lambda: data("widget-w-red") is not None, "ConfigMap widget-w-red", timeout)
        say(f"  async operator: widget-w-red -> {data('widget-w-red')}")
        # w-blue's reconcile must have met the foreign ConfigMap (and been requeued) before
        # that ConfigMap goes: otherwise there is nothing to retry
        blue_key = f"{namespace}/w-blue"
        await _wait(
            lambda: operator.reconciler.queue.num_requeues(blue_key) > 0,
            "widget-w-blue to be requeued",
            timeout,
        )
        say("  async operator: widget-w-blue is blocked by a ConfigMap that is not ours")
        await client.delete(ConfigMap, configmap_name("w-blue"), namespace=namespace)
        await _wait(lambda: data("widget-w-blue") is not None, "ConfigMap widget-w-blue", timeout)
        say(f"  async operator: retried, widget-w-blue -> {data('widget-w-blue')}")
        for name in ("w-red", "w-blue"):
            await client.delete(Widget, name, namespace=namespace)
        await _wait(
            lambda: data("widget-w-red") is None and data("widget-w-blue") is None,
            "the ConfigMaps of deleted widgets to go",
            timeout,
        )
        say("  async operator: widgets deleted, their ConfigMaps too")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    say("  async operator: stopped (lease released, informers shut down)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="run the demo on a LocalApiServer")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--health-port", type=int, default=8080)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.local:
        from examples.demo import NAMESPACE, install
        from kubeinformers.testing import LocalApiServer

        with LocalApiServer() as server:
            api = server.api_client()
            install(api, time.monotonic() + 60.0)  # the CRDs and the demo namespace
            asyncio.run(demo(api, NAMESPACE))
        return 0
    from kubernetes import config

    api = config.new_client_from_config()  # type: ignore[no-untyped-call]
    operator = WidgetOperator(api, args.namespace, socket.gethostname(), args.health_port)
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(until_stopped(operator.run()))
    return 0


async def until_stopped(work: Awaitable[None]) -> None:
    """`work` until Ctrl-C or SIGTERM, then its clean end. asyncio.run cancels the main task
    on Ctrl-C only; SIGTERM (what a Pod is stopped with) would kill the process at once: no
    drain of the reconciles in flight, the Lease kept until it expires (the other replicas
    wait lease_duration). Here it cancels the task too, so `run` ends as on Ctrl-C."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows' loops
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        await work
    finally:
        with contextlib.suppress(NotImplementedError):
            loop.remove_signal_handler(signal.SIGTERM)


if __name__ == "__main__":
    sys.exit(main())
