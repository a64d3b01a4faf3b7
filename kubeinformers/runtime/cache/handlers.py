"""What an informer calls: the handler protocol and its two adapters (client-go: controller.go).

A handler's callbacks may be plain functions or coroutine functions; a coroutine function's
result (an awaitable) is run by the processor on the event loop named at registration, so every
callback type here returns `None | Awaitable[None]`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

HandlerResult = Awaitable[None] | None
AddFunc = Callable[[T, bool], HandlerResult]
SimpleAddFunc = Callable[[T], HandlerResult]
"""An `on_add` that does not care whether the object came with the initial list."""
UpdateFunc = Callable[[T, T], HandlerResult]
DeleteFunc = Callable[[T | DeletedFinalStateUnknown[T]], HandlerResult]
FilterFunc = Callable[[T | DeletedFinalStateUnknown[T]], bool]


class ResourceEventHandler(Protocol[T_contra]):
    """Receives notifications about one resource.

    `on_delete` gets the final object of a watch DELETE, or a `DeletedFinalStateUnknown`
    tombstone when the deletion was only noticed by a relist (A5): the type makes callers
    handle both. Objects are shared with the cache: treat them as read-only.
    """

    def on_add(self, obj: T_contra, is_in_initial_list: bool) -> HandlerResult: ...

    def on_update(self, old: T_contra, new: T_contra) -> HandlerResult: ...

    def on_delete(self, obj: T_contra | DeletedFinalStateUnknown[T_contra]) -> HandlerResult: ...


class ResourceEventHandlerFuncs(Generic[T]):
    """A handler made of optional functions; a missing function ignores that notification (E6).

    Unlike client-go's ResourceEventHandlerFuncs (which drops it) `on_add` receives
    `is_in_initial_list`, like ResourceEventHandlerDetailedFuncs: this is the only adapter.
    """

    __slots__ = ("add_func", "delete_func", "update_func")

    def __init__(
        self,
        on_add: AddFunc[T] | SimpleAddFunc[T] | None = None,
        on_update: UpdateFunc[T] | None = None,
        on_delete: DeleteFunc[T] | None = None,
    ) -> None:
        # `on_add(obj)` or `on_add(obj, is_in_initial_list)`: told apart once, here.
        self.add_func: AddFunc[T] | None = None if on_add is None else adapt_add_func(on_add)
        self.update_func = on_update
        self.delete_func = on_delete

    def on_add(self, obj: T, is_in_initial_list: bool) -> HandlerResult:
        if self.add_func is None:
            return None
        return self.add_func(obj, is_in_initial_list)

    def on_update(self, old: T, new: T) -> HandlerResult:
        if self.update_func is None:
            return None
        return self.update_func(old, new)

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> HandlerResult:
        if self.delete_func is None:
            return None
        return self.delete_func(obj)

    def functions(self) -> tuple[Callable[..., HandlerResult], ...]:
        """The functions set, so a registration can tell whether any is a coroutine function."""
        return tuple(f for f in (self.add_func, self.update_func, self.delete_func) if f)

    def __repr__(self) -> str:
        names = [getattr(f, "__qualname__", repr(f)) for f in self.functions()]
        return f"ResourceEventHandlerFuncs({', '.join(names)})"


class _IgnoreInitialList(Generic[T]):
    """Calls a one-argument `on_add`; keeps the function's name and coroutine-ness visible."""

    __slots__ = ("__qualname__", "func")

    def __init__(self, func: SimpleAddFunc[T]) -> None:
        self.func = func
        self.__qualname__ = getattr(func, "__qualname__", repr(func))

    def __call__(self, obj: T, is_in_initial_list: bool) -> HandlerResult:
        return self.func(obj)


def adapt_add_func(func: AddFunc[T] | SimpleAddFunc[T]) -> AddFunc[T]:
    """`func` as a two-argument `on_add`: a function that cannot take `is_in_initial_list`
    (one positional parameter) is wrapped; anything else is used as it is."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):  # a builtin without a signature: assume the full form
        return func  # type: ignore[return-value]
    try:
        signature.bind(None, False)
    except TypeError:
        try:
            signature.bind(None)
        except TypeError:
            raise TypeError(
                f"on_add {getattr(func, '__qualname__', func)!r} must take (obj) or "
                "(obj, is_in_initial_list)"
            ) from None
        return _IgnoreInitialList(func)  # type: ignore[arg-type]
    return func  # type: ignore[return-value]


def is_coroutine_callback(func: object) -> bool:
    """A coroutine function, also behind the one-argument `on_add` adapter."""
    if isinstance(func, _IgnoreInitialList):
        func = func.func
    return inspect.iscoroutinefunction(func)


class FilteringResourceEventHandler(Generic[T]):
    """Passes on only the notifications whose objects the filter accepts (E6).

    An update that moves an object into the filter becomes `on_add(new, False)`, one that
    moves it out becomes `on_delete(old)`; for deletes the filter sees the tombstone when one
    is delivered.
    """

    __slots__ = ("filter_func", "handler")

    def __init__(self, filter_func: FilterFunc[T], handler: ResourceEventHandler[T]) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: T, is_in_initial_list: bool) -> HandlerResult:
        if not self.filter_func(obj):
            return None
        return self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: T, new: T) -> HandlerResult:
        old_ok = self.filter_func(old)
        new_ok = self.filter_func(new)
        if old_ok and new_ok:
            return self.handler.on_update(old, new)
        if new_ok:
            return self.handler.on_add(new, False)
        if old_ok:
            return self.handler.on_delete(old)
        return None

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> HandlerResult:
        if not self.filter_func(obj):
            return None
        return self.handler.on_delete(obj)

    def __repr__(self) -> str:
        return f"FilteringResourceEventHandler({self.handler!r})"


__all__ = [
    "AddFunc",
    "DeleteFunc",
    "FilterFunc",
    "FilteringResourceEventHandler",
    "HandlerResult",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SimpleAddFunc",
    "UpdateFunc",
    "adapt_add_func",
    "is_coroutine_callback",
]
