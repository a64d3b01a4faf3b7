"""What a shard ring says (rules N21, N23, N25): a refused or unreadable Lease is one clean
WARNING per condition and minute, and `health()` says why a replica holds nothing. Over the in-memory Lease API; the
minute between repeats is a manual clock's, so nothing sleeps."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kubeinformers.runtime.ring.core import REPEAT_AFTER, RingConfig, RingCore
from kubeinformers.runtime.ring.members import BUCKETS_ANNOTATION, RING_LABEL, MemberLeases
from tests.support.leases import FakeLeaseApi, LeaseStore

NS = "default"
RING = "ctl"
LEASE, RENEW, RETRY = 1.0, 0.6, 0.2
WAIT = 10.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _core(api: FakeLeaseApi, identity: str, clock: Clock) -> RingCore:
    config = RingConfig(
        RING,
        identity,
        NS,
        lease_duration=LEASE,
        renew_deadline=RENEW,
        retry_period=RETRY,
        clock=clock,
    )
    return RingCore(config, MemberLeases(api, NS, RING, identity))


def _forbidden(verb: str) -> ApiException:
    """A 403 as kubernetes' client raises it: headers and a Status body, printed on 5 lines."""
    err = ApiException(status=403, reason="Forbidden")
    err.headers = {"Audit-Id": "x", "Content-Type": "application/json"}
    err.body = json.dumps(
        {
            "kind": "Status",
            "status": "Failure",
            "reason": "Forbidden",
            "code": 403,
            "message": f'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:'
            f'{NS}:ctl" cannot {verb} resource "leases" in API group "coordination.k8s.io" '
            f'in the namespace "{NS}"',
        }
    )
    return err


class NoListApi(FakeLeaseApi):
    """A Role without `list` on Leases: every list is refused (403)."""

    def __init__(self, store: LeaseStore) -> None:
        super().__init__(store)
        self.refuse_list = True

    def list_namespaced_lease(self, namespace: str, **kwargs: Any) -> Any:
        if self.refuse_list:
            self.calls["list"] += 1
            raise _forbidden("list")
        return super().list_namespaced_lease(namespace, **kwargs)


def _ring_warnings(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith("kubeinformers.ring")
        and r.levelno >= logging.WARNING
        and text in r.getMessage()
    ]


def _one_clean_line(record: logging.LogRecord) -> None:
    message = record.getMessage()
    assert "\n" not in message, message
    assert "HTTP response headers" not in message and "Audit-Id" not in message, message
    assert record.exc_info is None  # an expected API error is no traceback


# ------------------------------------------------------------------ N25: what a replica says


def test_n25_no_list_permission_is_one_warning_a_minute_naming_the_rbac_rule_and_health_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="kubeinformers.ring")
    clock = Clock()
    api = NoListApi(LeaseStore())
    core = _core(api, "a", clock)
    assert core.renew()  # create and update are allowed: it joins
    for _ in range(5):
        assert core.observe() is None
    warnings = _ring_warnings(caplog, "cannot list member leases")
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    _one_clean_line(warnings[0])
    assert f"list leases in namespace {NS}" in message
    assert "HTTP 403 Forbidden: leases.coordination.k8s.io is forbidden" in message
    assert "verbs [list, create, update, delete]" in message and "coordination.k8s.io" in message

    health = core.health()
    assert not health.healthy and health.list_error is not None
    described = health.describe()
    assert "cannot list the ring's member Leases (HTTP 403 Forbidden" in described
    assert "Audit-Id" not in described

    clock.now += REPEAT_AFTER  # a minute on, still refused: said again
    assert core.observe() is None
    assert len(_ring_warnings(caplog, "cannot list member leases")) == 2

    api.refuse_list = False  # the Role fixed
    assert core.observe() is not None
    assert core.health().list_error is None
    assert any("lists member leases again" in r.getMessage() for r in caplog.records)


def test_n25_an_unreadable_bucket_annotation_is_said_once_a_minute_not_every_tick(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="kubeinformers.ring")
    clock = Clock()
    store = LeaseStore()
    with store.lock:
        store.put(
            {
                "metadata": {
                    "name": f"{RING}-weird",
                    "namespace": NS,
                    "labels": {RING_LABEL: RING},
                    "annotations": {BUCKETS_ANNOTATION: "not-a-range"},
                },
                "spec": {"holderIdentity": "weird", "leaseDurationSeconds": 4},
            }
        )
    core = _core(FakeLeaseApi(store), "a", clock)
    assert core.renew()
    for _ in range(10):
        assert core.observe() is not None
    warnings = _ring_warnings(caplog, "unreadable")
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert f"{NS}/{RING}-weird" in warnings[0].getMessage()
    _one_clean_line(warnings[0])
    clock.now += REPEAT_AFTER
    core.renew()
    core.observe()
    assert len(_ring_warnings(caplog, "unreadable")) == 2  # it lasts: again after a minute


