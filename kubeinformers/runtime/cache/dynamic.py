"""Dynamic (plain dict) and metadata-only informers for any resource (rules J1-J3).

client-go counterparts: dynamic/dynamicinformer (objects are `unstructured.Unstructured`; here
plain dicts, as the API sent them) and metadata/metadatainformer (objects are
`PartialObjectMetadata`: apiVersion, kind and metadata only, fetched with the
`as=PartialObjectMetadataList` Accept header so the server never sends specs and statuses).

Both factories are keyed by GroupVersionResource and share the lifecycle of
`SharedInformerFactory` (start, wait_for_cache_sync, shutdown, context manager). A resource is
given as an `APIResource`, or as a `GroupVersionResource` that is then looked up through the
server's discovery (`/api/v1`, `/apis/<group>/<version>`) to learn its kind and scope.

The runtime knows no kind, so `PartialObjectMetadata` is generic over its metadata model:
`PartialObjectMetadata[ObjectMeta]` with the generated `kubeinformers.generated.meta.v1.ObjectMeta`
gives typed access (`obj.metadata.labels`); without one, metadata is a plain dict in the API's
camelCase.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload
from urllib.parse import quote

from pydantic import ConfigDict, Field

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.api.model import KubeModel
from kubeinformers.runtime.api.resource import APIResource, GroupVersionResource
from kubeinformers.runtime.api.shard import Shard
from kubeinformers.runtime.cache.factory import (
    GenericInformer,
    SharedInformerFactory,
    TransformFunc,
    TweakListOptionsFunc,
)
from kubeinformers.runtime.cache.informer import QueueKind, SharedIndexInformer
from kubeinformers.runtime.cache.store import NAMESPACE_INDEX, meta_namespace_index_func

if TYPE_CHECKING:
    from kubeinformers.runtime.client.api_client import ApiClient

__all__ = [
    "METADATA_LIST_ACCEPT",
    "METADATA_WATCH_ACCEPT",
    "DiscoveryError",
    "DynamicSharedInformerFactory",
    "MetadataSharedInformerFactory",
    "PartialObjectMetadata",
    "discover_resource",
]

M = TypeVar("M")

# Asked by client-go's metadata client (metadata/metadata.go): a list answers
# PartialObjectMetadataList, each watch event carries a PartialObjectMetadata.
METADATA_LIST_ACCEPT = (
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)
METADATA_WATCH_ACCEPT = (
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)

DynamicObject = dict[str, Any]


class PartialObjectMetadata(KubeModel, Generic[M]):
    """meta/v1 PartialObjectMetadata: an object reduced to its type and metadata.

    `M` is the metadata model: the generated ObjectMeta for typed access, or `dict[str, Any]`.
    Unlike other models it drops unknown top-level fields: should a server ignore the
    `as=PartialObjectMetadata` request and send whole objects, the cache still holds only
    metadata.
    """

    model_config = ConfigDict(extra="ignore")

    api_version: str | None = Field(default=None, alias="apiVersion")
    kind: str | None = None
    metadata: M | None = None


class DiscoveryError(LookupError):
    """The server does not serve the resource asked for (or discovery failed)."""


# --- discovery ---------------------------------------------------------------------------


def _get_json(api_client: ApiClient, path: str) -> Any:
    """GET `path` with the client's credentials; ApiStatusError for a failure status."""
    import urllib3

    from kubeinformers.runtime.client.auth import apply_auth

    headers: dict[str, str] = dict(api_client.default_headers)
    headers["Accept"] = "application/json"
    apply_auth(api_client, headers, [], path)
    url = str(api_client.configuration.host).rstrip("/") + quote(path)
    try:
        resp = api_client.rest_client.pool_manager.request(
            "GET", url, headers=headers, timeout=urllib3.Timeout(connect=30.0, read=60.0)
        )
    except (urllib3.exceptions.HTTPError, OSError) as err:
        raise ConnectionError(f"discovery: cannot reach {url}: {err}") from err
    if resp.status >= 300:
        message = resp.data[:300].decode("utf-8", "replace").strip()
        try:
            body = json.loads(resp.data)
            message = body.get("message") or message
            reason = body.get("reason") or ""
        except (ValueError, AttributeError):
            reason = ""
        raise ApiStatusError(resp.status, reason, f"discovery GET {path}: {message}")
    return json.loads(resp.data)


