"""Reflector rules D1-D21 (docs/behaviour.md section D) against scripted ListerWatchers.

No test waits for real backoff: the clock and the backoff wait are injected. A script that runs
out of watches sets the stop event, so `run()` returns on the test's own thread.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubeinformers.runtime.api.errors import (
    ApiStatusError,
    error_from_status,
    is_too_large_resource_version,
)
from kubeinformers.runtime.api.listwatch import (
    INITIAL_EVENTS_END_ANNOTATION,
    ListOptions,
    ObjectList,
    Status,
    WatchEvent,
)
from kubeinformers.runtime.api.model import StatusCause, StatusDetails
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.runtime.reflector.reflector import (
    Reflector,
    VeryShortWatchError,
    WatchListInconsistencyError,
    default_watch_error_handler,
)
from kubeinformers.runtime.reflector.support import wrap_list_error

# ---------------------------------------------------------------------------------- helpers


def obj(name: str, rv: str, ns: str = "default", **extra: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": ns, "resourceVersion": rv}
    md.update(extra)
    return {"metadata": md}


def bookmark(rv: str, end: bool | str = False) -> WatchEvent[Any]:
    md: dict[str, Any] = {"resourceVersion": rv}
    if end is not False:
        md["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true" if end is True else end}
    return WatchEvent("BOOKMARK", {"metadata": md})


def ev(type_: Any, o: Any) -> WatchEvent[Any]:
    return WatchEvent(type_, o)


def status_error(code: int, reason: str, message: str = "", **details: Any) -> ApiStatusError:
    return ApiStatusError(code, reason, message or reason, details=details or None)


def error_event(code: int, reason: str, message: str = "") -> WatchEvent[Any]:
    return WatchEvent("ERROR", Status(code=code, reason=reason, message=message or reason))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedWatch:
    """Yields its events, advancing the fake clock by `duration` before closing.

    With `block=True` it stays open after its events until stopped (like a live stream).
    """

    def __init__(
        self,
        events: list[WatchEvent[Any]] | None = None,
        *,
        duration: float = 5.0,
        block: bool = False,
        clock: FakeClock | None = None,
    ) -> None:
        self.events = events or []
        self.duration = duration
        self.block = block
        self.clock = clock
        self.stopped = threading.Event()
        self.delivered = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent[Any]]:
        for e in self.events:
            if self.stopped.is_set():
                return
            yield e
        self.delivered.set()
        if self.block:
            self.stopped.wait(10)
        if self.clock is not None:
            self.clock.now += self.duration

    def stop(self) -> None:
        self.stopped.set()


Step = Any  # ObjectList | Exception | ScriptedWatch | Callable


class ScriptedLW:
    """Answers list/watch calls from scripts; when the watch script runs out it sets `stop`."""

    def __init__(
        self,
        stop: threading.Event,
        lists: list[Step] | None = None,
        watches: list[Step] | None = None,
        *,
        clock: FakeClock | None = None,
        watch_list_unsupported: bool = False,
    ) -> None:
        self.stop_event = stop
        self.lists = list(lists or [])
        self.watches = list(watches or [])
        self.clock = clock
        self.list_calls: list[ListOptions] = []
        self.watch_calls: list[ListOptions] = []
        self.log: list[str] = []
        self.unsupported = watch_list_unsupported

    def is_watch_list_semantics_unsupported(self) -> bool:
        return self.unsupported

    def list(self, options: ListOptions) -> ObjectList[Any]:
        self.list_calls.append(options.copy())
        self.log.append("list")
        if not self.lists:
            self.stop_event.set()
            raise RuntimeError("list script exhausted")
        step = self.lists.pop(0)
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            step = step()
        assert isinstance(step, ObjectList)
        return step

    def watch(self, options: ListOptions) -> ScriptedWatch:
        self.watch_calls.append(options.copy())
        self.log.append("watch")
        if not self.watches:
            self.stop_event.set()
            return ScriptedWatch([])
        step = self.watches.pop(0)
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, ScriptedWatch):
            step = step()
        if step.clock is None:
            step.clock = self.clock
        return step  # type: ignore[no-any-return]


class RecordingStore:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.items: dict[str, Any] = {}
        self.resyncs = 0
        self.transformer: Callable[[Any], Any] | None = None

    @staticmethod
    def key(o: Any) -> str:
        return f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"

    def add(self, o: Any) -> None:
        self.calls.append(("add", o))
        self.items[self.key(o)] = o

    def update(self, o: Any) -> None:
        self.calls.append(("update", o))
        self.items[self.key(o)] = o

    def delete(self, o: Any) -> None:
        self.calls.append(("delete", o))
        self.items.pop(self.key(o), None)

    def replace(self, objs: list[Any], rv: str) -> None:
        self.calls.append(("replace", (list(objs), rv)))
        self.items = {self.key(o): o for o in objs}

    def resync(self) -> None:
        self.resyncs += 1
        self.calls.append(("resync", None))


class Harness:
    """A reflector over a ScriptedLW with a fake clock and recorded backoff waits."""

    def __init__(
        self,
        lists: list[Step] | None = None,
        watches: list[Step] | None = None,
        *,
        store: Any = None,
        errors: list[BaseException] | None = None,
        **kwargs: Any,
    ) -> None:
        self.stop = threading.Event()
        self.clock = FakeClock()
        self.waits: list[float] = []
        unsupported = kwargs.pop("watch_list_unsupported", False)
        self.lw = ScriptedLW(
            self.stop, lists, watches, clock=self.clock, watch_list_unsupported=unsupported
        )
        self.store = store if store is not None else RecordingStore()
        self.errors: list[BaseException] = errors if errors is not None else []
        kwargs.setdefault("use_watch_list", False)
        kwargs.setdefault("rand", lambda: 0.0)
        self.reflector: Reflector[Any] = Reflector(
            self.lw,
            dict,
            self.store,
            name="test",
            watch_error_handler=lambda r, e: self.errors.append(e),
            clock=self.clock,
            wait=self._wait,
            **kwargs,
        )

    def _wait(self, event: threading.Event, seconds: float) -> bool:
        self.waits.append(seconds)
        return event.is_set()

    def run(self) -> Harness:
        self.reflector.run(self.stop)
        return self

    def list_rvs(self) -> list[tuple[str | None, int | None, str | None]]:
        return [(o.resource_version, o.limit, o.continue_) for o in self.lw.list_calls]


def page(rv: str, *items: Any, cont: str | None = None) -> ObjectList[Any]:
    return ObjectList(items=list(items), resource_version=rv, continue_=cont)


# ---------------------------------------------------------------------------------- D1, D2


def test_d1_name_defaults_to_caller_file_and_line() -> None:
    stop = threading.Event()
    r: Reflector[Any] = Reflector(ScriptedLW(stop), None, RecordingStore())
    assert r.name.startswith("test_reflector.py:")


def test_d1_type_description_unspecified_given_or_type_name() -> None:
    stop = threading.Event()
    assert Reflector(ScriptedLW(stop), None, RecordingStore()).type_description == "<unspecified>"
    assert Reflector(ScriptedLW(stop), dict, RecordingStore()).type_description == "builtins.dict"
    r: Reflector[Any] = Reflector(ScriptedLW(stop), dict, RecordingStore(), type_description="pods")
    assert r.type_description == "pods"


def test_d2_min_watch_timeout_below_five_minutes_is_ignored() -> None:
    h = Harness([page("1")], [ScriptedWatch()], min_watch_timeout=60, rand=lambda: 0.999)
    h.run()
    assert h.lw.watch_calls[0].timeout_seconds == 599


def test_d2_min_watch_timeout_above_five_minutes_is_honoured() -> None:
    h = Harness([page("1")], [ScriptedWatch()], min_watch_timeout=1000, rand=lambda: 0.5)
    h.run()
    assert h.lw.watch_calls[0].timeout_seconds == 1500


# ---------------------------------------------------------------------------------- D3, D4


def test_d3_run_loop_reports_errors_and_backs_off_between_attempts() -> None:
    boom = status_error(500, "InternalError", "etcd down")
    h = Harness([boom, boom, page("7")], [ScriptedWatch()])
    h.run()
    assert len(h.lw.list_calls) == 3
    assert [type(e) for e in h.errors] == [ApiStatusError, ApiStatusError]
    assert "failed to list builtins.dict" in str(h.errors[0])
    assert h.errors[0].code == 500  # type: ignore[attr-defined]
    # one backoff delay after each failed attempt: 0.8 then 1.6 (jitter 0 here)
    assert h.waits[:2] == [0.8, 1.6]


class _LongBackoff(Backoff):
    """Every delay 10 minutes (a real outage's later steps), the first delay 0.05 s."""

    def __init__(self) -> None:
        super().__init__(initial=0.05)

    def next_delay(self) -> float:
        return 600.0


def _waiting_reflector(
    lists: list[Step], watches: list[Step] | None = None
) -> tuple[Reflector[Any], ScriptedLW, threading.Event, threading.Event, threading.Thread]:
    """A reflector on its own thread that really waits out its backoff (10 minutes), and an
    event set each time it begins a wait."""
    stop = threading.Event()
    waiting = threading.Event()

    def wait(event: threading.Event, seconds: float) -> bool:
        waiting.set()
        return event.wait(seconds)

    lw = ScriptedLW(stop, lists, [ScriptedWatch()] if watches is None else watches)
    reflector: Reflector[Any] = Reflector(
        lw,
        dict,
        RecordingStore(),
        name="test",
        watch_error_handler=lambda r, e: None,
        use_watch_list=False,
        backoff=_LongBackoff(),
        wait=wait,
    )
    thread = threading.Thread(target=reflector.run, args=(stop,), daemon=True)
    thread.start()
    return reflector, lw, stop, waiting, thread


@pytest.mark.parametrize(
    "failure",
    [
        ConnectionRefusedError(111, "Connection refused"),
        status_error(410, "Expired", "too old resource version: 203 (204)"),
    ],
    ids=["unreachable", "expired"],
)
def test_d4_m1_a_wait_for_an_unreachable_server_or_a_relist_ends_when_a_write_is_answered(
    failure: Exception,
) -> None:
    """The server away, or a relist due (an apiserver restarted: its watch cache is newer than
    the cache's resourceVersion): a write the server answers ends the wait."""
    listed = threading.Event()

    def second_list() -> ObjectList[Any]:
        listed.set()
        return page("7")

    reflector, lw, stop, waiting, thread = _waiting_reflector([failure, second_list])
    try:
        assert waiting.wait(10)
        waiting.clear()
        assert reflector.retry_now()  # a write reached the server (the factory's client)
        assert listed.wait(30)  # the list is tried again at once, not in 10 minutes
        assert len(lw.list_calls) == 2
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_d4_m1_after_a_write_was_answered_the_next_failures_wait_only_the_first_delay() -> None:
    """An apiserver restart: the write ends the wait for the unreachable server, the watch
    then finds its resourceVersion expired (410) and a relist is due. That wait, begun just
    after the server answered, lasts the first delay, not the next step of the backoff: the
    write's one retry_now() is enough for the cache to catch up."""
    listed = threading.Event()

    def third_list() -> ObjectList[Any]:
        listed.set()
        return page("9")

    refused = ConnectionRefusedError(111, "Connection refused")
    expired = ScriptedWatch([error_event(410, "Expired", "too old resource version: 7 (8)")])
    reflector, lw, stop, waiting, thread = _waiting_reflector(
        [refused, page("7"), third_list], [expired, ScriptedWatch()]
    )
    try:
        assert waiting.wait(10)
        assert reflector.retry_now()
        assert listed.wait(30)  # not in 10 minutes, with no second retry_now()
        assert len(lw.list_calls) == 3
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


@pytest.mark.parametrize(
    "failure",
    [
        ApiStatusError(429, "TooManyRequests", "slow down", retry_after=30),
        ApiStatusError(503, "ServiceUnavailable", "later", retry_after=30),
        status_error(403, "Forbidden", "pods is forbidden"),
        status_error(500, "InternalError", "etcd down"),
    ],
    ids=["retry-after-429", "retry-after-503", "forbidden", "internal-error"],
)
def test_d4_a_wait_for_another_reason_is_kept_and_still_ends_on_stop(
    failure: ApiStatusError,
) -> None:
    reflector, lw, stop, waiting, thread = _waiting_reflector([failure, page("7")])
    try:
        assert waiting.wait(10)
        assert not reflector.retry_now()  # the server asked for the wait, or it is no outage
        assert len(lw.list_calls) == 1
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive() and len(lw.list_calls) == 1


class _Connection:
    """Stands for a socket a failed request left open (weakly referable, like socket.socket)."""


def _handshake(conns: list[weakref.ref[_Connection]]) -> None:
    conn = _Connection()  # as ssl.SSLSocket._create's `self` when the peer resets the handshake
    conns.append(weakref.ref(conn))
    raise ConnectionResetError(104, "Connection reset by peer")


def _unreachable(conns: list[weakref.ref[_Connection]]) -> ObjectList[Any]:
    """A list whose connection was reset during its TLS handshake, as urllib3 reports it: the
    error that reached the reflector holds the frame that kept the socket in its cause."""
    try:
        _handshake(conns)
    except OSError as e:
        raise ConnectionError("https://127.0.0.1:6443 unreachable") from e
    raise AssertionError("unreachable")


def test_d3_the_last_error_is_kept_without_what_the_failed_call_held() -> None:
    conns: list[weakref.ref[_Connection]] = []
    h = Harness([lambda: _unreachable(conns), page("7")], [ScriptedWatch()])
    h.run()
    assert len(h.lw.list_calls) == 2 and len(conns) == 1
    err = h.reflector.last_error()
    assert isinstance(err, ConnectionError) and h.errors == [err]
    # What the failed call held is gone (in the soak, an open socket of a reset handshake)...
    assert conns[0]() is None
    # ...and the error still says where it came from.
    printed = "".join(traceback.format_exception(err))
    assert "_handshake" in printed and "Connection reset by peer" in printed
    assert "unreachable" in printed


def test_d3_watch_error_handler_that_raises_does_not_stop_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = Harness([status_error(500, "InternalError"), page("1")], [ScriptedWatch()])

    def bad(r: Reflector[Any], e: BaseException) -> None:
        raise ValueError("handler bug")

    h.reflector.watch_error_handler = bad
    h.run()
    assert len(h.lw.list_calls) == 2
    assert "watch error handler raised" in caplog.text


def test_d4_backoff_sequence_doubles_to_the_30s_cap() -> None:
    clock = FakeClock()
    b = Backoff(clock=clock, rand=lambda: 0.0)
    assert [b.next_delay() for _ in range(9)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30]


def test_d4_backoff_jitter_adds_up_to_one_times_the_base() -> None:
    b = Backoff(clock=FakeClock(), rand=lambda: 0.999)
    delays = [b.next_delay() for _ in range(8)]
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30]
    for d, base in zip(delays, bases, strict=True):
        assert base <= d < 2 * base


