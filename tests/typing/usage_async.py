"""Type-checked only (mypy tests/typing): the keyed-by-type and asyncio APIs infer the
right types without annotations."""

from __future__ import annotations

from typing import assert_type

from examples.informers.demo.v1.widget import Widget, WidgetLister
from kubeinformers.generated.core.v1 import Pod, PodLister
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.cache.events import Added, Deleted, Updated
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.leaderelection.async_elector import AsyncLeaderElector
from kubeinformers.runtime.leaderelection.elector import ResourceLock


async def typed(factory: SharedInformerFactory) -> None:
    assert_type(factory.informer(Pod), SharedIndexInformer[Pod])
    assert_type(factory.lister(Pod), PodLister)
    assert_type(factory.lister(Widget), WidgetLister)
    async with factory:
        async for event in factory.informer(Pod).events():
            match event:
                case Added(obj=obj):
                    assert_type(obj, Pod)
                case Updated(old=old, new=new):
                    assert_type(old, Pod)
                    assert_type(new, Pod)
                case Deleted(obj=gone):
                    assert_type(gone, Pod | DeletedFinalStateUnknown[Pod])


def handlers(factory: SharedInformerFactory) -> None:
    pods = factory.informer(Pod)
    pods.add_event_handler(on_add=lambda pod: print(pod.metadata))
    pods.add_event_handler(on_add=lambda pod, initial: print(pod.metadata, initial))


def leader_callbacks(lock: ResourceLock) -> None:
    """on_new_leader takes a plain function or an `async def` one."""

    def told(identity: str) -> None:
        print(identity)

    async def told_async(identity: str) -> None:
        print(identity)

    AsyncLeaderElector(lock, on_new_leader=told)
    AsyncLeaderElector(lock, on_new_leader=told_async)
