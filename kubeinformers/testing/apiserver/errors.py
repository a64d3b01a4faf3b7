"""Errors of LocalApiServer as the real API server words them: `ApiError` (HTTP code + Status
body + headers) and builders for the Statuses clients branch on (NotFound, Conflict,
AlreadyExists, Invalid with causes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeinformers.runtime.api.resource import APIResource

ObjDict = dict[str, Any]


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
