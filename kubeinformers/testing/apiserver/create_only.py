"""LocalApiServer's creates of what it keeps no object of: reviews and bindings (rule M13),
evictions and token requests (M14).

kube-apiserver keeps none of them. A review is a question put to the server and comes back
with the answer in its `status`; a Binding sets its pod's `spec.nodeName` and is answered
with a Status Success; an Eviction deletes its pod unless the pod's PodDisruptionBudget
allows no disruption (then 429, decided from the budget's status as kube-apiserver's
eviction decides it; nothing here writes that status, as no disruption controller runs beside
a bare kube-apiserver); a TokenRequest returns a new bearer token of the service account,
which this server takes from then on (it does not expire).

The answers follow this server's own rules, the ones `Handler._authorize` enforces: the token
it was started with (or any request, when it has none) is the admin, `users=` tokens and
issued service-account tokens are users without permissions, no header is
`system:anonymous`; the admin may do what `forbid` does not refuse, anyone else nothing on
resources but ask about themselves (system:basic-user's self reviews). It keeps no RBAC rules
to list, so a SelfSubjectRulesReview says so (`incomplete`, as kube-apiserver does when an
authorizer cannot list its rules).
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from kubeinformers.testing.apiserver import write
from kubeinformers.testing.apiserver.dry_run import WriteTarget
from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.registry import Registry, Served
from kubeinformers.testing.apiserver.selectors import parse_label_selector
from kubeinformers.testing.apiserver.state import ADMIN_USER, RequestInfo, ServerState, denied

__all__ = ["answer", "anyone_may_ask", "is_create_only"]

_AUTHZ = "authorization.k8s.io"
_AUTHN = "authentication.k8s.io"


# What RBAC's system:basic-user role lets every signed-in user create: questions about
# themselves.
_SELF_REVIEWS = {
    (_AUTHZ, "selfsubjectaccessreviews"),
    (_AUTHZ, "selfsubjectrulesreviews"),
    (_AUTHN, "selfsubjectreviews"),
}


def anyone_may_ask(info: RequestInfo) -> bool:
    """Whether `info` is a create of a review every signed-in user may make."""
    return info.verb == "create" and (info.group, info.resource) in _SELF_REVIEWS


# Subresources created with a kind of their own: (group, plural, subresource).
_CREATED_UNDER = {
    ("", "pods", "binding"),
    ("", "pods", "eviction"),
    ("", "serviceaccounts", "token"),
}


def is_create_only(served: Served, info: RequestInfo) -> bool:
    """Whether the request creates what the server keeps no object of: a kind served for
    create only (a review, a binding), or a subresource created with a kind of its own (a
    pod's binding or eviction, a service account's token)."""
    if info.subresource:
        return (served.api.group, served.api.resource, info.subresource) in _CREATED_UNDER
    return not served.custom and served.api.verbs == frozenset({"create"})


def answer(
    state: ServerState,
    served: Served,
    info: RequestInfo,
    user: str,
    body: Any,
    manager: str,
    store: WriteTarget | None = None,
) -> tuple[int, ObjDict]:
    """The HTTP code and answer of such a create; `store`: where a binding or an eviction
    writes (a dry run's, M19; the server's store by default)."""
    target: WriteTarget = state.store if store is None else store
    if not isinstance(body, dict):
        raise api_error(400, "BadRequest", "the object to create must be a JSON object")
    namespace = info.namespace
    if info.subresource == "binding":  # pods/<name>/binding: the pod is named in the path
        body = {**body, "metadata": {**(body.get("metadata") or {}), "name": info.name}}
        return 201, _bind(target, state.registry, namespace, body, manager)
    if info.subresource == "eviction":
        return 201, _evict(target, state.registry, namespace, info.name)
    if info.subresource == "token":
        return 201, _token_request(state, namespace, info.name, body)
    group, resource = served.api.group, served.api.resource
    review = copy.deepcopy(body)
    review["apiVersion"] = served.api.api_version
    review["kind"] = served.api.kind
    review.setdefault("metadata", {})
    spec: dict[str, Any] = review.get("spec") or {}
    if (group, resource) == (_AUTHZ, "selfsubjectaccessreviews"):
        review["status"] = _access(state, user, spec, None)
    elif (group, resource) == (_AUTHZ, "subjectaccessreviews"):
        review["status"] = _access(state, _subject(spec), spec, None)
    elif (group, resource) == (_AUTHZ, "localsubjectaccessreviews"):
        review["metadata"]["namespace"] = namespace
        review["status"] = _access(state, _subject(spec), spec, namespace)
    elif (group, resource) == (_AUTHZ, "selfsubjectrulesreviews"):
        review["status"] = {
            "resourceRules": [],
            "nonResourceRules": [],
            "incomplete": True,
            "evaluationError": (
                "LocalApiServer keeps no RBAC rules to list: ask a SelfSubjectAccessReview, or "
                "test against RealApiServer"
            ),
        }
    elif (group, resource) == (_AUTHN, "tokenreviews"):
        review["status"] = _token(state, str(spec.get("token") or ""))
    elif (group, resource) == (_AUTHN, "selfsubjectreviews"):
        review["status"] = {"userInfo": _user_info(user)}
    elif (group, resource) == ("", "bindings"):
        return 201, _bind(state.store, state.registry, namespace, review, manager)
    else:
        raise api_error(
            405,
            "MethodNotAllowed",
            f"LocalApiServer does not answer a create of {served.api.gvr.group_resource()}: "
            "test it against RealApiServer",
            {},
        )
    return 201, review


def _subject(spec: Mapping[str, Any]) -> str:
    user = spec.get("user")
    if not user and not spec.get("groups"):
        raise api_error(
            422,
            "Invalid",
            'spec.user: Invalid value: "": at least one of user or group must be specified',
            {},
        )
    return str(user or "")


def _access(
    state: ServerState, user: str, spec: Mapping[str, Any], namespace: str | None
) -> ObjDict:
    """May `user` do what `spec` asks? As `Handler._authorize` would decide the request."""
    attributes = spec.get("resourceAttributes")
    if attributes is None:
        return {"allowed": user == ADMIN_USER}  # a non-resource path: the admin's only
    if namespace is not None:
        attributes = {**attributes, "namespace": namespace}
    request = RequestInfo(
        verb=str(attributes.get("verb") or ""),
        group=str(attributes.get("group") or ""),
        version=str(attributes.get("version") or ""),
        namespace=attributes.get("namespace") or None,
        resource=str(attributes.get("resource") or ""),
        name=str(attributes.get("name") or ""),
        subresource=str(attributes.get("subresource") or ""),
        is_resource=True,
    )
    if user == ADMIN_USER and not denied(state, request):
        return {"allowed": True}
    if user == ADMIN_USER:
        return {"allowed": False, "reason": "forbidden by LocalApiServer.forbid"}
    return {"allowed": False}


def _token(state: ServerState, token: str) -> ObjDict:
    if token and token == state.token:
        user: str | None = ADMIN_USER
    else:
        user = state.users.get(token) if token else None
    if user is None:
        return {"user": {}, "error": "invalid bearer token"}
    return {"authenticated": True, "user": _user_info(user)}


def _user_info(user: str) -> ObjDict:
    if user == "system:anonymous":
        return {"username": user, "groups": ["system:unauthenticated"]}
    groups = ["system:masters", "system:authenticated"] if user == ADMIN_USER else []
    return {"username": user, "groups": groups or ["system:authenticated"]}


def _bind(
    store: WriteTarget, registry: Registry, namespace: str | None, binding: ObjDict, manager: str
) -> ObjDict:
    """Set the pod's spec.nodeName to the binding's target, as the scheduler's bind does."""
    name = str(binding["metadata"].get("name") or "")
    target = binding.get("target") or {}
    node = str(target.get("name") or "")
    if not name or not node:
        raise api_error(
            422,
            "Invalid",
            f'Binding "{name}" is invalid: metadata.name and target.name are required',
            {},
        )
    pods = registry.lookup("", "v1", "pods")
    if pods is None:
        raise api_error(404, "NotFound", "the server could not find the requested resource", {})
    with store.lock:
        pod = write.get(store, pods, namespace, name)
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise api_error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already '
                f'assigned to node "{bound}"',
                {"name": name, "kind": "pods/binding"},
            )
        changed = copy.deepcopy(pod)
        changed.setdefault("spec", {})["nodeName"] = node
        write.update(store, registry, pods, namespace, name, changed, manager, False)
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }


