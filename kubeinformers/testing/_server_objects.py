"""What LocalApiServer does to objects: Status bodies, defaults, validation, patches, CRDs.

Only as much of each registry's behaviour as clients can observe in list/watch/CRUD: server
metadata (uid, creationTimestamp, generation, managedFields), a namespace's and a pod's
defaults, name validation, a CRD's structural-schema checks (type, required, enum, bounds),
merge-patch (RFC 7386, also used for strategic-merge-patch) and JSON-patch (RFC 6902).
"""

from __future__ import annotations

import copy
import datetime
import re
import secrets
import uuid
from collections.abc import Mapping
from typing import Any

from kubeinformers.runtime.resource import APIResource

ObjDict = dict[str, Any]

_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
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


class ApiError(Exception):
    """An API error: HTTP code + a Status body (+ extra headers such as Retry-After)."""

    def __init__(self, code: int, body: ObjDict, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(body.get("message", ""))
        self.code = code
        self.body = body
        self.headers = dict(headers or {})


def status_body(
    code: int,
    reason: str,
    message: str,
    details: ObjDict | None = None,
    *,
    metadata: ObjDict | None = None,
) -> ObjDict:
    body: ObjDict = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": metadata or {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def api_error(code: int, reason: str, message: str, details: ObjDict | None = None) -> ApiError:
    return ApiError(code, status_body(code, reason, message, details))


def not_found(res: APIResource, name: str) -> ApiError:
    return api_error(
        404,
        "NotFound",
        f'{_gr(res)} "{name}" not found',
        {"name": name, "group": res.group, "kind": res.resource}
        if res.group
        else {"name": name, "kind": res.resource},
    )


def _gr(res: APIResource) -> str:
    return res.gvr.group_resource()


def conflict(res: APIResource, name: str) -> ApiError:
    return api_error(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_gr(res)} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        _details(res, name),
    )


def _details(res: APIResource, name: str) -> ObjDict:
    d: ObjDict = {"name": name}
    if res.group:
        d["group"] = res.group
    d["kind"] = res.resource
    return d


def already_exists(res: APIResource, name: str) -> ApiError:
    return api_error(
        409, "AlreadyExists", f'{_gr(res)} "{name}" already exists', _details(res, name)
    )


def invalid(
    kind: str,
    group: str,
    name: str,
    causes: list[tuple[str, str, str]],
    *,
    details_name: bool = True,
) -> ApiError:
    """422 Invalid; causes are (reason, field, message-without-field)."""
    errs = [f"{f}: {m}" for _, f, m in causes]
    joined = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    qual = f"{kind}.{group}" if group else kind
    details: ObjDict = {"name": name} if details_name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{"reason": r, "message": m, "field": f} for r, f, m in causes]
    return api_error(422, "Invalid", f'{qual} "{name}" is invalid: {joined}', details)


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def order_object(obj: ObjDict, custom: bool) -> ObjDict:
    """Key order as the real encoders write it: sorted for CRs, Go struct order otherwise."""
    if custom:
        return _sorted(obj)  # type: ignore[no-any-return]
    meta = obj.get("metadata") or {}
    ordered_meta = {k: meta[k] for k in _META_ORDER if k in meta}
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


def _fields_v1(v: Any) -> Any:
    if isinstance(v, dict):
        return {f"f:{k}": _fields_v1(x) for k, x in v.items()}
    return {}


def managed_fields(obj: ObjDict, manager: str, operation: str = "Update") -> list[ObjDict]:
    tracked = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion", "status")}
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k in ("labels", "annotations", "finalizers", "ownerReferences")
    }
    tracked["metadata"] = meta
    if not meta:
        del tracked["metadata"]
    return [
        {
            "manager": manager,
            "operation": operation,
            "apiVersion": obj.get("apiVersion"),
            "time": now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": _fields_v1(tracked),
        }
    ]


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
) -> ObjDict:
    """Validate a new object and fill in what the server owns (not the resourceVersion)."""
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
    _kind_defaults(res, out)
    meta["managedFields"] = managed_fields(out, manager)
    return order_object(out, custom)


def _kind_defaults(res: APIResource, obj: ObjDict) -> None:
    meta = obj["metadata"]
    if (res.group, res.resource) == ("", "namespaces"):
        meta["labels"] = dict(
            meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]}
        )
        obj["spec"] = dict(obj.get("spec") or {}, finalizers=["kubernetes"])
        obj["status"] = {"phase": "Active"}
    elif (res.group, res.resource) == ("", "pods"):
        obj["status"] = dict(
            obj.get("status") or {}, phase=(obj.get("status") or {}).get("phase", "Pending")
        )
    elif (res.group, res.resource) == ("apiextensions.k8s.io", "customresourcedefinitions"):
        spec = obj.get("spec") or {}
        obj["status"] = {
            "conditions": None,
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")],
        }


def prepare_update(
    res: APIResource,
    old: ObjDict,
    new: ObjDict,
    manager: str,
    custom: bool,
    status_only: bool,
    has_status: bool,
    schema: ObjDict | None,
) -> ObjDict | None:
    """The object to store for an update, or None when nothing changed (no write, no event)."""
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
    if _same(old, out):
        return None
    out["metadata"] = dict(
        out["metadata"], managedFields=old_meta.get("managedFields") or managed_fields(out, manager)
    )
    if out["metadata"]["managedFields"] is None:
        del out["metadata"]["managedFields"]
    return order_object(out, custom)