def test_d4_backoff_resets_only_after_two_minutes_since_last_reset() -> None:
    clock = FakeClock()
    b = Backoff(clock=clock, rand=lambda: 0.0)
    assert [b.next_delay() for _ in range(3)] == [0.8, 1.6, 3.2]
    clock.now += 119
    assert b.next_delay() == 6.4  # not yet 2 minutes since construction
    clock.now += 2
    assert b.next_delay() == 0.8  # > 2 min since the last reset: back to the first step
    assert b.next_delay() == 1.6
    clock.now += 100
    assert b.next_delay() == 3.2  # 100 s after the reset, still climbing


# ---------------------------------------------------------------------------------- D5-D9


def test_d5_list_failure_is_returned_from_list_and_watch() -> None:
    h = Harness([status_error(403, "Forbidden", "nope")], [])
    with pytest.raises(ApiStatusError) as info:
        h.reflector.list_and_watch(h.stop)
    assert info.value.code == 403
    assert info.value.message.startswith("failed to list builtins.dict: ")
    assert h.lw.watch_calls == []


def test_d5_non_retriable_watch_request_error_is_returned() -> None:
    h = Harness([page("5")], [status_error(401, "Unauthorized")])
    with pytest.raises(ApiStatusError) as info:
        h.reflector.list_and_watch(h.stop)
    assert info.value.code == 401