_SUCCESS: ObjDict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector (matchLabels, matchExpressions) selects `labels`; a budget
    without a selector selects nothing."""
    if not selector:
        return False
    parts = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or []:
        key, op = expression.get("key", ""), expression.get("operator", "")
        values = ",".join(expression.get("values") or [])
        parts.append(
            {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key}.get(
                op, f"!{key}"
            )
        )
    if not parts:
        return True  # an empty selector selects every pod
    return parse_label_selector(",".join(parts))(labels)


def _evict(store: WriteTarget, registry: Registry, namespace: str | None, name: str) -> ObjDict:
    """Delete the pod unless its PodDisruptionBudget allows no disruption now (as
    kube-apiserver's eviction decides it from the budget's status)."""
    pods = registry.lookup("", "v1", "pods")
    budgets = registry.lookup("policy", "v1", "poddisruptionbudgets")
    if pods is None:
        raise api_error(404, "NotFound", "the server could not find the requested resource", {})
    with store.lock:
        pod = write.get(store, pods, namespace, name)
        phase = (pod.get("status") or {}).get("phase", "Pending")
        ignored = phase in ("Pending", "Succeeded", "Failed") or bool(
            pod["metadata"].get("deletionTimestamp")
        )
        labels = pod["metadata"].get("labels") or {}
        matching = []
        if budgets is not None and not ignored:
            _rv, in_namespace = store.current(budgets.skey, f"{namespace}/")
            matching = [
                b
                for _key, b in in_namespace
                if _selects((b.get("spec") or {}).get("selector"), labels)
            ]
        if len(matching) > 1:
            raise api_error(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                "does not support.",
                {},
            )
        if matching:
            _check_budget(matching[0])
        write.delete(store, registry, pods, namespace, name, {})
    return dict(_SUCCESS, code=201)


def _check_budget(budget: ObjDict) -> None:
    name = budget["metadata"]["name"]
    status = budget.get("status") or {}
    message = "Cannot evict pod as it would violate the pod's disruption budget."
    if status.get("observedGeneration", 0) < budget["metadata"].get("generation", 1):
        cause = f"The disruption budget {name} is still being processed by the server."
        raise api_error(
            429,
            "TooManyRequests",
            message,
            {"causes": [{"reason": "DisruptionBudget", "message": cause}], "retryAfterSeconds": 10},
        )
    if status.get("disruptionsAllowed", 0) <= 0:
        cause = (
            f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods "
            f"and has {status.get('currentHealthy', 0)} currently"
        )
        raise api_error(
            429,
            "TooManyRequests",
            message,
            {"causes": [{"reason": "DisruptionBudget", "message": cause}]},
        )


def _token_request(
    state: ServerState, namespace: str | None, name: str, body: Mapping[str, Any]
) -> ObjDict:
    """A new bearer token of service account `name`, which this server takes from now on."""
    accounts = state.registry.lookup("", "v1", "serviceaccounts")
    if accounts is None:
        raise api_error(404, "NotFound", "the server could not find the requested resource", {})
    write.get(state.store, accounts, namespace, name)  # NotFound as the server words it
    spec = dict(body.get("spec") or {})
    seconds = int(spec.get("expirationSeconds") or 3600)
    spec["expirationSeconds"] = seconds
    spec.setdefault("audiences", ["https://kubernetes.default.svc.cluster.local"])
    spec.setdefault("boundObjectRef", None)  # as kube-apiserver writes it back
    token = f"localapiserver-{secrets.token_urlsafe(24)}"
    state.users[token] = f"system:serviceaccount:{namespace}:{name}"
    expires = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=seconds)
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")},
    }