def test_n21_n25_a_duplicate_identity_is_one_line_per_replica_and_minute_not_per_renewal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="kubeinformers.ring")
    clock = Clock()
    store = LeaseStore()
    first = _core(FakeLeaseApi(store), "a", clock)
    twin = _core(FakeLeaseApi(store), "a", clock)  # the same identity, twice
    assert first.renew() and twin.renew()  # the twin takes the existing Lease over
    conflicts = 0
    for core in (first, twin) * 5:  # each renewal finds the other's write: 409, re-read
        if not core.renew():
            conflicts += 1
            assert core.renew()  # from a fresh read: succeeds, the conflict is not over
    assert conflicts == 10
    warnings = _ring_warnings(caplog, "another writer")
    assert len(warnings) == 2, [r.getMessage() for r in warnings]  # once per replica
    for record in warnings:
        _one_clean_line(record)
        assert "identity 'a'" in record.getMessage() and "HTTP 409" in record.getMessage()
    assert _ring_warnings(caplog, "cannot renew") == []
    assert not any("renewed again" in r.getMessage() for r in caplog.records)

    clock.now += REPEAT_AFTER  # still two writers a minute on: said again, once each
    for core in (first, twin) * 3:
        if not core.renew():
            core.renew()
    assert len(_ring_warnings(caplog, "another writer")) == 4


def test_n25_a_refused_renewal_is_one_clean_line_and_health_describes_it_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class NoUpdate(FakeLeaseApi):
        def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any:
            raise _forbidden("create")

    caplog.set_level(logging.DEBUG, logger="kubeinformers.ring")
    core = _core(NoUpdate(LeaseStore()), "a", Clock())
    for _ in range(3):
        assert not core.renew()
    warnings = _ring_warnings(caplog, "cannot renew member lease")
    assert len(warnings) == 1
    _one_clean_line(warnings[0])
    assert "verbs [list, create, update, delete]" in warnings[0].getMessage()
    described = core.health().describe()
    assert "not a member: its Lease is not renewed (HTTP 403 Forbidden: leases" in described
    assert "Audit-Id" not in described and "HTTP response" not in described


def test_n25_a_replica_that_never_joined_does_not_warn_about_deleting_its_lease(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="kubeinformers.ring")
    api = FakeLeaseApi(LeaseStore())
    api.fail = True  # never reaches the server
    core = _core(api, "a", Clock())
    assert not core.renew()
    core.leave()
    assert _ring_warnings(caplog, "could not delete") == []
    assert not any("left the ring" in r.getMessage() for r in caplog.records)


# ------------------------------------------------------------------ N23: what health() knows


def test_n23_a_member_that_cannot_list_counts_itself_and_says_what_it_has_not_listed() -> None:
    """A member whose list of the ring's Leases fails is still a member: health() and the
    metrics count it (members=0 read as an empty ring), describe() says the others are not
    listed; after a list succeeded and a later one failed, the members are those last
    listed, and describe() says so."""
    store = LeaseStore()
    MemberLeases(FakeLeaseApi(store), NS, RING, "b").write({1}, 3600, None)  # another member
    api = NoListApi(store)
    core = _core(api, "a", Clock())
    assert core.renew()
    assert core.observe() is None  # the list is refused
    health = core.health()
    assert health.member and health.members == ("a",) and not health.members_listed
    assert core.metrics().members == 1
    described = health.describe()
    assert "members=1 (itself; the others not listed)" in described
    assert "it starts and releases no bucket until a list succeeds" in described

    api.refuse_list = False
    assert core.observe() is not None
    health = core.health()
    assert health.members == ("a", "b") and health.members_listed
    assert "members=2 buckets=" in health.describe()

    api.refuse_list = True  # refused again: the others as last listed
    assert core.observe() is None
    health = core.health()
    assert health.members == ("a", "b") and core.metrics().members == 2
    assert "members=2 (as last listed)" in health.describe()


def test_n23_n25_list_error_is_kept_exactly_while_a_member_cannot_list() -> None:
    """list_error says why a member cannot list the ring's Leases: it goes when a list
    succeeds (a handoff step's or a claim's), and when the replica loses its Lease (a
    non-member does not list: health says "not a member"); a list that fails after the
    Lease was lost (the renewer lost it meanwhile) does not bring it back."""
    clock = Clock()
    api = NoListApi(LeaseStore())
    core = _core(api, "a", clock)
    assert core.renew()
    assert core.observe() is None
    assert core.health().list_error is not None

    api.refuse_list = False  # a claim's list succeeds: the error is over
    assert core.claim({1}) == frozenset({1})
    assert core.health().list_error is None
    api.refuse_list = True
    assert core.observe() is None
    assert core.health().list_error is not None

    api.fail = True  # cut off: no renewal within the deadline, the Lease is lost
    clock.now += RENEW + 0.1
    assert not core.renew() and core.deadline_exceeded()
    core.lose()
    health = core.health()
    assert not health.member and health.list_error is None
    assert "cannot list" not in health.describe() and "not a member" in health.describe()

    api.fail = False  # back: a member again, the list still refused
    assert core.renew()
    assert core.health().list_error is None  # not tried yet
    assert core.observe() is None
    assert core.health().list_error is not None

    class LostWhileListing(NoListApi):
        """The renewer loses the Lease while a handoff step's list is under way."""

        def list_namespaced_lease(self, namespace: str, **kwargs: Any) -> Any:
            core.lose()
            return super().list_namespaced_lease(namespace, **kwargs)

    core.leases = MemberLeases(LostWhileListing(LeaseStore()), NS, RING, "a")
    core.leave()  # a fresh start over the API whose list ends after the loss
    assert core.renew()
    assert core.observe() is None
    health = core.health()
    assert not health.member and health.list_error is None
