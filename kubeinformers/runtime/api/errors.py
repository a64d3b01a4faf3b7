"""Errors that carry an API server's Status, so callers can tell 410 from 403 from 429."""

from __future__ import annotations

from typing import Any


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
        self.message = message
        self.details = details or {}
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"


def is_expired(err: BaseException) -> bool:
    """410 Gone / reason Expired or Gone: the resourceVersion asked for is compacted (D8, D13)."""
    return isinstance(err, ApiStatusError) and (
        err.code == 410 or err.reason in ("Expired", "Gone")
    )


def is_too_large_resource_version(err: BaseException) -> bool:
    """A resourceVersion newer than the server has seen ("Too large resource version", D8)."""
    if not isinstance(err, ApiStatusError):
        return False
    causes = err.details.get("causes") or []
    for cause in causes:
        if isinstance(cause, dict) and cause.get("reason") == "ResourceVersionTooLarge":
            return True
    return "too large resource version" in err.message.lower()


def is_too_many_requests(err: BaseException) -> bool:
    return isinstance(err, ApiStatusError) and err.code == 429
