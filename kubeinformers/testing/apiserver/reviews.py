"""LocalApiServer's kinds served for create only: reviews and bindings (rule M13).

kube-apiserver keeps none of them. A review is a question put to the server and comes back
with the answer in its `status`; a Binding sets its pod's `spec.nodeName` and is answered
with a Status Success. This server answers by its own rules, the ones `Handler._authorize`
enforces: the token it was started with (or any request, when it has none) is the admin,
`users=` tokens are those users, no header is `system:anonymous`; the admin may do what
`forbid` does not refuse, anyone else nothing on resources. It keeps no RBAC rules to list,
so a SelfSubjectRulesReview says so (`incomplete`, as kube-apiserver does when an authorizer
cannot list its rules).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubeinformers.testing.apiserver import write
from kubeinformers.testing.apiserver.errors import ObjDict, api_error
from kubeinformers.testing.apiserver.registry import Registry, Served
from kubeinformers.testing.apiserver.state import ADMIN_USER, RequestInfo, ServerState, denied
from kubeinformers.testing.apiserver.store import Store

__all__ = ["answer", "is_create_only"]

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


def is_create_only(served: Served, info: RequestInfo) -> bool:
    """Whether the request creates what the server keeps no object of: a kind served for
    create only (a review, a binding), or a pod's `binding` subresource."""
    if info.subresource:
        return (served.api.group, served.api.resource, info.subresource) == ("", "pods", "binding")
    return not served.custom and served.api.verbs == frozenset({"create"})


def answer(
    state: ServerState,
    served: Served,
    info: RequestInfo,
    user: str,
    body: Any,
    manager: str,
) -> tuple[int, ObjDict]:
    """The HTTP code and answer of such a create."""
    if not isinstance(body, dict):
        raise api_error(400, "BadRequest", "the object to create must be a JSON object")
    namespace = info.namespace
    if info.subresource == "binding":  # pods/<name>/binding: the pod is named in the path
        body = {**body, "metadata": {**(body.get("metadata") or {}), "name": info.name}}
        return 201, _bind(state.store, state.registry, namespace, body, manager)
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
    store: Store, registry: Registry, namespace: str | None, binding: ObjDict, manager: str
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
