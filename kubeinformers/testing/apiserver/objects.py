"""What LocalApiServer does to objects: Status bodies, defaults, validation, patches, CRDs.

Only as much of each registry's behaviour as clients can observe in list/watch/CRUD: server
metadata (uid, creationTimestamp, generation, managedFields), a namespace's and a pod's
basics and the built-in kinds' defaults (`defaults`), name validation, a CRD's
structural-schema checks (type, required, enum, bounds), and the Status bodies of its
errors; patches and CRD schema checks live in `schema`.
"""

from __future__ import annotations

import copy
import datetime
import re
import secrets
import uuid
from typing import Any

from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.testing.apiserver import defaults, ownership
from kubeinformers.testing.apiserver.errors import api_error, conflict, invalid
from kubeinformers.testing.apiserver.merging import builtin_schema
from kubeinformers.testing.apiserver.schema import validate_schema
from kubeinformers.testing.apiserver.structural import (
    OBJECT_META_FIELDS,
    FieldValidation,
    prune_and_default,
)

ObjDict = dict[str, Any]

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
# Registries without metadata.generation (everything else with a spec gets one).
_NO_GENERATION = frozenset(
    {
        ("", "namespaces"),
        ("", "services"),
        ("", "nodes"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "serviceaccounts"),
        ("", "endpoints"),
    }
)
# Built-in registries whose main endpoint ignores .status (it has a /status subresource).
STATUS_SUBRESOURCE = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "nodes"),
        ("", "namespaces"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "replicationcontrollers"),
        ("", "resourcequotas"),
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("autoscaling", "horizontalpodautoscalers"),
        ("networking.k8s.io", "ingresses"),
        ("policy", "poddisruptionbudgets"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("certificates.k8s.io", "certificatesigningrequests"),
    }
)
# Registries whose DELETE answers with the object rather than a Success Status.
RETURNS_DELETED_OBJECT = frozenset({("", "pods"), ("", "namespaces")})

