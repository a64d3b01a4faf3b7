"""Errors of LocalApiServer as the real API server words them: `ApiError` (HTTP code + Status
body + headers) and builders for the Statuses clients branch on (NotFound, Conflict,
AlreadyExists, Invalid with causes)."""

from __future__ import annotations

import json
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
        self.warnings: list[str] = []  # Warning header values (a write's unknown fields)


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


# --- Go's encoding/json wording, which kube-apiserver passes on for undecodable input ------------

_LITERALS = {"n": "null", "t": "true", "f": "false"}


def go_quote_char(ch: str) -> str:
    """A character as Go's %q quotes a rune ('x', '\\n', '\\'')."""
    special = {"'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
    if ch in special:
        return f"'{special[ch]}'"
    if ch.isprintable():
        return f"'{ch}'"
    return f"'\\x{ord(ch):02x}'" if ord(ch) < 0x100 else f"'\\u{ord(ch):04x}'"


def go_json_error(text: str) -> str | None:
    """Go's json.Unmarshal error for `text` (None when it is valid JSON): the common cases
    (bad value, bad object key, missing `:` or `,`, data after the value, cut-off input)."""
    try:
        json.loads(text)
        return None
    except json.JSONDecodeError as err:
        pos, why = err.pos, err.msg
    if pos >= len(text) or not text[pos:].strip():
        return "unexpected end of JSON input"
    ch = text[pos]
    if why == "Expecting value" and ch in _LITERALS:
        literal = _LITERALS[ch]
        for i, expected in enumerate(literal):
            if pos + i >= len(text):
                return "unexpected end of JSON input"
            if text[pos + i] != expected:
                got = go_quote_char(text[pos + i])
                return f"invalid character {got} in literal {literal} (expecting '{expected}')"
    where = {
        "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
        "Expecting ':' delimiter": "after object key",
        "Extra data": "after top-level value",
        "Invalid control character at": "in string literal",
    }.get(why)
    if why == "Expecting ',' delimiter":
        opened = max(text.rfind("{", 0, pos), text.rfind("[", 0, pos))
        inside_object = opened >= 0 and text[opened] == "{"
        where = "after object key:value pair" if inside_object else "after array element"
    return f"invalid character {go_quote_char(ch)} {where or 'looking for beginning of value'}"


def undecodable_body(raw: bytes, kind: str) -> ApiError:
    """400 for a create/update body that is not JSON, worded as kube-apiserver's decoder does
    (a body starting with `{` is quoted, up to 30 characters; anything else in hex)."""
    text = raw.decode("utf-8", "replace")
    why = go_json_error(text) or (
        "json: cannot unmarshal "
        f"{_go_json_type(json.loads(text))} into Go value of type struct "
        '{ APIVersion string "json:\\"apiVersion,omitempty\\""; '
        'Kind string "json:\\"kind,omitempty\\"" }'
    )
    if not raw:
        shown = "<empty>"
    elif text.startswith("{"):
        shown = text if len(text) <= 30 else text[:30] + " ..."
    else:
        shown = raw[:30].hex() + (" ..." if len(raw) > 30 else "")
    return api_error(
        400,
        "BadRequest",
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: {why} ({shown})",
    )


def _go_json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "object"