def test_d5_store_replace_failure_is_returned() -> None:
    class BadStore(RecordingStore):
        def replace(self, objs: list[Any], rv: str) -> None:
            raise ValueError("disk full")

    h = Harness([page("5")], [], store=BadStore())
    with pytest.raises(RuntimeError, match="unable to sync list result"):
        h.reflector.list_and_watch(h.stop)


def test_d6_d7_initial_list_rv0_limit500_then_relist_at_last_rv_unpaged() -> None:
    h = Harness(
        [page("10", obj("a", "10")), page("20", obj("a", "20"))],
        [
            # closes after 0.1 s with one event: not "very short" -> re-watch at "15"
            ScriptedWatch([ev("MODIFIED", obj("a", "15"))], duration=0.1),
            # closes after 0.1 s with nothing: very short -> backoff -> relist
            ScriptedWatch([], duration=0.1),
        ],
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None), ("15", None, None)]
    assert [c.resource_version for c in h.lw.watch_calls] == ["10", "15", "20"]
    assert all(o.resource_version_match is None for o in h.lw.list_calls)


def test_d7_pager_follows_continue_tokens_and_keeps_first_page_rv() -> None:
    h = Harness(
        [
            page("100", obj("a", "1"), cont="c1"),
            page("101", obj("b", "2"), cont="c2"),
            page("102", obj("c", "3")),
        ],
        [],
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None), (None, 500, "c1"), (None, 500, "c2")]
    kind, (items, rv) = h.store.calls[0]
    assert kind == "replace" and rv == "100"
    assert [o["metadata"]["name"] for o in items] == ["a", "b", "c"]
    assert h.reflector.last_sync_resource_version() == "100"


def test_d7_paginated_rv0_list_makes_later_relists_paged() -> None:
    h = Harness(
        [page("10", obj("a", "1"), cont="c"), page("11", obj("b", "2")), page("30")],
        [ScriptedWatch([], duration=0.1)],  # very short: relist
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None), (None, 500, "c"), ("10", 500, None)]


def test_d7_server_ignoring_limit_returns_one_page() -> None:
    h = Harness([page("10", *[obj(f"o{i}", "1") for i in range(700)])], [])
    h.run()
    assert len(h.store.items) == 700
    assert h.list_rvs() == [("0", 500, None)]


def test_d7_page_size_option_overrides_the_default() -> None:
    h = Harness([page("10")], [], page_size=50)
    h.run()
    assert h.list_rvs() == [("0", 50, None)]


def test_d8_expired_list_retries_immediately_with_empty_rv() -> None:
    h = Harness(
        [page("10"), status_error(410, "Expired", "too old"), page("50", obj("x", "50"))],
        [ScriptedWatch([], duration=0.1)],
    )
    h.run()
    # relist at "10" unpaged fails with 410 -> immediate retry at "" with the same page size (0)
    assert h.list_rvs() == [("0", 500, None), ("10", None, None), ("", None, None)]
    assert h.waits == [0.8]  # only the backoff after the very short watch; none before retry
    assert h.reflector.last_sync_resource_version() == "50"
    assert h.reflector._rewatch_resource_version() == "50"  # flag cleared by the success


def test_d8_gone_reason_also_counts_as_expired() -> None:
    h = Harness([status_error(410, "Gone"), page("3")], [])
    h.run()
    assert h.list_rvs() == [("0", 500, None), ("", 500, None)]


