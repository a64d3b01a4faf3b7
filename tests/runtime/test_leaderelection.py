"""Leader election (client-go tools/leaderelection behaviour): over an in-memory Lease API,
and two candidates against LocalApiServer at the end."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kubeinformers.runtime.clock import FakeClock
from kubeinformers.runtime.leaderelection.elector import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    LockNotFoundError,
    lease_seconds,
)
from tests.support.leases import FakeLeaseApi, LeaseStore

TIMEOUT = 10.0
NS, NAME = "kube-system", "test-lock"


class Candidate:
    """One elector on its own thread, recording its callbacks."""

    def __init__(
        self,
        store: LeaseStore,
        identity: str,
        *,
        lease_duration: float = 1.0,
        renew_deadline: float = 0.5,
        retry_period: float = 0.1,
        release_on_cancel: bool = False,
    ) -> None:
        self.api = FakeLeaseApi(store)
        self.identity = identity
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.lead_stop: threading.Event | None = None
        self.new_leaders: list[str] = []
        self.new_leader_seen = threading.Condition()
        self.elector = LeaderElector(
            LeaderElectionConfig(
                LeaseLock(self.api, NS, NAME, identity),
                LeaderCallbacks(
                    on_started_leading=self._on_started,
                    on_stopped_leading=self.stopped.set,
                    on_new_leader=self._on_new_leader,
                ),
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                release_on_cancel=release_on_cancel,
                name=identity,
            )
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)

    def _on_started(self, stop: threading.Event) -> None:
        self.lead_stop = stop
        self.started.set()

    def _on_new_leader(self, identity: str) -> None:
        with self.new_leader_seen:
            self.new_leaders.append(identity)
            self.new_leader_seen.notify_all()

    def wait_new_leader(self, identity: str) -> bool:
        with self.new_leader_seen:
            return self.new_leader_seen.wait_for(lambda: identity in self.new_leaders, TIMEOUT)

    def start(self) -> Candidate:
        self.thread.start()
        return self

    def shutdown(self) -> None:
        self.stop.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive()


def first_leader(a: Candidate, b: Candidate) -> tuple[Candidate, Candidate]:
    deadline = time.monotonic() + TIMEOUT
    while not (a.started.is_set() or b.started.is_set()):
        assert time.monotonic() < deadline, "nobody became leader"
        a.started.wait(0.01)
    return (a, b) if a.started.is_set() else (b, a)


def test_exactly_one_candidate_leads_and_both_learn_who() -> None:
    store = LeaseStore()
    a, b = Candidate(store, "a").start(), Candidate(store, "b").start()
    leader, follower = first_leader(a, b)
    assert not follower.started.wait(1.5)  # a full lease later: still only one leader
    assert leader.elector.is_leader() and not follower.elector.is_leader()
    assert follower.wait_new_leader(leader.identity)
    assert follower.elector.get_leader() == leader.identity
    spec = store.spec(NS, NAME)
    assert spec["holderIdentity"] == leader.identity
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0  # created by the first leader
    a.shutdown()
    b.shutdown()


def test_leader_that_cannot_renew_stops_and_the_other_takes_over() -> None:
    store = LeaseStore()
    a, b = Candidate(store, "a").start(), Candidate(store, "b").start()
    leader, follower = first_leader(a, b)
    leader.api.fail = True  # partitioned from the API server
    assert leader.stopped.wait(TIMEOUT)  # renew deadline (0.5 s) exceeded
    assert leader.lead_stop is not None and leader.lead_stop.is_set()
    leader.thread.join(TIMEOUT)
    assert not leader.thread.is_alive()
    assert follower.started.wait(TIMEOUT)
    assert follower.wait_new_leader(follower.identity)
    spec = store.spec(NS, NAME)
    assert spec["holderIdentity"] == follower.identity
    assert spec["leaseTransitions"] == 1
    follower.shutdown()


def test_release_on_cancel_gives_the_lease_up_at_once() -> None:
    store = LeaseStore()
    a = Candidate(store, "a", lease_duration=5.0, renew_deadline=2.0, release_on_cancel=True)
    a.start()
    assert a.started.wait(TIMEOUT)
    b = Candidate(store, "b", lease_duration=5.0, renew_deadline=2.0).start()
    assert b.wait_new_leader("a")
    a.shutdown()
    assert a.stopped.is_set()
    # released (b may already have taken the lease since: it retries meanwhile)
    spec = store.first_written_after("a")
    assert spec is not None, store.written
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    # b takes over well before a's 5 s lease would have expired
    assert b.started.wait(3.0)
    b.shutdown()


def release_test_elector(
    store: LeaseStore,
    work: Callable[[threading.Event], None],
    on_stopped: Callable[[], None] = lambda: None,
    *,
    lease_duration: float = 1.0,
    renew_deadline: float = 0.5,
) -> tuple[LeaderElector, threading.Event]:
    """An elector "a" with release_on_cancel whose leader runs `work`, and the event set
    when it starts leading."""
    started = threading.Event()

    def on_started(stop: threading.Event) -> None:
        started.set()
        work(stop)

    elector = LeaderElector(
        LeaderElectionConfig(
            LeaseLock(FakeLeaseApi(store), NS, NAME, "a"),
            LeaderCallbacks(on_started, on_stopped),
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=0.1,
            release_on_cancel=True,
        )
    )
    return elector, started


def test_release_waits_for_the_leaders_work_to_return() -> None:
    store = LeaseStore()
    finished_before_release: list[bool] = []

    def work(stop: threading.Event) -> None:
        stop.wait()
        time.sleep(0.1)  # cleanup after being told to stop
        finished_before_release.append(store.spec(NS, NAME)["holderIdentity"] == "a")

    elector, started = release_test_elector(store, work)
    stop = threading.Event()
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    assert started.wait(TIMEOUT)
    stop.set()
    runner.join(TIMEOUT)
    assert finished_before_release == [True]  # still held while the work finished
    assert store.spec(NS, NAME)["holderIdentity"] == ""  # then released


def test_release_is_skipped_when_the_leaders_work_does_not_stop() -> None:
    store = LeaseStore()
    never = threading.Event()

    def stuck(stop: threading.Event) -> None:
        never.wait(TIMEOUT)

    elector, started = release_test_elector(store, stuck)
    stop = threading.Event()
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    assert started.wait(TIMEOUT)
    stop.set()
    runner.join(TIMEOUT)
    never.set()
    assert store.spec(NS, NAME)["holderIdentity"] == "a"  # left to expire, never handed over


def test_leader_renews_on_the_fast_path_without_reading() -> None:
    store = LeaseStore()
    a = Candidate(store, "a", retry_period=0.05).start()
    assert a.started.wait(TIMEOUT)
    reads_after_start = a.api.calls["read"]
    first = store.spec(NS, NAME)
    deadline = time.monotonic() + TIMEOUT
    while a.api.calls["replace"] < 5 and time.monotonic() < deadline:
        a.stopped.wait(0.02)
    assert a.api.calls["replace"] >= 5
    assert a.api.calls["read"] == reads_after_start  # optimistic updates succeeded
    assert store.spec(NS, NAME)["renewTime"] > first["renewTime"]
    assert store.spec(NS, NAME)["acquireTime"] == first["acquireTime"]  # kept on renewals
    a.shutdown()


def test_stopped_leading_is_called_even_without_ever_leading() -> None:
    store = LeaseStore()
    a = Candidate(store, "a").start()
    assert a.started.wait(TIMEOUT)
    b = Candidate(store, "b").start()
    assert b.wait_new_leader("a")
    b.shutdown()
    assert b.stopped.is_set() and not b.started.is_set()
    a.shutdown()


def elector_with_clock(store: LeaseStore, identity: str, clock: FakeClock) -> LeaderElector:
    return LeaderElector(
        LeaderElectionConfig(
            LeaseLock(FakeLeaseApi(store), NS, NAME, identity),
            LeaderCallbacks(lambda stop: None, lambda: None),
            clock=clock.now,
        )
    )


def test_lease_expiry_is_measured_from_when_the_record_last_changed_locally() -> None:
    """Default timings (15/10/2 s) with a manual clock: no real waiting."""
    store = LeaseStore()
    clock = FakeClock(100.0)
    a = elector_with_clock(store, "a", clock)
    b = elector_with_clock(store, "b", clock)
    assert a.try_acquire_or_renew()
    assert store.spec(NS, NAME)["leaseDurationSeconds"] == 15
    assert not b.try_acquire_or_renew()  # held, fresh
    clock.step(14.9)
    assert not b.try_acquire_or_renew()  # b first saw the record at t=100
    assert a.try_acquire_or_renew()  # a renews: the record changes
    clock.step(14.9)
    assert not b.try_acquire_or_renew()  # b saw the change at t=114.9
    clock.step(15.0)
    assert b.try_acquire_or_renew()  # unchanged for a full lease: taken over
    assert b.is_leader() and store.spec(NS, NAME)["leaseTransitions"] == 1
    # a's optimistic update now conflicts; on the slow path it sees b's fresh record
    assert not a.try_acquire_or_renew()
    assert not a.is_leader() and a.get_leader() == "b"


def test_concurrent_takeover_conflicts_and_only_one_wins() -> None:
    store = LeaseStore()
    clock = FakeClock(100.0)
    old = elector_with_clock(store, "old", clock)
    assert old.try_acquire_or_renew()
    b = elector_with_clock(store, "b", clock)
    c = elector_with_clock(store, "c", clock)
    assert not b.try_acquire_or_renew() and not c.try_acquire_or_renew()
    clock.step(16)
    # both read the same expired record; the second write carries a stale resourceVersion
    b.config.lock.get()
    c.config.lock.get()
    record = LeaderElectionRecord("b", 15, datetime.now(UTC), datetime.now(UTC), 1)
    b.config.lock.update(record)
    with pytest.raises(ApiException) as conflict:
        c.config.lock.update(replace(record, holder_identity="c"))
    assert conflict.value.status == 409
    assert not c.try_acquire_or_renew()  # re-reads: held by b, fresh
    assert c.get_leader() == "b"


def test_check_reports_a_stuck_leader() -> None:
    store = LeaseStore()
    clock = FakeClock(100.0)
    a = elector_with_clock(store, "a", clock)
    a.check(1.0)  # not leading: healthy
    assert a.try_acquire_or_renew()
    clock.step(15.5)
    a.check(1.0)
    clock.step(1.0)
    with pytest.raises(RuntimeError, match="failed election to renew"):
        a.check(1.0)


def test_lock_reports_missing_lease_and_refuses_update_before_get() -> None:
    lock = LeaseLock(FakeLeaseApi(LeaseStore()), NS, NAME, "me")
    with pytest.raises(LockNotFoundError):
        lock.get()
    with pytest.raises(RuntimeError, match="call get or create first"):
        lock.update(LeaderElectionRecord("me", 15))
    assert lock.describe() == f"{NS}/{NAME}" and lock.identity() == "me"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lease_duration": 10.0, "renew_deadline": 10.0}, "lease_duration"),
        ({"renew_deadline": 2.0, "retry_period": 2.0}, "renew_deadline"),
        ({"lease_duration": 0.5, "renew_deadline": 0.3, "retry_period": 0.1}, "at least 1 s"),
        ({"retry_period": 0.0}, "retry_period"),
    ],
)
def test_config_is_validated_like_client_go(kwargs: dict[str, float], message: str) -> None:
    lock = LeaseLock(FakeLeaseApi(LeaseStore()), NS, NAME, "me")
    config = LeaderElectionConfig(lock, LeaderCallbacks(lambda stop: None, lambda: None))
    for name, value in kwargs.items():
        setattr(config, name, value)
    with pytest.raises(ValueError, match=message):
        LeaderElector(config)


def test_defaults_are_client_go_defaults() -> None:
    lock = LeaseLock(FakeLeaseApi(LeaseStore()), NS, NAME, "me")
    config = LeaderElectionConfig(lock, LeaderCallbacks(lambda stop: None, lambda: None))
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    with pytest.raises(ValueError, match="identity"):
        LeaseLock(FakeLeaseApi(LeaseStore()), NS, NAME, "")


# ----------------------------------------------------------------------------- against LocalApiServer


class PartitionableLeaseApi:
    """The real CoordinationV1Api, with a switch that cuts this candidate off."""

    def __init__(self, api_client: Any) -> None:
        from kubernetes.client import CoordinationV1Api

        self.api = CoordinationV1Api(api_client)
        self.cut = False

    def _check(self) -> None:
        if self.cut:
            raise ApiException(status=503, reason="partitioned by the test")

    def read_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> Any:
        self._check()
        return self.api.read_namespaced_lease(name, namespace, **kwargs)

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any:
        self._check()
        return self.api.create_namespaced_lease(namespace, body, **kwargs)

    def replace_namespaced_lease(self, name: str, namespace: str, body: Any, **kwargs: Any) -> Any:
        self._check()
        return self.api.replace_namespaced_lease(name, namespace, body, **kwargs)


def test_two_candidates_against_local_api_server() -> None:
    """Exactly one of two candidates leads; when it stops renewing, the other takes over
    within 20 s (lease 2 s, renew deadline 1 s, retry 0.2 s here)."""
    from kubernetes.client import CoordinationV1Api

    from tests.runtime.test_controller_runner import local_api_server

    with local_api_server() as server:
        api_client = server.api_client()
        events: list[tuple[str, str]] = []
        lock = threading.Lock()
        started = {ident: threading.Event() for ident in ("a", "b")}
        stopped = {ident: threading.Event() for ident in ("a", "b")}
        apis = {ident: PartitionableLeaseApi(api_client) for ident in ("a", "b")}

        def elector(ident: str) -> LeaderElector:
            def on_started(stop: threading.Event) -> None:
                with lock:
                    events.append(("started", ident))
                started[ident].set()

            def on_stopped() -> None:
                with lock:
                    events.append(("stopped", ident))
                stopped[ident].set()

            return LeaderElector(
                LeaderElectionConfig(
                    LeaseLock(apis[ident], "default", "le-e2e", ident),
                    LeaderCallbacks(on_started, on_stopped),
                    lease_duration=2.0,
                    renew_deadline=1.0,
                    retry_period=0.2,
                    name=ident,
                )
            )

        stops = {ident: threading.Event() for ident in ("a", "b")}
        threads = {
            ident: threading.Thread(target=elector(ident).run, args=(stops[ident],), daemon=True)
            for ident in ("a", "b")
        }
        for t in threads.values():
            t.start()
        try:
            deadline = time.monotonic() + TIMEOUT
            while not (started["a"].is_set() or started["b"].is_set()):
                assert time.monotonic() < deadline, "nobody became leader"
                started["a"].wait(0.01)
            leader = "a" if started["a"].is_set() else "b"
            follower = "b" if leader == "a" else "a"
            assert not started[follower].wait(2.5)  # more than a lease: still one leader
            lease = CoordinationV1Api(api_client).read_namespaced_lease("le-e2e", "default")
            assert lease.spec is not None and lease.spec.holder_identity == leader

            apis[leader].cut = True  # the leader can no longer renew
            cut_at = time.monotonic()
            assert started[follower].wait(20.0), "the follower did not take over within 20 s"
            takeover = time.monotonic() - cut_at
            assert stopped[leader].wait(TIMEOUT)
            lease = CoordinationV1Api(api_client).read_namespaced_lease("le-e2e", "default")
            assert lease.spec is not None
            assert lease.spec.holder_identity == follower
            assert lease.spec.lease_transitions == 1
            assert takeover < 20.0
            with lock:
                assert events[0] == ("started", leader)
                assert ("stopped", leader) in events
                assert events.count(("started", follower)) == 1
        finally:
            for s in stops.values():
                s.set()
            for t in threads.values():
                t.join(TIMEOUT)


def test_lease_lock_round_trip_and_conflict_against_local_api_server() -> None:
    """The real wire format: create, read back (MicroTime to the microsecond), and a write
    with a stale resourceVersion answered 409 Conflict."""
    from tests.runtime.test_controller_runner import local_api_server

    with local_api_server() as server:
        api_client = server.api_client()
        one = LeaseLock(api_client, "default", "lock-rt", "one")
        two = LeaseLock(api_client, "default", "lock-rt", "two")
        with pytest.raises(LockNotFoundError):
            one.get()
        when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
        record = LeaderElectionRecord("one", 15, when, when, 0)
        one.create(record)
        assert two.get() == record
        one.update(replace(record, renew_time=when.replace(microsecond=1)))
        with pytest.raises(ApiException) as conflict:
            two.update(replace(record, holder_identity="two", leader_transitions=1))
        assert conflict.value.status == 409
        assert two.get().holder_identity == "one"


def test_lease_times_go_out_as_micro_time_even_on_a_whole_second() -> None:
    """acquireTime/renewTime are written in MicroTime's one layout (six fraction digits, Z):
    a datetime on a whole second would otherwise go out as `...05+00:00` (isoformat drops a
    zero fraction) and the API server would refuse the Lease."""
    lock = LeaseLock(FakeLeaseApi(LeaseStore()), "default", "lock-micro", "one")
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    spec = lock._body(LeaderElectionRecord("one", 15, when, when, 0))["spec"]
    assert spec["acquireTime"] == spec["renewTime"] == "2026-01-02T03:04:05.000000Z"


def test_a_fractional_lease_duration_is_written_rounded_up_never_shorter() -> None:
    # The others judge the lease by the whole seconds written: truncated (client-go), a 1.5 s
    # lease would read as 1 s, expired before its holder's 1.2 s renew deadline has passed.
    store = LeaseStore()
    elector = LeaderElector(
        LeaderElectionConfig(
            LeaseLock(FakeLeaseApi(store), NS, NAME, "a"),
            LeaderCallbacks(lambda stop: None, lambda: None),
            lease_duration=1.5,
            renew_deadline=1.2,
            retry_period=0.1,
        )
    )
    assert elector.try_acquire_or_renew()
    assert store.spec(NS, NAME)["leaseDurationSeconds"] == 2
    assert [lease_seconds(d) for d in (1.0, 1.5, 15.0, 15.2)] == [1, 2, 15, 16]


class _AnsweredResponse:
    """An HTTP answer as the kubernetes client wraps it in an ApiException."""

    status = 409
    reason = "Conflict"
    data = (
        b'{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot '
        b'be fulfilled on leases.coordination.k8s.io \\"test-lock\\": the object has been '
        b'modified; please apply your changes to the latest version and try again",'
        b'"reason":"Conflict","code":409}'
    )

    def __init__(self) -> None:
        self.headers = {"Audit-Id": "4c1f", "Content-Type": "application/json"}

    def getheaders(self) -> dict[str, str]:  # the kubernetes client's older releases
        return self.headers


class _RacedLeaseApi(FakeLeaseApi):
    """Every replace loses a race with another writer."""

    def replace_namespaced_lease(self, name: str, namespace: str, body: Any, **kwargs: Any) -> Any:
        raise ApiException(http_resp=_AnsweredResponse())


def test_i18_a_failed_lease_request_is_logged_on_one_line_with_the_servers_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    elector = LeaderElector(
        LeaderElectionConfig(
            LeaseLock(_RacedLeaseApi(LeaseStore()), NS, NAME, "a"),
            LeaderCallbacks(lambda stop: None, lambda: None),
            name="a",
        )
    )
    assert elector.try_acquire_or_renew()  # created
    with caplog.at_level(logging.ERROR, logger="kubeinformers.leaderelection"):
        assert not elector.try_acquire_or_renew()  # the renewal's update loses, twice
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 2, said
    for message in said:
        assert "\n" not in message and "Audit-Id" not in message, message
        assert "HTTP 409 Conflict: Operation cannot be fulfilled on leases" in message, message
    assert "optimistically" in said[0] and f"lease {NS}/{NAME}" in said[1]


def test_i19_an_interrupted_elector_waits_for_the_work_and_releases_the_lease() -> None:
    """I19: Ctrl-C while the elector renews (KeyboardInterrupt out of its stop's wait) ends
    it as a stop does: the leader's work is told to stop and waited for, the Lease released,
    and only then on_stopped_leading and the interrupt. It used to call on_stopped_leading
    with the work still running and keep the Lease until it expired."""
    store = LeaseStore()
    work_ended = threading.Event()
    order: list[str] = []

    def work(stop: threading.Event) -> None:
        stop.wait()
        order.append(f"work ended, lease held by {store.spec(NS, NAME)['holderIdentity']!r}")
        work_ended.set()

    elector, started = release_test_elector(
        store,
        work,
        lambda: order.append("stopped leading"),
        lease_duration=5.0,
        renew_deadline=2.0,
    )
    interrupt = threading.Event()

    class InterruptibleStop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            if interrupt.wait(timeout):
                raise KeyboardInterrupt
            return self.is_set()

    raised: list[BaseException] = []

    def run() -> None:
        try:
            elector.run(InterruptibleStop())
        except KeyboardInterrupt as err:
            raised.append(err)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    assert started.wait(TIMEOUT)
    interrupt.set()
    runner.join(TIMEOUT)
    assert not runner.is_alive()
    assert len(raised) == 1
    assert order == ["work ended, lease held by 'a'", "stopped leading"]
    assert store.spec(NS, NAME)["holderIdentity"] == ""  # released, not left to expire


def test_i20_a_cut_off_leader_logs_its_failures_once_and_its_loss_once_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I20: the server away for many retry periods is one ERROR for the failed Lease
    requests (not two per retry period for the whole outage, as client-go logs them), then
    one WARNING when the Lease is lost; once the requests succeed again, one INFO."""
    store = LeaseStore()
    api = FakeLeaseApi(store)
    started, stopped = threading.Event(), threading.Event()
    elector = LeaderElector(
        LeaderElectionConfig(
            LeaseLock(api, NS, NAME, "a"),
            LeaderCallbacks(lambda stop: started.set(), stopped.set),
            lease_duration=1.0,
            renew_deadline=0.5,
            retry_period=0.02,
            name="cut-off",
        )
    )
    stop = threading.Event()
    with caplog.at_level(logging.INFO, logger="kubeinformers.leaderelection"):
        runner = threading.Thread(target=elector.run, args=(stop,), daemon=True)
        runner.start()
        assert started.wait(TIMEOUT)
        api.fail = True  # about 25 failed renewals within the renew deadline
        runner.join(TIMEOUT)
        assert not runner.is_alive() and stopped.is_set()
        failing = api.calls["read"]
        while api.calls["read"] < failing + 10:  # and more failed attempts to take it back
            assert elector.try_acquire_or_renew(0.5) is False
        api.fail = False
        assert elector.try_acquire_or_renew(0.5)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    errors = [r.getMessage() for r in loud if r.levelno == logging.ERROR]
    warnings = [r.getMessage() for r in loud if r.levelno == logging.WARNING]
    assert api.calls["read"] >= 10
    assert 1 <= len(errors) <= 2, errors  # the first failed attempt: its update and its read
    assert all("HTTP 503" in m and f"lease {NS}/{NAME}" in m for m in errors), errors
    assert "logged again at most once a minute" in errors[-1], errors
    assert len(warnings) == 1 and "renew deadline exceeded" in warnings[0], warnings
    assert "stopped leading" in warnings[0]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("requests succeed again after" in m for m in infos), infos


class _ForbiddenLeaseApi(FakeLeaseApi):
    def _check(self, call: str) -> None:
        self.calls[call] += 1
        raise ApiException(status=403, reason="Forbidden")


def test_i20_a_forbidden_lease_request_says_which_rbac_rule_to_add(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I20: a 403 on the Lease says what to do (the Role rule), as the ring's (N25); it said
    only 'HTTP 403 Forbidden'."""
    elector = LeaderElector(
        LeaderElectionConfig(
            LeaseLock(_ForbiddenLeaseApi(LeaseStore()), NS, NAME, "a"),
            LeaderCallbacks(lambda stop: None, lambda: None),
            name="forbidden",
        )
    )
    with caplog.at_level(logging.ERROR, logger="kubeinformers.leaderelection"):
        assert not elector.try_acquire_or_renew()
        assert not elector.try_acquire_or_renew()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 1, said  # the second attempt: DEBUG
    assert "HTTP 403" in said[0] and "verbs [get, create, update]" in said[0], said
