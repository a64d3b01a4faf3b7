"""A shard ring's membership on coordination.k8s.io/v1 Leases (section N, rule N21).

Each replica holds one member Lease, `<ring>-<identity>`, labelled
`kubeinformers.io/ring=<ring>`, with its identity as `holderIdentity` and the buckets it holds
in the annotation `kubeinformers.io/ring-buckets` (`"0-11,40,52-60"`). `MemberLeases` creates,
renews (with the resourceVersion last seen, so a concurrent writer fails with 409), lists (by
the label) and deletes them. `MemberView` judges which of the listed Leases are live, as
`LeaderElector` judges its Lease: a Lease holds until its `leaseDurationSeconds` have passed,
on this process's clock, since its record was last seen to change (`lease_valid`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from kubeinformers.runtime.api.fields import field_of as _field
from kubeinformers.runtime.api.timestamps import format_micro_time
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.client.single_attempt import single_attempt_client
from kubeinformers.runtime.leaderelection.elector import lease_valid
from kubeinformers.runtime.ring.assignment import format_buckets, parse_buckets

__all__ = [
    "ABANDONED_AFTER",
    "BUCKETS_ANNOTATION",
    "RING_LABEL",
    "Member",
    "MemberLeaseApi",
    "MemberLeases",
    "MemberView",
    "claims_of",
]

RING_LABEL = "kubeinformers.io/ring"
ABANDONED_AFTER = 10  # lease durations without a change: the Lease of a replica long gone
BUCKETS_ANNOTATION = "kubeinformers.io/ring-buckets"

_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


@runtime_checkable
class MemberLeaseApi(Protocol):
    """The calls of kubernetes.client.CoordinationV1Api that member Leases need."""

    def list_namespaced_lease(self, namespace: str, **kwargs: Any) -> Any: ...

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any: ...

    def replace_namespaced_lease(
        self, name: str, namespace: str, body: Any, **kwargs: Any
    ) -> Any: ...

    def delete_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> Any: ...


if TYPE_CHECKING:
    # Declared here for type checkers, so that checking a program that uses the ring does not
    # analyse the kubernetes package (H15; as the leader election's lock does).
    class ApiException(Exception):
        """kubernetes.client.exceptions.ApiException, as the ring reads it."""

        status: int | None

    def CoordinationV1Api(api_client: ApiClient) -> MemberLeaseApi:
        """kubernetes.client.CoordinationV1Api over `api_client`."""
        ...

else:
    from kubernetes.client import CoordinationV1Api
    from kubernetes.client.exceptions import ApiException


@dataclass(frozen=True, slots=True)
class Member:
    """One member Lease as listed: its identity, the buckets it says it holds, its duration,
    and its resourceVersion (which changes with every renewal)."""

    name: str
    identity: str
    buckets: frozenset[int]
    lease_duration_seconds: int
    resource_version: str
    problem: str | None = None  # its bucket annotation is unreadable (taken as no bucket)


def _kwargs(timeout: float | None) -> dict[str, Any]:
    return {} if timeout is None or timeout <= 0 else {"_request_timeout": timeout}


class MemberLeases:
    """The Leases of one ring in one namespace, and this replica's own among them."""

    def __init__(
        self, api: ApiClient | MemberLeaseApi, namespace: str, ring: str, identity: str
    ) -> None:
        if not ring or len(ring) > 63 or not _LABEL_VALUE.fullmatch(ring):
            raise ValueError(
                f"ring name {ring!r} must be a label value: up to 63 letters, digits, '-', "
                "'_', '.', starting and ending with a letter or digit"
            )
        name = f"{ring}-{identity}"
        if not identity or len(name) > 253 or not _NAME.fullmatch(name):
            raise ValueError(
                f"member Lease name {name!r} (ring {ring!r}, identity {identity!r}) is not a "
                "valid object name: use a lower-case identity such as the pod's name"
            )
        if not isinstance(api, MemberLeaseApi | ApiClient):
            raise TypeError(
                f"ring {ring}: api must be a kubernetes.client.ApiClient or a MemberLeaseApi "
                f"(list_, create_, replace_ and delete_namespaced_lease), not "
                f"{type(api).__name__}"
            )
        self._api: MemberLeaseApi = (
            api
            if isinstance(api, MemberLeaseApi)
            else CoordinationV1Api(single_attempt_client(api))  # N22: no hidden retries
        )
        self.namespace = namespace
        self.ring = ring
        self.identity = identity
        self.name = name
        self._resource_version: str | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _body(
        self, buckets: Iterable[int], lease_duration_seconds: int, acquired: datetime | None
    ) -> dict[str, Any]:
        now = datetime.now(UTC)
        metadata: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "labels": {RING_LABEL: self.ring},
            "annotations": {BUCKETS_ANNOTATION: format_buckets(frozenset(buckets))},
        }
        if self._resource_version:
            metadata["resourceVersion"] = self._resource_version
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": lease_duration_seconds,
                "acquireTime": format_micro_time(acquired or now),
                "renewTime": format_micro_time(now),
            },
        }

    def write(
        self, buckets: Iterable[int], lease_duration_seconds: int, timeout: float | None
    ) -> None:
        """Create or renew this replica's Lease, recording `buckets` as held. Raises the API's
        error (409 when another writer changed the Lease since we last wrote it: the next
        write starts from a fresh read)."""
        if self._resource_version is None:
            body = self._body(buckets, lease_duration_seconds, None)
            try:
                created = self._api.create_namespaced_lease(
                    self.namespace, body, **_kwargs(timeout)
                )
            except ApiException as err:
                if err.status != 409:
                    raise
                # Ours from an earlier run of this identity: take it over, renewing it.
                existing = self._api.list_namespaced_lease(
                    self.namespace,
                    field_selector=f"metadata.name={self.name}",
                    **_kwargs(timeout),
                )
                items = _field(existing, "items", "items") or []
                if not items:
                    raise
                self._resource_version = _resource_version(items[0])
                self.write(buckets, lease_duration_seconds, timeout)
                return
            self._resource_version = _resource_version(created)
            return
        try:
            replaced = self._api.replace_namespaced_lease(
                self.name,
                self.namespace,
                self._body(buckets, lease_duration_seconds, None),
                **_kwargs(timeout),
            )
        except ApiException as err:
            if err.status in (404, 409):
                self._resource_version = None  # re-read (or re-create) on the next write
            raise  # a 409 (another writer: a duplicate identity) is said by the ring (N21, N25)
        self._resource_version = _resource_version(replaced)

    def list(self, timeout: float | None) -> list[Member]:
        """The ring's member Leases (a quorum read: every write before it is in it)."""
        listed = self._api.list_namespaced_lease(
            self.namespace, label_selector=f"{RING_LABEL}={self.ring}", **_kwargs(timeout)
        )
        out = []
        for lease in _field(listed, "items", "items") or []:
            metadata = _field(lease, "metadata", "metadata")
            spec = _field(lease, "spec", "spec")
            identity = _field(spec, "holder_identity", "holderIdentity") or ""
            annotations = _field(metadata, "annotations", "annotations") or {}
            problem = None
            try:
                buckets = parse_buckets(annotations.get(BUCKETS_ANNOTATION, ""))
            except ValueError as err:
                problem = str(err)  # said by the ring, once (N25)
                buckets = frozenset()
            out.append(
                Member(
                    name=_field(metadata, "name", "name") or "",
                    identity=identity,
                    buckets=buckets,
                    lease_duration_seconds=int(
                        _field(spec, "lease_duration_seconds", "leaseDurationSeconds") or 0
                    ),
                    resource_version=_resource_version(lease) or "",
                    problem=problem,
                )
            )
        return out

    def delete_abandoned(self, name: str, resource_version: str, timeout: float | None) -> bool:
        """Delete another member's Lease if it is still at `resource_version` (a precondition:
        a replica that came back and renewed it keeps it). True if deleted."""
        if name == self.name:
            return False
        try:
            self._api.delete_namespaced_lease(
                name,
                self.namespace,
                body={"preconditions": {"resourceVersion": resource_version}},
                **_kwargs(timeout),
            )
        except ApiException as err:
            if err.status in (404, 409):
                return False
            raise
        return True

    def delete(self, timeout: float | None) -> None:
        """Delete this replica's Lease (leaving the ring); absent already is fine."""
        try:
            self._api.delete_namespaced_lease(self.name, self.namespace, **_kwargs(timeout))
        except ApiException as err:
            if err.status != 404:
                raise
        self._resource_version = None