NAMESPACES = APIResource(
    "",
    "v1",
    "namespaces",
    "Namespace",
    False,
    "namespace",
    frozenset({"create", "delete", "get", "list", "patch", "update", "watch"}),
)
CRDS = APIResource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    False,
    "customresourcedefinition",
    frozenset({"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}),
)
CR_VERBS = frozenset(
    {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
)


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def order_object(obj: ObjDict, custom: bool) -> ObjDict:
    """Key order as the real encoders write it: sorted for CRs, Go struct order otherwise."""
    if custom:
        return _sorted(obj)  # type: ignore[no-any-return]
    meta = obj.get("metadata") or {}
    ordered_meta = {k: meta[k] for k in OBJECT_META_FIELDS if k in meta}
    ordered_meta.update((k, v) for k, v in meta.items() if k not in ordered_meta)
    out: ObjDict = {
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "metadata": ordered_meta,
    }
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def _sorted(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sorted(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted(x) for x in v]
    return v


def merged_lists(res: APIResource, schema: ObjDict | None) -> ObjDict | None:
    """What says how the lists of `res` merge: a custom resource's schema, or a built-in
    kind's keyed lists (`merging`); None when none is merged by key."""
    return schema if schema is not None else builtin_schema(res.group, res.version, res.kind)


def generate_suffix() -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(5))


def prepare_create(
    res: APIResource,
    obj: ObjDict,
    namespace: str | None,
    manager: str,
    custom: bool,
    schema: ObjDict | None,
    has_status: bool = False,
    validation: FieldValidation | None = None,
    operation: str = "Update",
) -> ObjDict:
    """Validate a new object and fill in what the server owns (not the resourceVersion);
    its manager owns its fields (`operation`: "Apply" when a server-side apply creates it:
    those it sets, not those the schema's defaults fill in)."""
    sent = obj
    if schema is not None:  # a custom resource: pruned and defaulted first, as the server's
        obj = prune_and_default(obj, schema, validation)
        if validation is not None:
            validation.check(res.kind, res.version)
    elif not custom:  # a built-in kind: the defaults its decoding fills in
        obj = defaults.with_written_defaults(res.group, res.resource, obj)
    if custom and has_status and "status" in obj:  # written only through `status`
        obj = {k: v for k, v in obj.items() if k != "status"}
    meta = dict(obj.get("metadata") or {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + generate_suffix()
    name = meta.get("name") or ""
    if res.namespaced:
        if meta.get("namespace") and namespace and meta["namespace"] != namespace:
            raise api_error(
                400,
                "BadRequest",
                "the namespace of the provided object does not "
                "match the namespace sent on the request",
            )
        meta["namespace"] = namespace or meta.get("namespace")
    else:
        meta.pop("namespace", None)
    causes: list[tuple[str, str, str]] = []
    if not name:
        causes.append(
            (
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            )
        )
    elif not _DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
        causes.append(
            ("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {_SUBDOMAIN_MSG}')
        )
    if (res.group, res.resource) == ("", "pods") and not (obj.get("spec") or {}).get("containers"):
        causes.append(("FieldValueRequired", "spec.containers", "Required value"))
    if schema is not None:
        causes.extend(validate_schema(obj, schema))
    if causes:
        raise invalid(res.kind, res.group, name, causes)
    for server_owned in (
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    ):
        meta.pop(server_owned, None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now_rfc3339()
    out = dict(obj, apiVersion=res.api_version, kind=res.kind, metadata=meta)
    if custom or ((res.group, res.resource) not in _NO_GENERATION and "spec" in out):
        meta["generation"] = 1
    if not custom:  # what its admission and create strategy add
        defaults.created_defaults(res.group, res.resource, out)
    owned = out if operation == "Update" else dict(sent, metadata=meta)
    meta["managedFields"] = ownership.created(
        owned,
        manager,
        operation,
        res.api_version,
        now_rfc3339(),
        has_status,
        merged_lists(res, schema),
    )
    if not meta["managedFields"]:
        del meta["managedFields"]
    return order_object(out, custom)


# Subresources written as the kind itself, of which the server takes only a part:
# (group, plural, subresource) -> whether that part is in the status.
PARTS: dict[tuple[str, str, str], bool] = {
    ("", "pods", "resize"): False,
    ("", "pods", "ephemeralcontainers"): False,
    ("", "namespaces", "finalize"): False,
    ("certificates.k8s.io", "certificatesigningrequests", "approval"): True,
}


def take_part(subresource: str, old: ObjDict, new: ObjDict) -> ObjDict:
    """What an update through `subresource` (a key of PARTS) writes: `old` with only that part
    taken from `new` (and `new`'s metadata, for its resourceVersion), as kube-apiserver's
    strategies for them keep the rest; their validations of the part are not made here."""
    out = copy.deepcopy(old)
    out["metadata"] = new.get("metadata") or {}
    spec = out.setdefault("spec", {})
    new_spec = new.get("spec") or {}
    if subresource == "resize":  # the containers' resources, by container name
        for key in ("containers", "initContainers"):
            sent = {c.get("name"): c for c in new_spec.get(key) or []}
            for container in spec.get(key) or []:
                if container.get("name") in sent:
                    resources = sent[container["name"]].get("resources")
                    if resources is None:
                        container.pop("resources", None)
                    else:
                        container["resources"] = resources
    elif subresource == "ephemeralcontainers":
        added = copy.deepcopy(new_spec.get("ephemeralContainers") or [])
        for container in added:
            container.setdefault("resources", {})  # a struct in Go: written as {}
        spec["ephemeralContainers"] = added
    elif subresource == "finalize":
        spec["finalizers"] = new_spec.get("finalizers") or []
    elif subresource == "approval":
        status = out.setdefault("status", {})
        status["conditions"] = (new.get("status") or {}).get("conditions") or []
    return out


_CSR = ("certificates.k8s.io", "certificatesigningrequests")


def stamp_conditions(api: APIResource, old: ObjDict, new: ObjDict) -> None:
    """A CertificateSigningRequest's conditions written through `approval` or `status` get
    their times as kube-apiserver's strategies give them (populateConditionTimestamps): a
    condition without `lastUpdateTime` is updated now; one without `lastTransitionTime` keeps
    that of the old condition of its type and status, or changes now. In place, on `new`."""
    if (api.group, api.resource) != _CSR:
        return
    conditions = (new.get("status") or {}).get("conditions")
    if not isinstance(conditions, list):
        return
    before = {
        (c.get("type"), c.get("status")): c.get("lastTransitionTime")
        for c in (old.get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    }
    now = now_rfc3339()
    for condition in conditions:
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            kept = before.get((condition.get("type"), condition.get("status")))
            condition["lastTransitionTime"] = kept or now


def prepare_update(
    res: APIResource,
    old: ObjDict,
    new: ObjDict,
    manager: str,
    custom: bool,
    status_only: bool,
    has_status: bool,
    schema: ObjDict | None,
    validation: FieldValidation | None = None,
    managed: list[ObjDict] | None = None,
    subresource: str = "",
) -> ObjDict | None:
    """The object to store for an update, or None when nothing changed (no write, no event).
    `managed`: its managedFields when the caller made them (an apply), else the update's
    (`ownership.updated`, by `manager` through `subresource`)."""
    if schema is not None:  # a custom resource: pruned and defaulted first, as the server's
        patched = new
        new = prune_and_default(new, schema, validation)
        if validation is not None:
            validation.check(res.kind, res.version, patched if validation.patch else None)
    elif not custom and not status_only:  # a built-in kind: the defaults its decoding fills in
        new = defaults.with_written_defaults(res.group, res.resource, new)
    meta_new = dict(new.get("metadata") or {})
    old_meta = old["metadata"]
    name = old_meta["name"]
    if meta_new.get("name") and meta_new["name"] != name:
        raise api_error(
            400,
            "BadRequest",
            f"the name of the object ({meta_new['name']}) does not "
            f"match the name on the URL ({name})",
        )
    rv = meta_new.get("resourceVersion")
    if rv and rv != old_meta["resourceVersion"]:
        raise conflict(res, name)
    if status_only:
        out = dict(old, status=new.get("status"))
        if "status" not in new:
            out.pop("status", None)
    else:
        meta = {
            k: old_meta[k]
            for k in (
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            )
            if k in old_meta
        }
        for k, v in meta_new.items():
            if k not in meta and k not in ("resourceVersion", "managedFields", "selfLink"):
                meta[k] = v
        if (res.group, res.resource) == ("", "namespaces"):  # kept by every update, as kube's
            meta["labels"] = dict(meta.get("labels") or {}, **{"kubernetes.io/metadata.name": name})
        out = dict(new, apiVersion=old["apiVersion"], kind=old["kind"], metadata=meta)
        if has_status:
            out.pop("status", None)
            if "status" in old:
                out["status"] = old["status"]
        if schema is not None:
            causes = validate_schema(out, schema)
            if causes:
                raise invalid(res.kind, res.group, name, causes)
        if "generation" in meta and {
            k: v for k, v in out.items() if k not in ("metadata", "status")
        } != {k: v for k, v in old.items() if k not in ("metadata", "status")}:
            meta["generation"] = meta["generation"] + 1
    if _same(old, out) and (managed is None or _same_owners(old_meta, managed)):
        return None  # an apply that changes no value but who owns one is a write
    if managed is None:
        managed = ownership.updated(
            old,
            out,
            manager,
            res.api_version,
            now_rfc3339(),
            subresource,
            has_status,
            merged_lists(res, schema),
        )
    out["metadata"] = dict(out["metadata"], managedFields=managed)
    if not managed:
        del out["metadata"]["managedFields"]
    return order_object(out, custom)


def _same_owners(old_meta: ObjDict, managed: list[ObjDict]) -> bool:
    def owners(entries: list[ObjDict]) -> list[ObjDict]:
        return [{k: v for k, v in e.items() if k != "time"} for e in entries]

    return owners(old_meta.get("managedFields") or []) == owners(managed)


def _same(a: ObjDict, b: ObjDict) -> bool:
    def strip(o: ObjDict) -> ObjDict:
        m = {
            k: v
            for k, v in o.get("metadata", {}).items()
            if k not in ("resourceVersion", "managedFields")
        }
        return dict(o, metadata=m)

    return strip(a) == strip(b)


def crd_resources(crd: ObjDict) -> list[tuple[APIResource, ObjDict]]:
    """The APIResources a CRD serves (one per served version) and each version's details."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        res = APIResource(
            spec.get("group", ""),
            ver["name"],
            names.get("plural", ""),
            names.get("kind", ""),
            spec.get("scope", "Namespaced") == "Namespaced",
            names.get("singular", ""),
            CR_VERBS,
        )
        out.append((res, ver))
    return out


def established_status(crd: ObjDict) -> ObjDict:
    """The CRD status the apiextensions controllers write once the names are accepted."""
    t = now_rfc3339()
    names = dict((crd.get("spec") or {}).get("names") or {})
    names.setdefault("singular", names.get("kind", "").lower())
    names.setdefault("listKind", names.get("kind", "") + "List")
    return dict(
        crd.get("status") or {},
        conditions=[
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": t,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": t,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
        acceptedNames=names,
    )
