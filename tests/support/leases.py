"""An in-memory coordination.k8s.io/v1 Lease API for ring and election tests: one store with
resourceVersion conflicts, read, list by label and by name, a count of each client's calls,
and per-client failure."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from kubernetes.client import ApiClient, V1Lease, V1LeaseList
from kubernetes.client.exceptions import ApiException

# V1Lease.from_dict exists only from kubernetes 37: the client's own deserializer, as
# CoordinationV1Api builds what it returns.
_CLIENT = ApiClient()


def _model(body: dict[str, Any], kind: str) -> Any:
    return _CLIENT._ApiClient__deserialize(body, kind)  # type: ignore[attr-defined]


class LeaseStore:
    """The server side."""

    def __init__(self) -> None:
        self.leases: dict[tuple[str, str], dict[str, Any]] = {}
        self.rv = 0
        self.lock = threading.Lock()
        # Every spec written, in order: a release is seen even when another candidate takes
        # the lease before the test looks.
        self.written: list[dict[str, Any]] = []

    def put(self, body: dict[str, Any]) -> V1Lease:
        self.rv += 1
        body = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.rv)}}
        self.leases[(body["metadata"]["namespace"], body["metadata"]["name"])] = body
        self.written.append(dict(body.get("spec") or {}))
        model: V1Lease = _model(body, "V1Lease")
        return model

    def first_written_after(self, holder: str) -> dict[str, Any] | None:
        """The first spec written after `holder`'s last one: its release, or the next holder's
        takeover, whichever came first."""
        with self.lock:
            last = max(
                (i for i, spec in enumerate(self.written) if spec.get("holderIdentity") == holder),
                default=None,
            )
            if last is None or last + 1 >= len(self.written):
                return None
            return self.written[last + 1]

    def spec(self, namespace: str, name: str) -> dict[str, Any]:
        """A copy of one Lease's spec as stored."""
        with self.lock:
            return dict(self.leases[(namespace, name)]["spec"])


class FakeLeaseApi:
    """The Lease calls of CoordinationV1Api for one client; `fail` cuts it off (503);
    `calls` counts them by verb."""

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.fail = False
        self.calls: Counter[str] = Counter()

    def _check(self, call: str) -> None:
        self.calls[call] += 1
        if self.fail:
            raise ApiException(status=503, reason="Service Unavailable")

    def read_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> V1Lease:
        self._check("read")
        with self.store.lock:
            body = self.store.leases.get((namespace, name))
            if body is None:
                raise ApiException(status=404, reason="Not Found")
            model: V1Lease = _model(body, "V1Lease")
            return model

    def list_namespaced_lease(self, namespace: str, **kwargs: Any) -> V1LeaseList:
        self._check("list")
        label = kwargs.get("label_selector")
        name = kwargs.get("field_selector", "").removeprefix("metadata.name=")
        with self.store.lock:
            items = []
            for (ns, n), body in sorted(self.store.leases.items()):
                labels = body["metadata"].get("labels") or {}
                if ns != namespace or (name and n != name):
                    continue
                if label:
                    key, _, value = label.partition("=")
                    if labels.get(key) != value:
                        continue
                items.append(body)
            listed: V1LeaseList = _model(
                {"metadata": {"resourceVersion": str(self.store.rv)}, "items": items},
                "V1LeaseList",
            )
            return listed

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> V1Lease:
        self._check("create")
        with self.store.lock:
            if (namespace, body["metadata"]["name"]) in self.store.leases:
                raise ApiException(status=409, reason="AlreadyExists")
            return self.store.put(body)

    def replace_namespaced_lease(
        self, name: str, namespace: str, body: Any, **kwargs: Any
    ) -> V1Lease:
        self._check("replace")
        with self.store.lock:
            current = self.store.leases.get((namespace, name))
            if current is None:
                raise ApiException(status=404, reason="Not Found")
            if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise ApiException(status=409, reason="Conflict")
            return self.store.put(body)

    def delete_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> Any:
        self._check("delete")
        precondition = (kwargs.get("body") or {}).get("preconditions", {}).get("resourceVersion")
        with self.store.lock:
            current = self.store.leases.get((namespace, name))
            if current is None:
                raise ApiException(status=404, reason="Not Found")
            if precondition and precondition != current["metadata"]["resourceVersion"]:
                raise ApiException(status=409, reason="Conflict")
            del self.store.leases[(namespace, name)]
        return None