# "Too large resource version" in client-go's three server formats (reflector_test.go
# TestReflectorFullListIfTooLarge): each a Timeout as apierrors.NewTimeoutError builds it, with
# details (retryAfterSeconds) and the message prefixed "Timeout: ".
TOO_LARGE_ERRORS = {
    # 1.18.6 and later: the cause type.
    "cause-type": status_error(
        504,
        "Timeout",
        "Timeout: Too large resource version: 100, current: 5",
        causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        retryAfterSeconds=1,
    ),
    # 1.17.0-1.18.5: a cause with that message only (the Status message may say anything).
    "cause-message": status_error(
        504,
        "Timeout",
        "Timeout: request did not complete within allowed duration",
        causes=[{"message": "Too large resource version"}],
        retryAfterSeconds=1,
    ),
    # Before 1.17: the Status message.
    "message": status_error(
        504, "Timeout", "Timeout: Too large resource version: 100, current: 5", retryAfterSeconds=1
    ),
    # Any status with the cause type (apierrors.HasStatusCause alone).
    "cause-type-any-status": status_error(
        500, "InternalError", "x", causes=[{"reason": "ResourceVersionTooLarge"}]
    ),
    # IsTimeout: no reason and HTTP 504.
    "no-reason-504": ApiStatusError(
        504, "", "Too large resource version: 100, current: 5", details={"retryAfterSeconds": 1}
    ),
}
NOT_TOO_LARGE_ERRORS = {
    # Not a Timeout: the words alone are not enough (client-go asks IsTimeout first).
    "500-message": status_error(
        500, "InternalError", "Too large resource version: 100, current: 5"
    ),
    "500-cause-message": status_error(
        500, "InternalError", "x", causes=[{"message": "Too large resource version"}]
    ),
    "server-timeout": status_error(
        504, "ServerTimeout", "Too large resource version: 100", retryAfterSeconds=1
    ),
    # A Timeout, but not those words exactly (client-go compares case and all).
    "lower-case": status_error(
        504, "Timeout", "Timeout: too large resource version: 100", retryAfterSeconds=1
    ),
    "cause-message-longer": status_error(
        504, "Timeout", "x", causes=[{"message": "Too large resource version: 100"}]
    ),
    # A Timeout without details: client-go reads neither causes nor message then.
    "no-details": status_error(504, "Timeout", "Timeout: Too large resource version: 100"),
}


@pytest.mark.parametrize("err", TOO_LARGE_ERRORS.values(), ids=TOO_LARGE_ERRORS.keys())
def test_d8_too_large_resource_version_retries_with_empty_rv(err: ApiStatusError) -> None:
    assert is_too_large_resource_version(err)
    h = Harness([err, page("3")], [])
    h.run()
    assert h.list_rvs() == [("0", 500, None), ("", 500, None)]
    assert h.errors == []


@pytest.mark.parametrize("err", NOT_TOO_LARGE_ERRORS.values(), ids=NOT_TOO_LARGE_ERRORS.keys())
def test_d8_only_what_client_go_calls_too_large_is_retried_at_empty_rv(
    err: ApiStatusError,
) -> None:
    """client-go's isTooLargeResourceVersionError, exactly: anything else fails the list (the
    error handler, backoff) and the next attempt lists at "0" again, not at ""."""
    assert not is_too_large_resource_version(err)
    h = Harness([err, page("3")], [])
    h.run()
    assert h.list_rvs() == [("0", 500, None), ("0", 500, None)]
    assert len(h.errors) == 1


def test_d8_too_large_from_the_wire_keeps_what_the_status_said() -> None:
    """The Status as the server sends it (JSON), through error_from_status and the reflector's
    list-error wrapping: details present or not, the server's own message."""
    body = {
        "code": 504,
        "reason": "Timeout",
        "message": "Timeout: request did not complete within allowed duration",
        "details": {"causes": [{"message": "Too large resource version"}], "retryAfterSeconds": 1},
    }
    err = error_from_status(Status.model_validate(body))
    assert is_too_large_resource_version(err)
    assert is_too_large_resource_version(wrap_list_error("pods", err))
    no_details = error_from_status(
        Status.model_validate(
            {"code": 504, "reason": "Timeout", "message": "Too large resource version"}
        )
    )
    assert not no_details.has_details
    assert not is_too_large_resource_version(no_details)
    assert not is_too_large_resource_version(wrap_list_error("pods", no_details))
    old = error_from_status(
        Status.model_validate(
            {
                "code": 504,
                "reason": "Timeout",
                "message": "Timeout: Too large resource version: 9",
                "details": {"retryAfterSeconds": 1},
            }
        )
    )
    wrapped = wrap_list_error("pods", old)
    assert isinstance(wrapped, ApiStatusError) and wrapped.server_message == old.server_message
    assert is_too_large_resource_version(wrapped)


def test_d8_second_expired_fails_the_list_and_keeps_flag_for_next_attempt() -> None:
    h = Harness(
        [page("10"), status_error(410, "Expired"), status_error(410, "Expired"), page("60")],
        [ScriptedWatch([], duration=0.1)],
    )
    h.run()
    # next ListAndWatch starts while the flag is set: RV "" with limit 500
    assert h.list_rvs() == [
        ("0", 500, None),
        ("10", None, None),
        ("", None, None),
        ("", 500, None),
    ]
    assert len(h.errors) == 1 and h.errors[0].code == 410  # type: ignore[attr-defined]


def test_d8_expired_continuation_page_falls_back_to_full_list_at_requested_rv() -> None:
    h = Harness(
        [
            page("10", obj("a", "1"), cont="c"),
            status_error(410, "Expired"),
            page("12", obj("a", "1"), obj("b", "2")),
        ],
        [],
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None), (None, 500, "c"), ("0", None, None)]
    assert h.store.calls[0] == ("replace", ([obj("a", "1"), obj("b", "2")], "12"))


def test_d9_replace_with_list_rv_sets_last_sync_rv() -> None:
    h = Harness([page("42", obj("a", "40"), obj("b", "41"))], [])
    h.run()
    assert h.store.calls[0] == ("replace", ([obj("a", "40"), obj("b", "41")], "42"))
    assert h.reflector.last_sync_resource_version() == "42"


# ---------------------------------------------------------------------------------- D10-D14


def test_d10_watch_options_after_list() -> None:
    h = Harness([page("42")], [ScriptedWatch()], rand=lambda: 0.25)
    h.run()
    w = h.lw.watch_calls[0]
    assert w.resource_version == "42"
    assert w.allow_watch_bookmarks is True
    assert w.timeout_seconds == 375
    assert w.resource_version_match is None and w.send_initial_events is None
    assert w.label_selector is None and w.limit is None


