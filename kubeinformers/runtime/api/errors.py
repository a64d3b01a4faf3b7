"""Errors that carry an API server's Status, so callers can tell 410 from 403 from 429, and
the classification the reflector and the transport act on (client-go: apimachinery
pkg/api/errors, and the reflector's retry decisions, D11/D14)."""

from __future__ import annotations

import json
from typing import Any

from kubeinformers.runtime.api.model import Status, StatusCause


class ApiStatusError(Exception):
    """The API server answered with a failure Status (or the transport made one up for it).

    `code` is the HTTP status, `reason` the Status reason (`Expired`, `Forbidden`, `NotFound`,
    `TooManyRequests`...), `retry_after` the server's Retry-After in seconds when it sent one.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message  # the client words it with the request and what to do
        self.server_message = message  # as the server's Status says it
        self.details = details or {}
        # Whether the Status had details at all (Go: `Status.Details != nil`; `details` is {}
        # either way when it had none to say): D8's message checks need them.
        self.has_details = details is not None
        self.retry_after = retry_after
        # Already reported by the layer that raised it (a 401 the credentials logged once per
        # episode): the reflector's default error handler then logs it at DEBUG only.
        self.reported = False

    @property
    def status(self) -> Status:
        """The server's Status (rebuilt from the error's fields, with the server's message)."""
        return Status.model_validate(
            {
                "status": "Failure",
                "code": self.code,
                "reason": self.reason,
                "message": self.server_message,
                "details": self.details if self.has_details else None,
            }
        )

    @property
    def causes(self) -> list[StatusCause]:
        """The Status's causes: for Invalid, one per rejected field (`field`, `message`)."""
        raw = self.details.get("causes") or []
        return [StatusCause.model_validate(c) for c in raw if isinstance(c, dict)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"


# Typed failures (apimachinery's errors.IsNotFound & co. as classes): each is an ApiStatusError,
# so code that catches ApiStatusError still sees them all.
class BadRequest(ApiStatusError):
    """400: the request itself is malformed (an unsupported patch, a bad field manager...)."""


class Unauthorized(ApiStatusError):
    """401: the credentials were not accepted."""


class Forbidden(ApiStatusError):
    """403: the credentials may not do this (RBAC), or a namespace is terminating."""


class NotFound(ApiStatusError):
    """404: the object (or the resource) does not exist."""


class MethodNotSupported(ApiStatusError):
    """405: the resource does not allow this verb."""


class Conflict(ApiStatusError):
    """409 Conflict: a stale resourceVersion on update, a failed precondition, or a server-side
    apply conflicting with another field manager (retry on a fresh read, or `force=True`)."""


class AlreadyExists(ApiStatusError):
    """409 AlreadyExists: create of a name that is taken."""


class Gone(ApiStatusError):
    """410: the resourceVersion asked for is compacted."""


class UnsupportedMediaType(ApiStatusError):
    """415: e.g. a strategic merge patch on a custom resource."""


class Invalid(ApiStatusError):
    """422: the object failed validation; `causes` names each rejected field."""


class TooManyRequests(ApiStatusError):
    """429: the server asks to slow down; `retry_after` is its Retry-After in seconds."""


class InternalError(ApiStatusError):
    """500: the server failed."""


class ServiceUnavailable(ApiStatusError):
    """503: the server (or an aggregated API) is not available."""


class ServerTimeout(ApiStatusError):
    """504, or reason Timeout/ServerTimeout: the server gave up; retrying may succeed."""


_BY_REASON: dict[str, type[ApiStatusError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotSupported,
    "Conflict": Conflict,
    "AlreadyExists": AlreadyExists,
    "Gone": Gone,
    "Expired": Gone,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailable,
    "Timeout": ServerTimeout,
    "ServerTimeout": ServerTimeout,
}
_BY_CODE: dict[int, type[ApiStatusError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotSupported,
    409: Conflict,
    410: Gone,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: ServerTimeout,
}


def error_class(code: int, reason: str) -> type[ApiStatusError]:
    """The typed error for a Status: by its reason, else by its HTTP code (as apimachinery's
    `ReasonForError` then `code` checks), else plain ApiStatusError."""
    return _BY_REASON.get(reason) or _BY_CODE.get(code) or ApiStatusError


def is_expired(err: BaseException) -> bool:
    """410 Gone / reason Expired or Gone: the resourceVersion asked for is compacted (D8, D13)."""
    return isinstance(err, ApiStatusError) and (
        err.code == 410 or err.reason in ("Expired", "Gone")
    )


def is_timeout(err: BaseException) -> bool:
    """Reason Timeout, or no reason and HTTP 504 (apimachinery `errors.IsTimeout`). Not
    ServerTimeout, which apimachinery tells apart (`IsServerTimeout`)."""
    if not isinstance(err, ApiStatusError):
        return False
    if not err.reason:
        return err.code == 504
    return err.reason == "Timeout"


# What kube-apiserver before 1.18.6 said instead of the ResourceVersionTooLarge cause type.
_TOO_LARGE_MESSAGE = "Too large resource version"


def is_too_large_resource_version(err: BaseException) -> bool:
    """A resourceVersion newer than the server has seen (D8), exactly as client-go's
    `isTooLargeResourceVersionError`: a cause of type ResourceVersionTooLarge; else, only for
    a Timeout (`is_timeout`) whose Status has details, a cause whose message is exactly "Too
    large resource version" (kube-apiserver 1.17.0-1.18.5) or a Status message containing it
    (before 1.17), case and all. Any other status (a 500 saying those words) is not."""
    if not isinstance(err, ApiStatusError) or not err.has_details:
        return False
    causes = [c for c in err.details.get("causes") or () if isinstance(c, dict)]
    if any(c.get("reason") == "ResourceVersionTooLarge" for c in causes):
        return True
    if not is_timeout(err):
        return False
    if any(c.get("message") == _TOO_LARGE_MESSAGE for c in causes):
        return True
    return _TOO_LARGE_MESSAGE in err.server_message


def is_too_many_requests(err: BaseException) -> bool:
    return isinstance(err, ApiStatusError) and err.code == 429


def error_from_status(status: Status, *, retry_after: float | None = None) -> ApiStatusError:
    """An ApiStatusError carrying a Status (the object of a watch ERROR event, or a failure body)."""
    details = (
        status.details.model_dump(by_alias=True, exclude_none=True)
        if status.details is not None
        else None
    )
    if retry_after is None and status.details is not None:
        seconds = status.details.retry_after_seconds
        retry_after = float(seconds) if seconds else None
    cls = error_class(status.code or 0, status.reason or "")
    return cls(
        status.code or 0,
        status.reason or "",
        status.message or "",
        details=details,
        retry_after=retry_after,
    )


def is_internal_error(err: BaseException) -> bool:
    return isinstance(err, ApiStatusError) and (err.code == 500 or err.reason == "InternalError")


def is_connection_refused(err: BaseException) -> bool:
    """Whether `err` (or anything it wraps) is a refused connection: the server is down (D11)."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError):
            return True
        reason = getattr(cur, "reason", None)  # urllib3 MaxRetryError / NewConnectionError
        if isinstance(reason, BaseException) and id(reason) not in seen:
            if is_connection_refused(reason):
                return True
        if "connection refused" in str(cur).lower() and not isinstance(cur, ApiStatusError):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def is_watch_error_retriable(err: BaseException) -> bool:
    """Connection refused or 429: back off and re-watch without relisting (D11)."""
    return is_connection_refused(err) or is_too_many_requests(err)


def client_error_status(err: BaseException) -> int | None:
    """The HTTP status of a kubernetes ApiException (None: not an answer of the server)."""
    status = getattr(err, "status", None)
    return status if isinstance(status, int) else None


def describe_client_error(err: BaseException) -> str:
    """One line for a failed request of the kubernetes client (a Lease's, N25, I1): `HTTP 403
    Forbidden: <the server's message>` for an answer of the server (its ApiException prints
    the response's headers and body on several lines), else the exception's type and its
    first line."""
    status = client_error_status(err)
    if status is None:
        first = (str(err).strip().splitlines() or [""])[0]
        return f"{type(err).__name__}: {first}" if first else type(err).__name__
    reason = getattr(err, "reason", None) or ""
    body = getattr(err, "body", None)
    message = ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and isinstance(decoded.get("message"), str):
            message = decoded["message"]
        else:
            message = " ".join(body.split())[:200]
    line = f"HTTP {status}" + (f" {reason}" if reason else "")
    return f"{line}: {message}" if message else line


__all__ = [
    "AlreadyExists",
    "ApiStatusError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "MethodNotSupported",
    "NotFound",
    "ServerTimeout",
    "ServiceUnavailable",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "client_error_status",
    "describe_client_error",
    "error_class",
    "error_from_status",
    "is_connection_refused",
    "is_expired",
    "is_internal_error",
    "is_timeout",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "is_watch_error_retriable",
]
