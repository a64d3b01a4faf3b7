"""Typed usage of the informer API, checked by mypy --strict (not collected by pytest).

tests/runtime/test_typing.py derives wrong variants of this file and asserts mypy rejects them:
an `on_delete` for a model must accept `Pod | DeletedFinalStateUnknown[Pod]`.
"""

from __future__ import annotations

import asyncio
import threading

from pydantic import Field

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.cache.handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from kubeinformers.runtime.cache.informer import (
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from kubeinformers.testing import FakeListerWatcher


class ObjectMeta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")


class Pod(KubeModel):
    metadata: ObjectMeta | None = None


def pod_name(pod: Pod) -> str:
    return pod.metadata.name or "" if pod.metadata else ""


def on_add(pod: Pod, is_in_initial_list: bool) -> None:
    print("added", pod_name(pod), is_in_initial_list)


def on_update(old: Pod, new: Pod) -> None:
    print("updated", pod_name(old), pod_name(new))


def on_delete(obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:
    # A deletion seen only by a relist arrives as a tombstone whose object may be stale or None.
    if isinstance(obj, DeletedFinalStateUnknown):
        print("deleted (final state unknown)", obj.key, obj.obj and pod_name(obj.obj))
        return
    print("deleted", pod_name(obj))


class PodHandler:
    """A handler object: structurally a ResourceEventHandler[Pod]."""

    def on_add(self, obj: Pod, is_in_initial_list: bool) -> None:
        on_add(obj, is_in_initial_list)

    def on_update(self, old: Pod, new: Pod) -> None:
        on_update(old, new)

    def on_delete(self, obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:
        on_delete(obj)


async def on_add_async(pod: Pod, is_in_initial_list: bool) -> None:
    await asyncio.sleep(0)


def in_default(obj: Pod | DeletedFinalStateUnknown[Pod]) -> bool:
    target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    return (
        target is not None
        and target.metadata is not None
        and target.metadata.namespace == "default"
    )


def main(loop: asyncio.AbstractEventLoop) -> None:
    source: FakeListerWatcher[Pod] = FakeListerWatcher()
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(source, Pod, resync_period=30.0)
    reg: ResourceEventHandlerRegistration[Pod] = informer.add_event_handler(
        on_add=on_add, on_update=on_update, on_delete=on_delete
    )
    informer.add_indexers({"by-name": lambda pod: [pod_name(pod)]})  # `pod` is a Pod (B17)
    handler: ResourceEventHandler[Pod] = PodHandler()
    informer.add_event_handler(handler, resync_period=0)
    informer.add_event_handler(FilteringResourceEventHandler(in_default, PodHandler()))
    informer.add_event_handler(ResourceEventHandlerFuncs(on_delete=on_delete))
    informer.add_event_handler(on_add=on_add_async, loop=loop)
    stop = threading.Event()
    threading.Thread(target=informer.run, args=(stop,)).start()
    synced: bool = reg.has_synced() and informer.has_synced()
    pods: list[Pod] = informer.get_indexer().list()
    cached: Pod | None = informer.get_store().get_by_key("default/nginx")
    print(synced, [pod_name(p) for p in pods], cached, informer.last_sync_resource_version())
    informer.remove_event_handler(reg)
    stop.set()