def test_d10_watch_timeout_in_300_600() -> None:
    import random

    rng = random.Random(4)
    h = Harness([page("1")], [ScriptedWatch(duration=5) for _ in range(50)], rand=rng.random)
    h.run()
    timeouts = [c.timeout_seconds for c in h.lw.watch_calls]
    assert all(t is not None and 300 <= t < 600 for t in timeouts)
    assert len(set(timeouts)) > 10


def test_d11_429_on_watch_request_backs_off_without_relist() -> None:
    """TestNoRelistOnTooManyRequests: 4x 429 then success -> 1 list, 5 watch calls."""
    tmr = ApiStatusError(429, "TooManyRequests", "slow down", retry_after=None)
    h = Harness([page("1")], [tmr, tmr, tmr, tmr, ScriptedWatch()])
    h.run()
    assert len(h.lw.list_calls) == 1
    assert len(h.lw.watch_calls) == 6  # 5 scripted + the one that ends the script
    assert h.waits[:4] == [0.8, 1.6, 3.2, 6.4]
    assert h.errors == []


def test_d11_retry_after_is_honoured_when_longer_than_backoff() -> None:
    tmr = ApiStatusError(429, "TooManyRequests", "slow down", retry_after=7)
    h = Harness([page("1")], [tmr, ScriptedWatch()])
    h.run()
    assert h.waits[0] == 7


def test_d11_connection_refused_on_watch_backs_off_without_relist() -> None:
    h = Harness([page("1")], [ConnectionRefusedError(111, "Connection refused"), ScriptedWatch()])
    h.run()
    assert len(h.lw.list_calls) == 1
    assert h.errors == []


def test_d11_other_watch_request_error_goes_to_handler_and_relists() -> None:
    h = Harness([page("1"), page("2")], [status_error(403, "Forbidden"), ScriptedWatch()])
    h.run()
    assert len(h.lw.list_calls) == 2
    assert [e.code for e in h.errors] == [403]  # type: ignore[attr-defined]


def test_d12_events_applied_to_store_and_rv_of_last_event_recorded() -> None:
    class RVStore(RecordingStore):
        def __init__(self) -> None:
            super().__init__()
            self.rvs: list[str] = []

        def update_resource_version(self, rv: str) -> None:
            self.rvs.append(rv)

    store = RVStore()
    h = Harness(
        [page("10")],
        [
            ScriptedWatch(
                [
                    ev("ADDED", obj("a", "11")),
                    ev("MODIFIED", obj("a", "13")),
                    ev("DELETED", obj("a", "12")),  # RV of the last event, not the max
                ]
            )
        ],
        store=store,
    )
    h.run()
    assert [c[0] for c in store.calls] == ["replace", "add", "update", "delete"]
    assert h.reflector.last_sync_resource_version() == "12"
    assert store.rvs == ["11", "13", "12"]
    # the re-watch after the clean close starts from the last event's RV
    assert h.lw.watch_calls[1].resource_version == "12"


def test_d12_bookmark_only_advances_rv_and_is_forwarded_to_bookmark_store() -> None:
    class BookmarkStore(RecordingStore):
        def bookmark(self, rv: str) -> None:
            self.calls.append(("bookmark", rv))

    store = BookmarkStore()
    h = Harness([page("10")], [ScriptedWatch([bookmark("20")])], store=store)
    h.run()
    assert store.calls[1:] == [("bookmark", "20")]
    assert h.reflector.last_sync_resource_version() == "20"


def test_d12_wrong_type_and_no_metadata_objects_are_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Other:
        pass

    h = Harness(
        [page("10")],
        [ScriptedWatch([ev("ADDED", Other()), ev("ADDED", obj("a", "11"))])],
    )
    h.run()
    assert [c[0] for c in h.store.calls] == ["replace", "add"]
    assert "expected type" in caplog.text
    assert h.reflector.last_sync_resource_version() == "11"
    # without an expected type, an object with no metadata at all is skipped too
    h2 = Harness([page("10")], [ScriptedWatch([ev("ADDED", Other()), ev("ADDED", obj("b", "12"))])])
    h2.reflector.expected_type = None
    h2.run()
    assert [c[0] for c in h2.store.calls] == ["replace", "add"]
    assert "unable to understand watch event" in caplog.text


def test_d12_store_errors_are_logged_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    class Flaky(RecordingStore):
        def add(self, o: Any) -> None:
            raise KeyError("bad key")

    h = Harness(
        [page("1")],
        [ScriptedWatch([ev("ADDED", obj("a", "2")), ev("MODIFIED", obj("a", "3"))])],
        store=Flaky(),
    )
    h.run()
    assert "unable to apply ADDED event" in caplog.text
    assert h.reflector.last_sync_resource_version() == "3"


def test_d12_error_event_ends_watch_with_its_status() -> None:
    h = Harness([page("1"), page("2")], [ScriptedWatch([error_event(400, "BadRequest", "bad")])])
    h.run()
    assert len(h.lw.list_calls) == 2  # other ERROR -> return nil -> backoff -> relist
    assert h.waits == [0.8]
    assert h.errors == []  # the watch path logs it; ListAndWatch returned nil


def test_d13_rv_recorded_only_after_first_non_added_event_when_watch_starts_at_empty() -> None:
    seen: list[str] = []

    class Peek(RecordingStore):
        def add(self, o: Any) -> None:
            super().add(o)
            seen.append(h.reflector.last_sync_resource_version())

        def update(self, o: Any) -> None:
            super().update(o)
            seen.append(h.reflector.last_sync_resource_version())

    h = Harness(
        [page("")],  # a list without RV: the watch starts at ""
        [
            ScriptedWatch(
                [
                    ev("ADDED", obj("a", "5")),
                    ev("ADDED", obj("b", "3")),
                    ev("MODIFIED", obj("a", "7")),
                    ev("ADDED", obj("c", "8")),
                ]
            )
        ],
        store=Peek(),
    )
    h.run()
    assert h.lw.watch_calls[0].resource_version == ""
    # the RV is set after each event is applied; before the first MODIFIED nothing is recorded
    assert seen == ["", "", "", "7"]
    assert h.reflector.last_sync_resource_version() == "8"


def test_d14_very_short_watch_is_an_error_and_relists(caplog: pytest.LogCaptureFixture) -> None:
    h = Harness([page("1"), page("2")], [ScriptedWatch([], duration=0.5)])
    with caplog.at_level(logging.WARNING):
        h.run()
    assert len(h.lw.list_calls) == 2
    assert "very short watch: test: Unexpected watch close" in caplog.text


def test_d14_very_short_watch_error_text() -> None:
    assert str(VeryShortWatchError("r")) == (
        "very short watch: r: Unexpected watch close - watch lasted less than a second "
        "and no items received"
    )


