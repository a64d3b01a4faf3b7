"""Leader election on coordination.k8s.io/v1 Lease objects (client-go: tools/leaderelection).

Candidates race to write their identity into one Lease with optimistic concurrency (the
object's resourceVersion): the holder renews it every ``retry_period``; the others watch the
record and take over once it has not changed for ``lease_duration``, measured on their own
clock from when they last saw it change (so clock skew between machines does not matter).
A leader that cannot renew within ``renew_deadline`` stops leading. Make sure
``lease_duration`` > ``renew_deadline`` with margin: between a leader losing the lease on the
server and noticing it, two processes may believe they lead.

```python
lock = LeaseLock(api_client, "kube-system", "my-controller", identity=socket.gethostname())
elector = LeaderElector(LeaderElectionConfig(lock, callbacks=LeaderCallbacks(
    on_started_leading=lambda stop: controller.run(stop),
    on_stopped_leading=lambda: log.info("no longer the leader"))))
elector.run(stop)      # blocks until stop is set or leadership is lost
```
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubeinformers.runtime.api.errors import client_error_status, describe_client_error
from kubeinformers.runtime.api.fields import field_of as _field
from kubeinformers.runtime.api.timestamps import format_micro_time
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.client.single_attempt import single_attempt_client
from kubeinformers.runtime.clock import Now

if TYPE_CHECKING:
    # Type checkers read the two kubernetes names the lock uses as declared here, so checking
    # a program that uses kubeinformers does not analyse the kubernetes package (~900
    # modules, issue 30; see kubeinformers.runtime.client.api_client).
    class ApiException(Exception):
        """kubernetes.client.exceptions.ApiException, as the lock reads it."""

        status: int | None

    def CoordinationV1Api(api_client: ApiClient) -> LeaseApi:
        """kubernetes.client.CoordinationV1Api over `api_client`."""
        ...

else:
    # Imported with the module, not in LeaseLock(): an elector built inside a coroutine must
    # not import the kubernetes client's API classes (a quarter of a second) on the event loop.
    from kubernetes.client import CoordinationV1Api
    from kubernetes.client.exceptions import ApiException

__all__ = [
    "JITTER_FACTOR",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "LockNotFoundError",
    "ResourceLock",
    "lease_valid",
    "run_or_die",
]

_log = logging.getLogger("kubeinformers.leaderelection")
FAILURE_REPEAT_SECONDS = 60.0  # I20: a streak of failed Lease requests is logged again this often

JITTER_FACTOR = 1.2  # client-go: the acquire loop waits retry_period * (1 + rand * 1.2)


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What a lock stores (client-go resourcelock.LeaderElectionRecord)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0


def lease_valid(observed_time: float, lease_duration_seconds: float, now: float) -> bool:
    """Whether a Lease still holds: `now` is less than `lease_duration_seconds` past
    `observed_time`, the moment (on this process's clock) its record was last seen to change.
    Judged on the local clock only, so clock skew between machines does not matter."""
    return observed_time + lease_duration_seconds > now


class LockNotFoundError(LookupError):
    """The lock object does not exist yet."""


class ResourceLock(Protocol):
    """Storage of the election record (client-go resourcelock.Interface)."""

    def get(self, timeout: float | None = None) -> LeaderElectionRecord:
        """The current record; LockNotFoundError if there is none."""
        ...

    def create(self, record: LeaderElectionRecord, timeout: float | None = None) -> None: ...

    def update(self, record: LeaderElectionRecord, timeout: float | None = None) -> None:
        """Replace the record last read or written; fails if someone else wrote meanwhile."""
        ...

    def identity(self) -> str: ...

    def describe(self) -> str: ...


@runtime_checkable
class LeaseApi(Protocol):
    """The three calls of kubernetes.client.CoordinationV1Api that a LeaseLock makes."""

    def read_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> Any: ...

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any: ...

    def replace_namespaced_lease(
        self, name: str, namespace: str, body: Any, **kwargs: Any
    ) -> Any: ...


def _parse_time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


class LeaseLock:
    """A ResourceLock on a coordination.k8s.io/v1 Lease, through the kubernetes client.

    ``api`` is a ``kubernetes.client.ApiClient`` (wrapped in ``CoordinationV1Api``) or a
    `LeaseApi`; anything else is a TypeError. Updates send the resourceVersion last seen, so a concurrent writer makes them
    fail with 409 Conflict.
    """

    def __init__(
        self,
        api: ApiClient | LeaseApi,
        namespace: str,
        name: str,
        identity: str,
        *,
        labels: dict[str, str] | None = None,
    ) -> None:
        if not identity:
            raise ValueError("LeaseLock: identity must not be empty (use e.g. the host name)")
        # CoordinationV1Api takes the dict bodies `_body` builds (its hints say V1Lease only).
        if not isinstance(api, LeaseApi | ApiClient):
            raise TypeError(
                f"LeaseLock {namespace}/{name}: api must be a kubernetes.client.ApiClient or a "
                f"LeaseApi (read_, create_ and replace_namespaced_lease), not {type(api).__name__}"
            )
        self._api: LeaseApi = (
            api
            if isinstance(api, LeaseApi)
            else CoordinationV1Api(single_attempt_client(api))  # N21: no hidden retries
        )
        self.namespace = namespace
        self.name = name
        self._identity = identity
        self._labels = labels
        self._resource_version: str | None = None
        self._lease: Any = None

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _kwargs(self, timeout: float | None) -> dict[str, Any]:
        return {} if timeout is None or timeout <= 0 else {"_request_timeout": timeout}

    def _remember(self, lease: Any) -> LeaderElectionRecord:
        self._lease = lease
        metadata = _field(lease, "metadata", "metadata")
        self._resource_version = _field(metadata, "resource_version", "resourceVersion")
        spec = _field(lease, "spec", "spec")
        return LeaderElectionRecord(
            holder_identity=_field(spec, "holder_identity", "holderIdentity") or "",
            lease_duration_seconds=_field(spec, "lease_duration_seconds", "leaseDurationSeconds")
            or 0,
            acquire_time=_parse_time(_field(spec, "acquire_time", "acquireTime")),
            renew_time=_parse_time(_field(spec, "renew_time", "renewTime")),
            leader_transitions=_field(spec, "lease_transitions", "leaseTransitions") or 0,
        )

    def _body(self, record: LeaderElectionRecord) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if self._labels:
            metadata["labels"] = dict(self._labels)
        if self._resource_version:
            metadata["resourceVersion"] = self._resource_version
        spec: dict[str, Any] = {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "leaseTransitions": record.leader_transitions,
        }
        # Written as MicroTime strings: the kubernetes client would write a datetime with
        # isoformat(), which drops a zero fraction, and the API server refuses that MicroTime.
        for key, value in (("acquireTime", record.acquire_time), ("renewTime", record.renew_time)):
            if value is not None:
                spec[key] = format_micro_time(value)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": spec,
        }

    def get(self, timeout: float | None = None) -> LeaderElectionRecord:
        try:
            lease = self._api.read_namespaced_lease(
                self.name, self.namespace, **self._kwargs(timeout)
            )
        except ApiException as err:
            if err.status == 404:
                raise LockNotFoundError(f"lease {self.describe()} not found") from err
            raise
        return self._remember(lease)

    def create(self, record: LeaderElectionRecord, timeout: float | None = None) -> None:
        self._resource_version = None
        body = self._body(record)
        self._remember(
            self._api.create_namespaced_lease(self.namespace, body, **self._kwargs(timeout))
        )

    def update(self, record: LeaderElectionRecord, timeout: float | None = None) -> None:
        if self._lease is None:
            raise RuntimeError(f"lease {self.describe()} not initialized: call get or create first")
        self._remember(
            self._api.replace_namespaced_lease(
                self.name, self.namespace, self._body(record), **self._kwargs(timeout)
            )
        )


@dataclass
class LeaderCallbacks:
    """``on_started_leading(stop)`` runs on its own thread and must return soon after ``stop``
    is set (leadership lost or the elector stopped). ``on_stopped_leading()`` is called when
    ``run`` ends, also when leadership was never acquired (as in client-go).
    ``on_new_leader(identity)`` reports every change of observed holder, the first included;
    it runs on a short-lived thread so a slow callback never delays renewals."""

    on_started_leading: Callable[[threading.Event], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


def check_lease_timing(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """client-go's checks of a Lease holder's timing (NewLeaderElector), shared by the elector
    and the shard ring: a holder must stop working before its Lease can be judged expired."""
    if lease_duration <= renew_deadline:
        raise ValueError(
            f"lease_duration ({lease_duration}) must be greater than "
            f"renew_deadline ({renew_deadline})"
        )
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(
            f"renew_deadline ({renew_deadline}) must be greater than "
            f"retry_period*{JITTER_FACTOR} ({JITTER_FACTOR * retry_period})"
        )
    if lease_duration < 1:
        raise ValueError(
            f"lease_duration must be at least 1 s (Lease stores whole seconds), "
            f"got {lease_duration}"
        )
    if retry_period <= 0:
        raise ValueError(f"retry_period must be positive, got {retry_period}")


def lease_seconds(lease_duration: float) -> int:
    """The `leaseDurationSeconds` a holder with `lease_duration` writes: whole seconds, rounded
    up. client-go truncates; rounded up, the others never judge a lease of a fractional
    duration expired before its holder has stopped working (`check_lease_timing`)."""
    return max(1, math.ceil(lease_duration))


@dataclass
class LeaderElectionConfig:
    """client-go's defaults: lease 15 s, renew deadline 10 s, retry every 2 s."""

    lock: ResourceLock
    callbacks: LeaderCallbacks
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""
    clock: Now = field(default=time.monotonic)

    def validate(self) -> None:
        check_lease_timing(self.lease_duration, self.renew_deadline, self.retry_period)
        if not self.lock.identity():
            raise ValueError("the lock's identity is empty")


def log_lost_lease(log: logging.Logger, config: LeaderElectionConfig) -> None:
    """I20: losing the Lease is said at WARNING, once per loss (client-go: INFO)."""
    log.warning(
        "failed to renew lease %s: renew deadline exceeded (%g s without a successful "
        "renewal; the failures are logged above): stopped leading",
        config.lock.describe(),
        config.renew_deadline,
    )


class LeaderElector:
    """Runs one candidate (client-go LeaderElector); ``run`` blocks, one call per elector."""

    def __init__(self, config: LeaderElectionConfig) -> None:
        config.validate()
        self.config = config
        self._clock = config.clock
        self._observed = LeaderElectionRecord()
        self._observed_time = 0.0
        self._reported_leader = ""
        self._lock = threading.Lock()
        self._log = _log.getChild(config.name) if config.name else _log
        # I20: the failed Lease requests of a streak of failed attempts are logged at ERROR
        # for its first attempt, then at most once a minute; the others at DEBUG.
        self._failed_attempts = 0
        self._loud_at = 0.0  # time.monotonic() of the last attempt logged at ERROR
        self._attempt_level = logging.ERROR
        self._attempt_failed = False

    # ------------------------------------------------------------------ state

    def get_leader(self) -> str:
        """The identity of the last observed leader ("" if none observed yet)."""
        with self._lock:
            return self._observed.holder_identity

    def is_leader(self) -> bool:
        with self._lock:
            return self._observed.holder_identity == self.config.lock.identity()

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            self._observed = record
            self._observed_time = self._clock()

    def _lease_valid(self, now: float) -> bool:
        with self._lock:
            return lease_valid(self._observed_time, self._observed.lease_duration_seconds, now)

    def check(self, max_tolerable_expired_lease: float) -> None:
        """Health check (client-go HealthzAdaptor): raises if we believe we lead but have not
        renewed for longer than lease_duration + the tolerance (a stuck elector)."""
        with self._lock:
            leading = self._observed.holder_identity == self.config.lock.identity()
            since = self._clock() - self._observed_time
        if leading and since > self.config.lease_duration + max_tolerable_expired_lease:
            raise RuntimeError(
                f"failed election to renew leadership on lease {self.config.lock.describe()}"
            )

    # ------------------------------------------------------------------ main loop

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead, renew; returns when stop is set or leadership is lost."""
        leading = threading.Event()
        try:
            if not self._acquire(stop):
                return
            thread = threading.Thread(
                target=self._started_leading,
                args=(leading,),
                name=f"leader-{self.config.name or self.config.lock.describe()}",
                daemon=True,
            )
            thread.start()
            try:
                self._renew(stop)
            finally:
                # I19: also when the renewals end by an exception (Ctrl-C's KeyboardInterrupt
                # or a signal handler's SystemExit in the thread that runs the elector): the
                # work is told to stop and waited for, and the Lease released, as on a stop.
                self._end_leading(thread, leading)
        finally:
            leading.set()
            try:
                self.config.callbacks.on_stopped_leading()
            except Exception:
                self._log.exception("on_stopped_leading callback failed")

    def _end_leading(self, thread: threading.Thread, leading: threading.Event) -> None:
        """Tell the leader's work to stop; with release_on_cancel, wait for it (up to the
        renew deadline) and give the Lease up once it has returned."""
        leading.set()  # tell the leader's work to stop before giving the lease away
        if not self.config.release_on_cancel:
            return
        # Unlike client-go, wait (up to renew_deadline) for that work to return: releasing
        # while it still runs would let a second leader start beside it.
        thread.join(self.config.renew_deadline)
        if thread.is_alive():
            self._log.warning(
                "on_started_leading has not returned %.1f s after stop; not releasing "
                "lease %s (it expires by itself)",
                self.config.renew_deadline,
                self.config.lock.describe(),
            )
        else:
            self.release()

    def _started_leading(self, leading: threading.Event) -> None:
        try:
            self.config.callbacks.on_started_leading(leading)
        except Exception:
            self._log.exception("on_started_leading callback failed")

    def _acquire(self, stop: threading.Event) -> bool:
        desc = self.config.lock.describe()
        self._log.info("attempting to acquire leader lease %s...", desc)
        while not stop.is_set():
            succeeded = self.try_acquire_or_renew(self.config.renew_deadline)
            self._maybe_report_transition()
            if succeeded:
                self._log.info("successfully acquired lease %s", desc)
                return True
            self._log.debug("failed to acquire lease %s", desc)
            period = self.config.retry_period
            if stop.wait(period + random.random() * JITTER_FACTOR * period):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        while not stop.is_set():
            deadline = self._clock() + self.config.renew_deadline
            renewed = False
            while not stop.is_set():
                remaining = deadline - self._clock()
                if remaining <= 0:
                    break
                if self.try_acquire_or_renew(remaining):
                    renewed = True
                    break
                if stop.wait(min(self.config.retry_period, max(deadline - self._clock(), 0))):
                    break
            self._maybe_report_transition()
            if stop.is_set():
                return
            if not renewed:
                log_lost_lease(self._log, self.config)
                return
            if stop.wait(self.config.retry_period):
                return

    def try_acquire_or_renew(self, timeout: float | None = None) -> bool:
        """One attempt to take or keep the lease (client-go tryAcquireOrRenew). Its failed
        requests are logged at ERROR when it is the first failed attempt of a streak, or the
        first a minute after the last one so logged; otherwise at DEBUG (I20)."""
        started = time.monotonic()
        quiet = self._failed_attempts and started - self._loud_at < FAILURE_REPEAT_SECONDS
        self._attempt_level = logging.DEBUG if quiet else logging.ERROR
        self._attempt_failed = False
        succeeded = self._try_acquire_or_renew(timeout)
        if self._attempt_failed:
            self._failed_attempts += 1
            if not quiet:
                self._loud_at = started
        elif self._failed_attempts:
            self._log.info(
                "lease %s: requests succeed again after %d failed attempt%s",
                self.config.lock.describe(),
                self._failed_attempts,
                "" if self._failed_attempts == 1 else "s",
            )
            self._failed_attempts = 0
        return succeeded

    def _request_failed(self, message: str, err: BaseException) -> None:
        """Log a failed Lease request of this attempt at its level (I20)."""
        self._attempt_failed = True
        repeat = ""
        if self._failed_attempts and self._attempt_level >= logging.ERROR:
            repeat = f" (still failing: {self._failed_attempts + 1} attempts in a row)"
        elif not self._failed_attempts:
            repeat = (
                f"; retrying every {self.config.retry_period:g} s, logged again at most once a "
                "minute while it fails"
            )
        status = client_error_status(err)
        hint = ""
        if status == 403:  # what to do, as the shard ring's 403 says it (N25)
            hint = (
                "; the elector's service account needs get, create and update on leases "
                "(coordination.k8s.io) in the Lease's namespace: a Role rule with apiGroups "
                "[coordination.k8s.io], resources [leases], verbs [get, create, update]"
            )
        elif status == 401:
            hint = "; check the credentials (token, client certificate or exec plugin)"
        self._log.log(
            self._attempt_level,
            "%s: %s%s%s",
            message % self.config.lock.describe(),
            describe_client_error(err),
            hint,
            repeat,
        )

    def _try_acquire_or_renew(self, timeout: float | None) -> bool:
        lock = self.config.lock
        wall_now = datetime.now(UTC)
        now = self._clock()
        record = LeaderElectionRecord(
            holder_identity=lock.identity(),
            lease_duration_seconds=lease_seconds(self.config.lease_duration),
            acquire_time=wall_now,
            renew_time=wall_now,
        )

        # 1. Fast path: the leader updates optimistically against the record it last wrote.
        if self.is_leader() and self._lease_valid(now):
            with self._lock:
                observed = self._observed
            fast = replace(
                record,
                acquire_time=observed.acquire_time,
                leader_transitions=observed.leader_transitions,
            )
            try:
                lock.update(fast, timeout)
                self._set_observed(fast)
                return True
            except Exception as err:
                self._request_failed(
                    "failed to update lease %s optimistically, falling back to slow path", err
                )

        # 2. Obtain or create the record.
        try:
            old = lock.get(timeout)
        except LockNotFoundError:
            try:
                lock.create(record, timeout)
            except Exception as err:
                self._request_failed("error initially creating lease %s", err)
                return False
            self._set_observed(record)
            return True
        except Exception as err:
            self._request_failed("error retrieving lease %s", err)
            return False

        # 3. Record obtained: check the holder and how long since it last changed.
        with self._lock:
            changed = old != self._observed
        if changed:
            self._set_observed(old)
        if old.holder_identity and self._lease_valid(now) and not self.is_leader():
            self._log.debug("lease is held by %s and has not yet expired", old.holder_identity)
            return False

        # 4. Take it or renew it.
        if self.is_leader():
            record = replace(
                record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions
            )
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        try:
            lock.update(record, timeout)
        except Exception as err:
            self._request_failed("failed to update lease %s", err)
            return False
        self._set_observed(record)
        return True

    def release(self) -> bool:
        """Give the lease up if we hold it (ReleaseOnCancel): an empty holder and a 1 s lease,
        so the next candidate can take over at its next retry."""
        if not self.is_leader():
            return True
        wall_now = datetime.now(UTC)
        with self._lock:
            transitions = self._observed.leader_transitions
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=wall_now,
            renew_time=wall_now,
            leader_transitions=transitions,
        )
        try:
            self.config.lock.update(record, self.config.renew_deadline)
        except Exception as err:
            self._log.error(
                "failed to release lease %s: %s",
                self.config.lock.describe(),
                describe_client_error(err),
            )
            return False
        self._set_observed(record)
        self._log.info("released lease %s", self.config.lock.describe())
        return True

    def _maybe_report_transition(self) -> None:
        with self._lock:
            holder = self._observed.holder_identity
            if holder == self._reported_leader:
                return
            self._reported_leader = holder
        callback = self.config.callbacks.on_new_leader
        if callback is not None:

            def report() -> None:
                try:
                    callback(holder)
                except Exception:
                    self._log.exception("on_new_leader callback failed")

            threading.Thread(target=report, name="leader-new-leader", daemon=True).start()


def run_or_die(config: LeaderElectionConfig, stop: threading.Event) -> None:
    """Validate the config (raising ValueError) and run the election until stop/lost lease."""
    LeaderElector(config).run(stop)