def discover_resource(api_client: ApiClient, gvr: GroupVersionResource) -> APIResource:
    """The APIResource (kind, scope, verbs) of `gvr` from the server's discovery documents."""
    path = f"/apis/{gvr.group}/{gvr.version}" if gvr.group else f"/api/{gvr.version}"
    try:
        document = _get_json(api_client, path)
    except ApiStatusError as err:
        if err.code == 404:
            mistake = gvr.core_group_mistake()  # H6
            hint = f"; {mistake}" if mistake else ""
            raise DiscoveryError(
                f"the server does not serve {gvr.group_version} (GET {path} answered 404); "
                f"cannot watch {gvr.group_resource()}{hint}"
            ) from err
        raise
    for entry in document.get("resources") or ():
        if entry.get("name") == gvr.resource:
            return APIResource(
                group=gvr.group,
                version=gvr.version,
                resource=gvr.resource,
                kind=str(entry.get("kind") or ""),
                namespaced=bool(entry.get("namespaced")),
                singular=str(entry.get("singularName") or ""),
                verbs=frozenset(entry.get("verbs") or ()),
            )
    raise DiscoveryError(
        f"the server serves {gvr.group_version} but no resource {gvr.resource!r} in it; "
        "check the plural name (e.g. 'deployments', not 'Deployment')"
    )


class _ResourceResolver:
    """Caches discovery answers per GVR for one factory."""

    def __init__(self, api_client: ApiClient) -> None:
        self._api_client = api_client
        self._lock = threading.Lock()
        self._known: dict[GroupVersionResource, APIResource] = {}

    def resolve(self, resource: APIResource | GroupVersionResource) -> APIResource:
        if isinstance(resource, APIResource):
            with self._lock:
                self._known.setdefault(resource.gvr, resource)
            return resource
        with self._lock:
            known = self._known.get(resource)
        if known is not None:
            return known
        found = discover_resource(self._api_client, resource)
        if not found.supports_list_watch:
            raise DiscoveryError(
                f"{resource.group_resource()} does not support list and watch "
                f"(verbs: {', '.join(sorted(found.verbs)) or 'none'})"
            )
        with self._lock:
            return self._known.setdefault(resource, found)


# --- the factories ---------------------------------------------------------------------------


class DynamicSharedInformerFactory(SharedInformerFactory):
    """Informers of plain dicts for any resource (J1): `for_resource(gvr)` never needs models.

    Same GVR → same informer; indexers {"namespace": ...}; the lister is a generic lister whose
    not-found errors use the plural resource (`deployments.apps "x" not found`).
    """

    def __init__(
        self,
        api_client: ApiClient,
        resync_period: float = 0.0,
        *,
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        queue: QueueKind = "atomic",
        use_watch_list: bool | None = None,
        shard: Shard | None = None,
    ) -> None:
        super().__init__(
            api_client,
            resync_period,
            namespace=namespace,
            tweak_list_options=tweak_list_options,
            transform=transform,
            queue=queue,
            use_watch_list=use_watch_list,
            shard=shard,
        )
        self._resolver = _ResourceResolver(api_client)

    def resolve(self, resource: APIResource | GroupVersionResource) -> APIResource:
        """The APIResource of `resource` (looked up by discovery for a bare GVR)."""
        return self._resolver.resolve(resource)

    def for_resource(
        self, resource: APIResource | GroupVersionResource
    ) -> GenericInformer[DynamicObject]:
        api_resource = self.resolve(resource)
        informer = self.informer_for(
            api_resource.gvr, lambda resync: self._new_dynamic_informer(api_resource, resync)
        )
        return GenericInformer(informer, api_resource.gvr)

    def _new_dynamic_informer(
        self, resource: APIResource, resync_period: float
    ) -> SharedIndexInformer[DynamicObject]:
        from kubeinformers.runtime.client.transport import ApiListerWatcher

        lister_watcher: ApiListerWatcher[DynamicObject] = ApiListerWatcher(
            self.api_client,
            resource,
            dict,
            namespace=self.namespace if resource.namespaced and self.namespace else None,
            tweak_list_options=self.tweak_list_options,
        )
        return SharedIndexInformer(
            lister_watcher,
            dict,
            resync_period,
            {NAMESPACE_INDEX: meta_namespace_index_func},
            name=str(resource.gvr),
            queue=self.queue,
            use_watch_list=self.use_watch_list,
            shard=self.shard,
        )