def _resource_version(lease: Any) -> str | None:
    metadata = _field(lease, "metadata", "metadata")
    return cast("str | None", _field(metadata, "resource_version", "resourceVersion"))


class MemberView:
    """Which listed members are live, judged by when each Lease was last seen to change."""

    def __init__(self) -> None:
        # name -> (resourceVersion, when first seen at it, its lease duration)
        self._seen: dict[str, tuple[str, float, int]] = {}

    def observe(self, members: Iterable[Member], now: float) -> dict[str, Member]:
        """The live members by identity: each listed Lease with a holder whose record changed
        less than its duration ago (a Lease seen for the first time counts as just changed)."""
        live: dict[str, Member] = {}
        names = set()
        for m in members:
            names.add(m.name)
            seen = self._seen.get(m.name)
            if seen is None or seen[0] != m.resource_version:
                seen = (m.resource_version, now, m.lease_duration_seconds)
                self._seen[m.name] = seen
            if m.identity and lease_valid(seen[1], m.lease_duration_seconds, now):
                live[m.identity] = m
        for gone in set(self._seen) - names:
            del self._seen[gone]
        return live

    def abandoned(self, now: float, factor: float = ABANDONED_AFTER) -> dict[str, str]:
        """Leases unchanged for `factor` times their duration (at least a minute): left
        behind by replicas that died (a Deployment's pods get new names). Name ->
        resourceVersion, to delete them only if still unchanged."""
        return {
            name: rv
            for name, (rv, when, duration) in self._seen.items()
            if now - when > max(60.0, factor * max(duration, 1))
        }

    def forget(self) -> None:
        self._seen.clear()


def claims_of(live: Mapping[str, Member], other_than: str) -> frozenset[int]:
    """The buckets some live member other than `other_than` says it holds."""
    out: set[int] = set()
    for identity, m in live.items():
        if identity != other_than:
            out |= m.buckets
    return frozenset(out)