def test_d14_clean_close_rewatches_immediately_without_relist() -> None:
    h = Harness(
        [page("1")],
        [
            ScriptedWatch([ev("ADDED", obj("a", "2"))], duration=0.2),  # short but had an event
            ScriptedWatch([], duration=2.0),  # long, empty
            ScriptedWatch([ev("MODIFIED", obj("a", "3"))]),
        ],
    )
    h.run()
    assert len(h.lw.list_calls) == 1
    assert [c.resource_version for c in h.lw.watch_calls] == ["1", "2", "2", "3"]
    assert h.waits == []


def test_d14_expired_error_event_relists_at_last_rv() -> None:
    h = Harness(
        [page("10"), page("30")],
        [ScriptedWatch([ev("ADDED", obj("a", "11")), error_event(410, "Expired", "too old")])],
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None), ("11", None, None)]
    assert h.waits == [0.8]


def test_d14_429_error_event_backs_off_then_rewatches() -> None:
    h = Harness(
        [page("10")], [ScriptedWatch([error_event(429, "TooManyRequests")]), ScriptedWatch()]
    )
    h.run()
    assert len(h.lw.list_calls) == 1
    assert h.waits == [0.8]
    assert [c.resource_version for c in h.lw.watch_calls] == ["10", "10", "10"]


def test_d14_internal_error_not_retried_by_default() -> None:
    h = Harness([page("1"), page("2")], [ScriptedWatch([error_event(500, "InternalError")])])
    h.run()
    assert len(h.lw.list_calls) == 2


def test_d14_internal_error_retried_within_max_duration() -> None:
    """TestRetryInternalError: 30 s window, one error per second -> 31 immediate re-watches."""
    clock_holder: list[FakeClock] = []

    def failing() -> ScriptedWatch:
        clock_holder[0].now += 1.0
        return ScriptedWatch([error_event(500, "InternalError")], duration=0)

    h = Harness([page("1"), page("2")], [failing] * 40, max_internal_error_retry_duration=30)
    clock_holder.append(h.clock)
    h.run()
    first_relist = h.lw.log.index("list", 1)
    assert h.lw.log[1:first_relist] == ["watch"] * 32  # the first watch + 31 retries
    assert h.waits == [0.8]  # no backoff between the retries, one before the relist


def test_d14_stop_ends_a_running_watch_promptly() -> None:
    stop = threading.Event()
    live = ScriptedWatch([ev("ADDED", obj("a", "2"))], block=True)
    lw = ScriptedLW(stop, [page("1")], [live])
    store = RecordingStore()
    r: Reflector[Any] = Reflector(lw, dict, store, use_watch_list=False)
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    assert live.delivered.wait(5)
    t0 = time.monotonic()
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert time.monotonic() - t0 < 1.0
    assert live.stopped.is_set()


def test_d14_stop_during_backoff_returns_promptly() -> None:
    stop = threading.Event()
    lw = ScriptedLW(stop, [status_error(500, "InternalError")] * 3, [])
    r: Reflector[Any] = Reflector(
        lw,
        dict,
        RecordingStore(),
        use_watch_list=False,
        watch_error_handler=lambda r, e: None,
        backoff=Backoff(initial=60, rand=lambda: 0.0),
    )
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    deadline = time.monotonic() + 5
    while not lw.list_calls and time.monotonic() < deadline:
        stop.wait(0.01)
    t0 = time.monotonic()
    stop.set()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 1.0


def test_d5_stop_during_a_slow_list_returns_promptly_and_drops_the_result() -> None:
    stop = threading.Event()
    entered = threading.Event()
    release = threading.Event()

    class SlowLW(ScriptedLW):
        def list(self, options: ListOptions) -> ObjectList[Any]:
            entered.set()
            release.wait(10)
            return page("5", obj("late", "5"))

    store = RecordingStore()
    r: Reflector[Any] = Reflector(SlowLW(stop), dict, store, use_watch_list=False)
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    assert entered.wait(5)
    t0 = time.monotonic()
    stop.set()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 1.0
    release.set()
    assert store.calls == []  # a list that finishes after stop is not applied
    assert r.last_sync_resource_version() == ""


# ---------------------------------------------------------------------------------- D15, D16


def test_d15_resync_timer_calls_store_resync_when_should_resync() -> None:
    stop = threading.Event()
    store = RecordingStore()
    resynced = threading.Event()

    class CountingStore(RecordingStore):
        def resync(self) -> None:
            super().resync()
            if self.resyncs >= 3:
                resynced.set()

    store = CountingStore()
    live = ScriptedWatch([], block=True)
    lw = ScriptedLW(stop, [page("1")], [live])
    r: Reflector[Any] = Reflector(lw, dict, store, resync_period=0.01, use_watch_list=False)
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    assert resynced.wait(5)
    stop.set()
    t.join(5)
    assert store.resyncs >= 3


def test_d15_should_resync_false_skips_resync() -> None:
    stop = threading.Event()
    asked = threading.Event()
    calls: list[int] = []

    def should() -> bool:
        calls.append(1)
        if len(calls) >= 3:
            asked.set()
        return False

    store = RecordingStore()
    live = ScriptedWatch([], block=True)
    lw = ScriptedLW(stop, [page("1")], [live])
    r: Reflector[Any] = Reflector(
        lw, dict, store, resync_period=0.01, should_resync=should, use_watch_list=False
    )
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    assert asked.wait(5)
    stop.set()
    t.join(5)
    assert store.resyncs == 0


def test_d15_resync_error_ends_watch_and_relists() -> None:
    stop = threading.Event()
    relisted = threading.Event()

    class BadResync(RecordingStore):
        def resync(self) -> None:
            raise RuntimeError("resync failed")

        def replace(self, objs: list[Any], rv: str) -> None:
            super().replace(objs, rv)
            if rv == "2":
                relisted.set()
                stop.set()

    live = ScriptedWatch([ev("ADDED", obj("a", "5"))], block=True)
    lw = ScriptedLW(stop, [page("1"), page("2")], [live])
    r: Reflector[Any] = Reflector(
        lw,
        dict,
        BadResync(),
        resync_period=0.01,
        use_watch_list=False,
        backoff=Backoff(initial=0.001, rand=lambda: 0.0),
    )
    t = threading.Thread(target=r.run, args=(stop,))
    t.start()
    assert relisted.wait(5)
    t.join(5)
    assert lw.list_calls[1].resource_version == "5"


