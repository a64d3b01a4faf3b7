"""Small models and recording handlers shared by the processor/controller/informer tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import Field

from kubeinformers.runtime.api.keys import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
)
from kubeinformers.runtime.api.model import KubeModel

WAIT = 10.0  # generous upper bound for Event waits; tests finish far sooner


class Meta(KubeModel):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    labels: dict[str, str] | None = None
    uid: str | None = None


class Pod(KubeModel):
    metadata: Meta | None = None
    value: int = 0


def pod(name: str, rv: str = "", *, ns: str = "default", value: int = 0, **labels: str) -> Pod:
    return Pod(
        metadata=Meta(name=name, namespace=ns, resource_version=rv, labels=labels or None),
        value=value,
    )


def describe(obj: object) -> str:
    """`key@rv` for objects, `T{key}` for tombstones — compact to compare in assertions."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return f"T{{{obj.key}}}"
    rv = getattr(getattr(obj, "metadata", None), "resource_version", None)
    if rv is None and isinstance(obj, dict):
        rv = obj.get("metadata", {}).get("resourceVersion")
    return f"{deletion_handling_meta_namespace_key(obj)}@{rv}"


class Recorder:
    """Records callbacks as tuples and signals when `expected` of them have arrived."""

    def __init__(
        self, expected: int = 0, on_event: Callable[[tuple[Any, ...]], None] | None = None
    ):
        self.events: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()
        self.expected = expected
        self.reached = threading.Event()
        self.on_event = on_event
        if expected == 0:
            self.reached.set()

    def expect(self, n: int) -> threading.Event:
        """An Event set once `n` callbacks in total have been recorded."""
        with self.lock:
            self.expected = n
            self.reached = threading.Event()
            if len(self.events) >= n:
                self.reached.set()
            return self.reached

    def _record(self, event: tuple[Any, ...]) -> None:
        if self.on_event is not None:
            self.on_event(event)
        with self.lock:
            self.events.append(event)
            if len(self.events) >= self.expected:
                self.reached.set()

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._record(("add", describe(obj), is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        self._record(("update", describe(old), describe(new)))

    def on_delete(self, obj: Any) -> None:
        self._record(("delete", describe(obj)))

    def snapshot(self) -> list[tuple[Any, ...]]:
        with self.lock:
            return list(self.events)


class Runner:
    """Runs something taking a stop Event on a named thread; `stop()` joins it."""

    def __init__(self, target: Callable[[threading.Event], None], name: str = "ctl-run") -> None:
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.ended = threading.Event()

        def main() -> None:
            try:
                target(self.stop_event)
            except BaseException as e:
                self.error = e
            finally:
                self.ended.set()

        self.thread = threading.Thread(target=main, name=name)
        self.thread.start()

    def stop(self, timeout: float = WAIT) -> None:
        self.stop_event.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "run() did not return after stop"


def wait_for(cond: Callable[[], bool], timeout: float = WAIT) -> bool:
    """Poll a condition that has no Event of its own, with a deadline (never a bare sleep)."""
    tick = threading.Event()
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        tick.wait(0.005)
    return True
