"""LocalApiServer's writes: create, update, patch, delete (with finalizers), CRD side effects.

Deletion follows what a cluster without kubelet/controllers shows clients: an object with
finalizers gets `deletionTimestamp` (MODIFIED) and goes away (DELETED) when an update removes
the last finalizer; a pod is deleted gracefully with period 0 (MODIFIED, then DELETED, as the
transcripts show for unscheduled pods); deleting a namespace deletes its content first;
creating a CRD serves its versions and marks it Established, deleting it removes its objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from kubeinformers.testing.apiserver import errors, ownership
from kubeinformers.testing.apiserver import objects as objs
from kubeinformers.testing.apiserver.dry_run import WriteTarget
from kubeinformers.testing.apiserver.errors import ApiError, ObjDict, api_error
from kubeinformers.testing.apiserver.merging import strategic_merge
from kubeinformers.testing.apiserver.registry import Registry, Served, served_from_crd
from kubeinformers.testing.apiserver.schema import json_patch, merge_patch
from kubeinformers.testing.apiserver.store import CLOSE_CLEAN
from kubeinformers.testing.apiserver.structural import FieldValidation, prune_and_default

_CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
_NS_KEY = ("", "namespaces")


APPLY_PATCH = "application/apply-patch+yaml"  # a server-side apply


def _key(ns: str | None, name: str) -> str:
    return f"{ns}/{name}" if ns else name


def _body_dict(body: Any, served: Served) -> ObjDict:
    if not isinstance(body, dict):
        raise api_error(
            400,
            "BadRequest",
            f"the body of the request was in an unknown format - "
            f"accepted media types include: application/json (for {served.api.kind})",
        )
    return body


def get(store: WriteTarget, served: Served, ns: str | None, name: str) -> ObjDict:
    obj = store.get(served.skey, _key(ns if served.api.namespaced else None, name))
    if obj is None:
        raise errors.not_found(served.api, name)
    return obj


def create(
    store: WriteTarget,
    registry: Registry,
    served: Served,
    ns: str | None,
    body: Any,
    manager: str,
    validation: FieldValidation | None = None,
    operation: str = "Update",
) -> ObjDict:
    """A create (`operation` "Apply": a server-side apply's, whose fields it owns)."""
    body = _body_dict(body, served)
    ns = ns if served.api.namespaced else None
    if served.api.namespaced and not ns:
        ns = ((body.get("metadata") or {}).get("namespace")) or None
        if not ns:
            raise api_error(400, "BadRequest", "the server could not find the requested resource")
    obj = objs.prepare_create(
        served.api,
        body,
        ns,
        manager,
        served.custom,
        served.schema,
        served.status_subresource,
        validation,
        operation,
    )
    with store.lock:
        if ns:
            namespace = store.get(_NS_KEY, ns)
            if namespace is None:
                raise api_error(
                    404,
                    "NotFound",
                    f'namespaces "{ns}" not found',
                    {"name": ns, "kind": "namespaces"},
                )
            if namespace["metadata"].get("deletionTimestamp"):
                raise api_error(
                    403,
                    "Forbidden",
                    f"unable to create new content in namespace {ns} "
                    "because it is being terminated",
                    {"name": obj["metadata"]["name"], "kind": served.api.resource},
                )
        if store.get(served.skey, _key(ns, obj["metadata"]["name"])) is not None:
            raise errors.already_exists(served.api, obj["metadata"]["name"])
        stored = store.write(served.skey, obj, "ADDED")
        if served.skey == _CRD_KEY and not store.dry:  # a dry run serves nothing new
            _register_crd(store, registry, stored)
    return stored


def _register_crd(store: WriteTarget, registry: Registry, crd: ObjDict) -> None:
    """Serve the CRD's versions and write the Established status, as the controllers do."""
    spec = crd.get("spec") or {}
    served_now = objs.crd_resources(crd)
    skey = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
    if not registry.served(skey):
        store.start_watch_cache(skey)
    registry.remove(*skey)
    for res, ver in served_now:
        registry.add(served_from_crd(res, ver))
    if not ((crd.get("status") or {}).get("conditions")):
        store.write(
            _CRD_KEY, objs.order_object(dict(crd, status=objs.established_status(crd)), False)
        )


def update(
    store: WriteTarget,
    registry: Registry,
    served: Served,
    ns: str | None,
    name: str,
    body: Any,
    manager: str,
    status_only: bool,
    part: str = "",
    validation: FieldValidation | None = None,
    apply: tuple[bool] | None = None,
) -> ObjDict:
    """An update (`part`: through a subresource of objs.PARTS, which takes only its part);
    with `apply` (its force), a server-side apply of `body` by `manager`."""
    body = _body_dict(body, served)
    ns = ns if served.api.namespaced else None
    meta = body.get("metadata") or {}
    if served.api.namespaced and meta.get("namespace") and meta["namespace"] != ns:
        raise api_error(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        )
    with store.lock:
        old = get(store, served, ns, name)
        if part:
            body = objs.take_part(part, old, body)
            status_only = objs.PARTS[(served.api.group, served.api.resource, part)]
        subresource = "status" if status_only and served.status_subresource else ""
        managed = None
        if apply is not None:  # the applied configuration made into the object (ownership)
            rv = (body.get("metadata") or {}).get("resourceVersion")
            body, managed = ownership.apply(
                old,
                body,
                manager,
                apply[0],
                served.api.api_version,
                objs.now_rfc3339(),
                subresource,
                served.status_subresource,
                objs.merged_lists(served.api, served.schema),
            )
            if rv and rv != old["metadata"]["resourceVersion"]:  # after its conflicts
                raise errors.conflict(served.api, name)  # a precondition, as in an update
        if status_only:
            objs.stamp_conditions(served.api, old, body)
        new = objs.prepare_update(
            served.api,
            old,
            body,
            manager,
            served.custom,
            status_only,
            served.status_subresource,
            served.schema,
            validation,
            managed,
            subresource,
        )
        if new is None:
            return old
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            return _remove(store, registry, served, new)
        stored = store.write(served.skey, new, "MODIFIED")
        if served.skey == _CRD_KEY and not store.dry:  # a dry run serves nothing new
            _register_crd(store, registry, stored)
        return stored


def patch(
    store: WriteTarget,
    registry: Registry,
    served: Served,
    ns: str | None,
    name: str,
    raw: bytes,
    content_type: str,
    manager: str,
    status_only: bool,
    part: str = "",
    validation: FieldValidation | None = None,
    force: bool = False,
) -> tuple[bool, ObjDict]:
    """A patch: whether it created the object (a server-side apply may), and the object."""
    kind = content_type.split(";")[0].strip()
    try:
        doc = (
            yaml.safe_load(raw or b"null") if kind.endswith("yaml") else json.loads(raw or b"null")
        )
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise api_error(400, "BadRequest", f"error decoding patch: {err}") from None
    if kind == APPLY_PATCH:
        if not isinstance(doc, dict):
            raise api_error(400, "BadRequest", "apply patch body must be a YAML or JSON object")
        if (doc.get("metadata") or {}).get("managedFields") is not None:  # an object read back
            raise api_error(400, "BadRequest", "metadata.managedFields must be nil")
        if served.schema is not None:  # a field its schema does not declare: the server's 500
            unknown = FieldValidation("Ignore")
            prune_and_default(doc, served.schema, unknown)
            if unknown.unknown:
                meta = doc.get("metadata") or {}
                where = f"{meta.get('namespace') or ''}/{meta.get('name') or name}"
                gvk = f"{served.api.group}/{served.api.version}, Kind={served.api.kind}"
                errors = [f".{path}: field not declared in schema" for path in unknown.unknown]
                said = errors[0] if len(errors) == 1 else "errors:\n  " + "\n  ".join(errors)
                raise api_error(
                    500, "", f"failed to create typed patch object ({where}; {gvk}): {said}"
                )
        key = _key(ns if served.api.namespaced else None, name)
        if store.get(served.skey, key) is None and not status_only and not part:
            doc.setdefault("metadata", {}).setdefault("name", name)
            return True, create(store, registry, served, ns, doc, manager, validation, "Apply")
        return False, update(
            store, registry, served, ns, name, doc, manager, status_only, part, validation, (force,)
        )
    with store.lock:
        old = get(store, served, ns if served.api.namespaced else None, name)
        if kind == "application/json-patch+json":
            if not isinstance(doc, list):
                raise api_error(
                    400,
                    "BadRequest",
                    "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
                )
            new = json_patch(old, doc)
        elif kind in (
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json",
        ):
            if not isinstance(doc, dict):
                raise api_error(400, "BadRequest", "patch body must be a JSON object")
            lists = objs.merged_lists(served.api, served.schema)
            if kind == "application/strategic-merge-patch+json" and lists is not None:
                new = strategic_merge(old, doc, lists)  # its keyed lists merged by key
            else:
                new = merge_patch(old, doc)
        else:
            raise api_error(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
        if validation is not None:
            validation.patch = True
        return False, update(
            store, registry, served, ns, name, new, manager, status_only, part, validation
        )


def _remove(store: WriteTarget, registry: Registry, served: Served, final: ObjDict) -> ObjDict:
    """Delete for good, the DELETED event carrying `final` (the update that ended it)."""
    key = _key(final["metadata"].get("namespace"), final["metadata"]["name"])
    gone = store.remove(served.skey, key, final=final)
    assert gone is not None
    if served.skey == _CRD_KEY and not store.dry:  # a dry run serves nothing new
        _drop_crd(store, registry, gone)
    return gone


def _drop_crd(store: WriteTarget, registry: Registry, crd: ObjDict) -> None:
    spec = crd.get("spec") or {}
    skey = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
    store.drop_resource(skey)
    store.close_watchers(CLOSE_CLEAN, skey)
    registry.remove(*skey)


def delete(
    store: WriteTarget,
    registry: Registry,
    served: Served,
    ns: str | None,
    name: str,
    options: Mapping[str, Any],
) -> tuple[int, ObjDict]:
    """(HTTP code, body): 200 and the object or a Success Status; 202 while finalizers wait."""
    ns = ns if served.api.namespaced else None
    with store.lock:
        old = get(store, served, ns, name)
        meta = old["metadata"]
        pre = options.get("preconditions") or {}
        for field, label, why in (
            ("uid", "UID", "deleted and then recreated"),
            ("resourceVersion", "ResourceVersion", "modified"),
        ):
            if pre.get(field) and pre[field] != meta.get(field):
                about: ObjDict = {"name": name}
                if served.api.group:
                    about["group"] = served.api.group
                about["kind"] = served.api.kind
                raise api_error(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {served.api.kind} "{name}": the {label} '
                    f"in the precondition ({pre[field]}) does not match the {label} in record "
                    f"({meta.get(field)}). The object might have been {why}",
                    about,
                )
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return 202, old
            return 202, store.write(served.skey, _terminating(old, served.custom), "MODIFIED")
        if served.skey == ("", "pods"):
            store.write(served.skey, _terminating(old, served.custom), "MODIFIED")
        elif served.skey == _NS_KEY:
            terminating = _terminating(old, served.custom)
            terminating["status"] = {"phase": "Terminating"}
            shown = store.write(served.skey, terminating, "MODIFIED")
            _empty_namespace(store, name)
            store.remove(served.skey, name)
            return 200, shown
        gone = store.remove(served.skey, _key(ns, name))
        assert gone is not None
        if served.skey == _CRD_KEY and not store.dry:  # a dry run serves nothing new
            _drop_crd(store, registry, gone)
    if served.custom or served.skey in objs.RETURNS_DELETED_OBJECT or served.skey == _CRD_KEY:
        return 200, gone
    details: ObjDict = {"name": name}
    if served.api.group:
        details["group"] = served.api.group
    details.update(kind=served.api.resource, uid=meta.get("uid"))
    return 200, {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _terminating(obj: ObjDict, custom: bool) -> ObjDict:
    meta = dict(obj["metadata"], deletionTimestamp=objs.now_rfc3339(), deletionGracePeriodSeconds=0)
    if "generation" in meta:
        meta["generation"] += 1
    return objs.order_object(dict(obj, metadata=meta), custom)


def _empty_namespace(store: WriteTarget, namespace: str) -> None:
    for skey, obj in store.all_items(store.resources()):
        if obj["metadata"].get("namespace") == namespace:
            store.remove(skey, f"{namespace}/{obj['metadata']['name']}")


def delete_collection(
    store: WriteTarget,
    registry: Registry,
    served: Served,
    ns: str | None,
    matches: Callable[[ObjDict], bool],
) -> list[ObjDict]:
    """Delete every matching object; returns them (as the real server's List answer does)."""
    prefix = f"{ns}/" if served.api.namespaced and ns else ""
    _, items = store.current(served.skey, prefix)
    out = []
    for _, obj in items:
        if matches(obj):
            meta = obj["metadata"]
            try:
                delete(store, registry, served, meta.get("namespace"), meta["name"], {})
            except ApiError:
                continue
            out.append(obj)
    return out