def test_d16_default_handler_levels(caplog: pytest.LogCaptureFixture) -> None:
    stop = threading.Event()
    r: Reflector[Any] = Reflector(
        ScriptedLW(stop), dict, RecordingStore(), name="pods-informer", type_description="pods"
    )
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.reflector"):
        default_watch_error_handler(r, status_error(410, "Expired", "too old"))
        default_watch_error_handler(r, EOFError())
        default_watch_error_handler(
            r, status_error(403, "Forbidden", "pods is forbidden at https://x")
        )
        default_watch_error_handler(r, RuntimeError("boom"))
    levels = [(rec.levelname, rec.getMessage()) for rec in caplog.records]
    assert levels[0][0] == "DEBUG" and "too old" in levels[0][1]
    assert len(levels) == 3  # EOF is silent
    assert levels[1][0] == "ERROR" and "access to pods denied (HTTP 403 Forbidden)" in levels[1][1]
    assert levels[2][0] == "ERROR" and "Failed to watch pods: boom" in levels[2][1]


# ---------------------------------------------------------------------------------- D17-D21


def test_d17_watch_list_on_by_default_and_switchable(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    monkeypatch.delenv("KUBE_FEATURE_WatchListClient", raising=False)
    assert Reflector(ScriptedLW(stop), None, RecordingStore()).use_watch_list is True
    assert (
        Reflector(ScriptedLW(stop), None, RecordingStore(), use_watch_list=False).use_watch_list
        is False
    )
    unsupported = ScriptedLW(stop, watch_list_unsupported=True)
    assert (
        Reflector(unsupported, None, RecordingStore(), use_watch_list=True).use_watch_list is False
    )
    monkeypatch.setenv("KUBE_FEATURE_WatchListClient", "false")
    assert Reflector(ScriptedLW(stop), None, RecordingStore()).use_watch_list is False
    monkeypatch.setenv("KUBE_FEATURE_WatchListClient", "true")
    assert Reflector(ScriptedLW(stop), None, RecordingStore()).use_watch_list is True


def wl_stream(*events: WatchEvent[Any], block: bool = False) -> ScriptedWatch:
    return ScriptedWatch(list(events), block=block)


def test_d18_watch_list_request_options_and_no_list() -> None:
    h = Harness(
        [],
        [wl_stream(ev("ADDED", obj("a", "5")), bookmark("9", end=True))],
        use_watch_list=True,
        rand=lambda: 0.5,
    )
    h.run()
    o = h.lw.watch_calls[0]
    assert o.resource_version == ""
    assert o.send_initial_events is True
    assert o.resource_version_match == "NotOlderThan"
    assert o.allow_watch_bookmarks is True
    assert o.timeout_seconds == 450
    assert h.lw.list_calls == []


def test_d19_watch_list_replaces_store_at_bookmark_and_keeps_the_stream() -> None:
    stream = wl_stream(
        ev("ADDED", obj("a", "5")),
        ev("ADDED", obj("b", "3")),
        ev("MODIFIED", obj("a", "6")),
        ev("ADDED", obj("c", "7")),
        ev("DELETED", obj("b", "8")),
        bookmark("9", end="false"),  # not the end marker
        bookmark("10", end=True),
        ev("ADDED", obj("d", "11")),  # after the initial state: same stream, into the real store
    )
    h = Harness([], [stream], use_watch_list=True)
    h.run()
    kind, (items, rv) = h.store.calls[0]
    assert kind == "replace" and rv == "10"
    assert sorted(o["metadata"]["name"] for o in items) == ["a", "c"]
    assert h.store.calls[1] == ("add", obj("d", "11"))
    assert len(h.lw.watch_calls) == 2  # the watch-list stream, then a re-watch after its close
    assert h.lw.watch_calls[1].resource_version == "11"
    assert h.lw.watch_calls[1].send_initial_events is None


def test_d19_watch_list_uses_the_store_transformer() -> None:
    store = RecordingStore()
    seen: list[str] = []

    def transform(o: Any) -> Any:
        seen.append(o["metadata"]["name"])
        return {"metadata": o["metadata"], "transformed": True}

    store.transformer = transform
    h = Harness(
        [],
        [wl_stream(ev("ADDED", obj("a", "5")), bookmark("9", end=True))],
        store=store,
        use_watch_list=True,
    )
    h.run()
    _, (items, _) = store.calls[0]
    assert items[0]["transformed"] is True
    assert seen == ["a"]


def test_d20_watch_list_stream_closed_before_bookmark_asks_again() -> None:
    h = Harness(
        [],
        [
            wl_stream(ev("ADDED", obj("a", "5"))),  # closes without the bookmark
            wl_stream(ev("ADDED", obj("b", "6")), bookmark("9", end=True)),
        ],
        use_watch_list=True,
    )
    h.run()
    _, (items, rv) = h.store.calls[0]
    assert [o["metadata"]["name"] for o in items] == ["b"]  # fresh temp store each attempt
    assert rv == "9"
    assert h.lw.list_calls == []
    assert [c.send_initial_events for c in h.lw.watch_calls[:2]] == [True, True]


def test_d20_watch_list_429_backs_off_and_retries() -> None:
    h = Harness(
        [],
        [ApiStatusError(429, "TooManyRequests", "x"), wl_stream(bookmark("9", end=True))],
        use_watch_list=True,
    )
    h.run()
    assert h.waits[0] == 0.8
    assert h.lw.list_calls == []
    assert h.store.calls[0] == ("replace", ([], "9"))


def test_d20_watch_list_expired_retries_immediately_with_empty_rv() -> None:
    h = Harness(
        [],
        [
            wl_stream(bookmark("9", end=True)),  # first sync
            wl_stream(error_event(410, "Expired")),  # watch ends: relist via watch-list at "9"
            error_event_to_raise(),  # watch-list at "9" fails with 410 -> flag
            wl_stream(bookmark("20", end=True)),
        ],
        use_watch_list=True,
    )
    h.run()
    rvs = [(c.resource_version, c.send_initial_events) for c in h.lw.watch_calls]
    assert rvs[:4] == [("", True), ("9", None), ("9", True), ("", True)]
    assert h.reflector.last_sync_resource_version() == "20"


def error_event_to_raise() -> ApiStatusError:
    return ApiStatusError(410, "Expired", "too old resource version")


def test_d20_watch_list_unsupported_by_server_falls_back_to_list() -> None:
    h = Harness(
        [page("7", obj("a", "7"))],
        [ApiStatusError(422, "Invalid", "sendInitialEvents is forbidden"), ScriptedWatch()],
        use_watch_list=True,
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None)]
    assert h.store.calls[0] == ("replace", ([obj("a", "7")], "7"))
    assert h.lw.watch_calls[1].send_initial_events is None


def test_d20_very_short_watch_list_falls_back_to_list() -> None:
    h = Harness(
        [page("7")], [ScriptedWatch([], duration=0.1), ScriptedWatch()], use_watch_list=True
    )
    h.run()
    assert h.list_rvs() == [("0", 500, None)]


