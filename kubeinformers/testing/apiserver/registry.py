"""LocalApiServer's served resources: which group/version/resources exist and what is known
about each (namespaced, custom, schema, status subresource, selectable fields).

Its own module because every layer needs it (request semantics, rendering, writes, HTTP
routing, the public server) and it depends on none of them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.testing.apiserver import objects as objs
from kubeinformers.testing.apiserver.errors import ObjDict
from kubeinformers.testing.apiserver.selectors import EXTRA_FIELD_LABELS
from kubeinformers.testing.apiserver.store import SKey


@dataclass(frozen=True)
class Served:
    """A resource version the server serves, with what the registry knows about it."""

    api: APIResource
    custom: bool = False
    schema: ObjDict | None = None
    status_subresource: bool = False
    field_labels: frozenset[str] = frozenset()

    @property
    def skey(self) -> SKey:
        return (self.api.group, self.api.resource)


class Registry:
    """Which group/version/resources exist; CRDs add and remove entries at run time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_gvr: dict[tuple[str, str, str], Served] = {}

    def add(self, served: Served) -> None:
        with self._lock:
            self._by_gvr[(served.api.group, served.api.version, served.api.resource)] = served

    def remove(self, group: str, resource: str) -> None:
        with self._lock:
            for k in [k for k in self._by_gvr if (k[0], k[2]) == (group, resource)]:
                del self._by_gvr[k]

    def lookup(self, group: str, version: str, resource: str) -> Served | None:
        return self._by_gvr.get((group, version, resource))

    def group_versions(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for g, v, _ in sorted(self._by_gvr):
            if v not in out.setdefault(g, []):
                out[g].append(v)
        return out

    def is_builtin_group(self, group: str) -> bool:
        """Whether a built-in (not CRD-defined) resource is served in `group`."""
        return any(not s.custom and g == group for (g, _, _), s in list(self._by_gvr.items()))

    def in_group_version(self, group: str, version: str) -> list[Served]:
        return [s for (g, v, _), s in sorted(self._by_gvr.items()) if (g, v) == (group, version)]

    def served(self, skey: SKey) -> list[Served]:
        return [s for s in self._by_gvr.values() if s.skey == skey]


def builtin(res: APIResource) -> Served:
    key = (res.group, res.resource)
    return Served(
        res,
        status_subresource=key in objs.STATUS_SUBRESOURCE,
        field_labels=EXTRA_FIELD_LABELS.get(key, frozenset()),
    )


def served_from_crd(res: APIResource, version: ObjDict) -> Served:
    schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or None
    selectable = frozenset(
        f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or [] if "jsonPath" in f
    )
    return Served(
        res,
        custom=True,
        schema=schema,
        status_subresource="status" in (version.get("subresources") or {}),
        field_labels=selectable,
    )