class MetadataSharedInformerFactory(SharedInformerFactory, Generic[M]):
    """Metadata-only informers for any resource (J2): objects are `PartialObjectMetadata[M]`.

    The server sends only apiVersion, kind and metadata, so the cache holds a fraction of the
    full objects' memory. Pass `metadata_model=ObjectMeta` (the generated one) for typed
    metadata; by default metadata is a dict. `transform` (e.g. `strip_managed_fields`) is
    installed on each new informer.
    """

    @overload
    def __init__(
        self: MetadataSharedInformerFactory[dict[str, Any]],
        api_client: ApiClient,
        resync_period: float = 0.0,
        *,
        metadata_model: None = None,
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        queue: QueueKind = "atomic",
        use_watch_list: bool | None = None,
        shard: Shard | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: MetadataSharedInformerFactory[M],
        api_client: ApiClient,
        resync_period: float = 0.0,
        *,
        metadata_model: type[M],
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        queue: QueueKind = "atomic",
        use_watch_list: bool | None = None,
        shard: Shard | None = None,
    ) -> None: ...

    def __init__(
        self,
        api_client: ApiClient,
        resync_period: float = 0.0,
        *,
        metadata_model: type[Any] | None = None,
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        queue: QueueKind = "atomic",
        use_watch_list: bool | None = None,
        shard: Shard | None = None,
    ) -> None:
        super().__init__(
            api_client,
            resync_period,
            namespace=namespace,
            tweak_list_options=tweak_list_options,
            transform=transform,
            queue=queue,
            use_watch_list=use_watch_list,
            shard=shard,
        )
        self._resolver = _ResourceResolver(api_client)
        meta: Any = dict[str, Any] if metadata_model is None else metadata_model
        self._object_model: type[PartialObjectMetadata[M]] = PartialObjectMetadata[meta]

    @property
    def object_model(self) -> type[PartialObjectMetadata[M]]:
        """The class of the cached objects (`PartialObjectMetadata[<metadata model>]`)."""
        return self._object_model

    def resolve(self, resource: APIResource | GroupVersionResource) -> APIResource:
        return self._resolver.resolve(resource)

    def for_resource(
        self, resource: APIResource | GroupVersionResource
    ) -> GenericInformer[PartialObjectMetadata[M]]:
        api_resource = self.resolve(resource)
        informer = self.informer_for(
            api_resource.gvr, lambda resync: self._new_metadata_informer(api_resource, resync)
        )
        return GenericInformer(informer, api_resource.gvr)

    def _new_metadata_informer(
        self, resource: APIResource, resync_period: float
    ) -> SharedIndexInformer[PartialObjectMetadata[M]]:
        from kubeinformers.runtime.client.transport import ApiListerWatcher

        model = self._object_model
        lister_watcher: ApiListerWatcher[PartialObjectMetadata[M]] = ApiListerWatcher(
            self.api_client,
            resource,
            model,
            namespace=self.namespace if resource.namespaced and self.namespace else None,
            tweak_list_options=self.tweak_list_options,
            accept=METADATA_LIST_ACCEPT,
            watch_accept=METADATA_WATCH_ACCEPT,
        )
        return SharedIndexInformer(
            lister_watcher,
            model,
            resync_period,
            {NAMESPACE_INDEX: meta_namespace_index_func},
            name=f"{resource.gvr}(metadata)",
            queue=self.queue,
            use_watch_list=self.use_watch_list,
            shard=self.shard,
        )