def test_d20_consistency_detector_passes_and_detects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBE_WATCHLIST_INCONSISTENCY_DETECTOR", "true")
    a = obj("a", "5", uid="u1")
    h = Harness(
        [page("9", a)], [wl_stream(ev("ADDED", a), bookmark("9", end=True))], use_watch_list=True
    )
    h.run()
    assert h.lw.list_calls[0].resource_version == "9"
    assert h.lw.list_calls[0].resource_version_match == "Exact"
    assert h.store.calls[0] == ("replace", ([a], "9"))

    bad = Harness(
        [page("9")], [wl_stream(ev("ADDED", a), bookmark("9", end=True))], use_watch_list=True
    )
    # the LIST at RV 9 is empty but the stream had "a": the detector fails loudly
    with pytest.raises(WatchListInconsistencyError, match="1 streamed, 0 listed"):
        bad.reflector._watch_list(bad.stop)
    assert bad.store.calls == []  # nothing was handed to the store


def test_d20_warns_every_10s_while_the_initial_events_end_bookmark_is_outstanding(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = Harness([], [], use_watch_list=True)

    class SlowStream(ScriptedWatch):
        def __iter__(self) -> Iterator[WatchEvent[Any]]:
            for i in range(5):
                h.clock.now += 4.0  # events at 4, 8, 12, 16, 20 s
                yield ev("ADDED", obj(f"o{i}", str(i + 1)))
            yield bookmark("9", end=True)

    h.lw.watches.append(SlowStream())
    with caplog.at_level(logging.WARNING, logger="kubeinformers.reflector"):
        h.run()
    warnings = [r for r in caplog.records if "awaiting the initial-events-end" in r.getMessage()]
    assert len(warnings) == 1  # at 12 s (the next would be due at 22 s; the stream ended at 20 s)
    assert h.store.calls[0][0] == "replace"


def test_d21_last_sync_rv_tracks_list_and_events() -> None:
    h = Harness([page("3")], [ScriptedWatch([ev("ADDED", obj("a", "4")), bookmark("6")])])
    assert h.reflector.last_sync_resource_version() == ""
    h.run()
    assert h.reflector.last_sync_resource_version() == "6"


def test_decode_errors_from_transport_reach_the_watch_error_handler() -> None:
    stop = threading.Event()

    class LWWithDecode(ScriptedLW):
        handler: Callable[[BaseException], None] | None = None

        def set_decode_error_handler(self, fn: Callable[[BaseException], None]) -> None:
            self.handler = fn

    lw = LWWithDecode(stop)
    errors: list[BaseException] = []
    Reflector(lw, None, RecordingStore(), watch_error_handler=lambda r, e: errors.append(e))
    assert lw.handler is not None
    lw.handler(ValueError("bad object"))
    assert [str(e) for e in errors] == ["bad object"]


def test_status_cause_model_roundtrip_for_too_large() -> None:
    # ERROR events with a too-large cause are classified like list errors (D8/D20)
    from kubeinformers.runtime.reflector.reflector import error_from_status

    st = Status(
        code=504,
        reason="Timeout",
        message="x",
        details=StatusDetails(causes=[StatusCause(reason="ResourceVersionTooLarge")]),
    )
    err = error_from_status(st)
    from kubeinformers.runtime.api.errors import is_too_large_resource_version

    assert is_too_large_resource_version(err)


def test_d12_subclass_of_expected_type_is_accepted() -> None:
    """Go compares exact types; a subclass here is the model (lazy decoding builds one)."""

    class LazyDict(dict):  # type: ignore[type-arg]
        pass

    h = Harness([page("1")], [ScriptedWatch([ev("ADDED", LazyDict(obj("a", "2")))])])
    h.run()
    assert [c[0] for c in h.store.calls] == ["replace", "add"]


def test_d9_list_error_wording_keeps_connection_errors_connection_errors() -> None:
    h = Harness([ConnectionRefusedError("cannot list pods: https://x unreachable")], [])
    with pytest.raises(
        ConnectionRefusedError, match=r"^failed to list builtins\.dict: cannot list"
    ):
        h.reflector.list_and_watch(h.stop)


def test_d1_d12_expected_gvk_for_dicts_describes_and_filters() -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", **obj("d", "2")}
    pod = {"apiVersion": "v1", "kind": "Pod", **obj("p", "3")}
    table = {"apiVersion": "meta.k8s.io/v1", "kind": "Table", **obj("t", "4")}
    h = Harness(
        [page("1")],
        [ScriptedWatch([ev("ADDED", pod), ev("ADDED", table), ev("ADDED", deploy)])],
        expected_gvk=("apps/v1", "Deployment"),
    )
    assert h.reflector.type_description == "apps/v1, Kind=Deployment"
    h.run()
    assert [c for c in h.store.calls if c[0] == "add"] == [("add", deploy)]
    core: Reflector[Any] = Reflector(
        ScriptedLW(threading.Event()), dict, RecordingStore(), expected_gvk=("v1", "Pod")
    )
    assert core.type_description == "/v1, Kind=Pod"


def test_d12_tables_are_skipped_even_without_an_expected_gvk() -> None:
    table = {"apiVersion": "meta.k8s.io/v1beta1", "kind": "Table", **obj("t", "4")}
    h = Harness([page("1")], [ScriptedWatch([ev("ADDED", table), ev("ADDED", obj("a", "5"))])])
    h.run()
    assert [c for c in h.store.calls if c[0] == "add"] == [("add", obj("a", "5"))]


def test_n8_a_relist_during_a_watch_list_is_no_failure_and_no_fallback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N8: `relist()` (a `set_shard`) while a watch-list streams ends that stream; that is
    no failure: no WARNING (`the watch-list request ... ended with an error, falling back
    to LIST/WATCH: ... stopped`, or `the API server is unavailable (... very short watch)`),
    no LIST fallback, no backoff, but a new watch-list at once. Found on a real
    kube-apiserver: ring replicas widening their shard while their informers synced."""
    from kubeinformers.runtime.client.cancel import RequestCancelled

    h = Harness(lists=[], watches=[], use_watch_list=True)
    calls: list[int] = []

    def watch_list(stop: threading.Event) -> Any:
        calls.append(len(calls))
        if len(calls) == 1:
            h.reflector.relist()  # the informer's shard changes while the stream runs
            raise RequestCancelled("configmaps: stopped")
        h.stop.set()
        return None

    h.reflector._watch_list = watch_list  # type: ignore[method-assign]
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.reflector"):
        h.run()
    assert calls == [0, 1]
    assert h.lw.list_calls == [] and h.waits == [] and h.errors == []
    assert [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG] == []