def _same(a: ObjDict, b: ObjDict) -> bool:
    def strip(o: ObjDict) -> ObjDict:
        m = {
            k: v
            for k, v in o.get("metadata", {}).items()
            if k not in ("resourceVersion", "managedFields")
        }
        return dict(o, metadata=m)

    return strip(a) == strip(b)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(target: Any, ops: list[Any]) -> Any:
    """RFC 6902 JSON patch: add, remove, replace, test, copy, move."""
    doc = copy.deepcopy(target)
    for op in ops:
        kind, path = op.get("op"), op.get("path", "")
        if kind == "test":
            if _pointer_get(doc, path) != op.get("value"):
                raise api_error(
                    422,
                    "Invalid",
                    f"the server rejected our request due to an error "
                    f"in our request: testing value {path} failed",
                )
            continue
        if kind in ("copy", "move"):
            value = copy.deepcopy(_pointer_get(doc, op.get("from", "")))
            if kind == "move":
                doc = _pointer_set(doc, op["from"], None, remove=True)
            doc = _pointer_set(doc, path, value, insert=True)
        elif kind in ("add", "replace"):
            doc = _pointer_set(doc, path, copy.deepcopy(op.get("value")), insert=kind == "add")
        elif kind == "remove":
            doc = _pointer_set(doc, path, None, remove=True)
        else:
            raise api_error(422, "Invalid", f"Unexpected kind: {kind}")
    return doc


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]] if path else []


def _pointer_get(doc: Any, path: str) -> Any:
    cur = doc
    try:
        for p in _parts(path):
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    except (KeyError, IndexError, ValueError, TypeError):
        raise api_error(
            422, "Invalid", f"the server rejected our request: path {path} does not exist"
        ) from None
    return cur


def _pointer_set(
    doc: Any, path: str, value: Any, *, insert: bool = False, remove: bool = False
) -> Any:
    parts = _parts(path)
    if not parts:
        return value
    parent = (
        _pointer_get(
            doc, "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1])
        )
        if len(parts) > 1
        else doc
    )
    last = parts[-1]
    try:
        if isinstance(parent, list):
            idx = len(parent) if last == "-" else int(last)
            if remove:
                del parent[idx]
            elif insert:
                parent.insert(idx, value)
            else:
                parent[idx] = value
        elif remove:
            del parent[last]
        else:
            if not insert and last not in parent:
                raise KeyError(last)
            parent[last] = value
    except (KeyError, IndexError, ValueError, TypeError):
        raise api_error(
            422, "Invalid", f"the server rejected our request: path {path} does not exist"
        ) from None
    return doc


# --- structural schema validation (CRDs) ----------------------------------------------------

_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _type_ok(value: Any, typ: str) -> bool:
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    py = _JSON_TYPES.get(typ)
    return py is None or isinstance(value, py)


def validate_schema(obj: ObjDict, schema: ObjDict) -> list[tuple[str, str, str]]:
    """A subset of OpenAPI v3 validation as apiextensions words it (root metadata skipped)."""
    causes: list[tuple[str, str, str]] = []
    props = schema.get("properties") or {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata") or key not in props:
            continue
        _validate(value, props[key], key, causes)
    for req in schema.get("required") or []:
        if req not in obj:
            causes.append(("FieldValueRequired", req, "Required value"))
    return causes


def _validate(value: Any, s: ObjDict, path: str, causes: list[tuple[str, str, str]]) -> None:
    if value is None and s.get("nullable"):
        return
    typ = s.get("type")
    shown = f'"{value}"' if isinstance(value, str) else _go(value)
    if typ and not _type_ok(value, typ):
        causes.append(
            (
                "FieldValueTypeInvalid",
                path,
                f'Invalid value: "{_go_type(value)}": {path} in body must be of type {typ}: "{_go_type(value)}"',
            )
        )
        return
    if "enum" in s and value not in s["enum"]:
        allowed = ", ".join(f'"{v}"' if isinstance(v, str) else _go(v) for v in s["enum"])
        causes.append(
            (
                "FieldValueNotSupported",
                path,
                f"Unsupported value: {shown}: supported values: {allowed}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        for key, words in (("minimum", "greater than"), ("maximum", "less than")):
            if key in s and (value < s[key] if key == "minimum" else value > s[key]):
                causes.append(
                    (
                        "FieldValueInvalid",
                        path,
                        f"Invalid value: {shown}: {path} in body should be {words} or equal to "
                        f"{_go(s[key])}",
                    )
                )
    if isinstance(value, str):
        if "maxLength" in s and len(value) > s["maxLength"]:
            causes.append(
                (
                    "FieldValueTooLong",
                    path,
                    f"Too long: may not be more than {s['maxLength']} bytes",
                )
            )
        if "minLength" in s and len(value) < s["minLength"]:
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    f"Invalid value: {shown}: {path} in body "
                    f"should be at least {s['minLength']} chars long",
                )
            )
        if "pattern" in s and not re.search(s["pattern"], value):
            causes.append(
                (
                    "FieldValueInvalid",
                    path,
                    f"Invalid value: {shown}: {path} in body should match '{s['pattern']}'",
                )
            )
    if isinstance(value, dict):
        props = s.get("properties") or {}
        for req in s.get("required") or []:
            if req not in value:
                causes.append(("FieldValueRequired", f"{path}.{req}", "Required value"))
        extra = s.get("additionalProperties")
        for k, v in value.items():
            if k in props:
                _validate(v, props[k], f"{path}.{k}", causes)
            elif isinstance(extra, dict):
                _validate(v, extra, f"{path}.{k}", causes)
    if isinstance(value, list) and isinstance(s.get("items"), dict):
        for i, v in enumerate(value):
            _validate(v, s["items"], f"{path}[{i}]", causes)


def _go(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _go_type(v: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(v), "null")


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
