"""One calm line per API server outage, instead of an ERROR for every failed request.

A kube-apiserver restart (a rollout, a crash) fails every list and watch for a few seconds: the
watch connection drops, the port refuses connections, then the new server answers 503 ("the
request has been made before all known HTTP paths have been installed") until its handlers are
in place, and 429 "storage is (re)initializing" until its watch cache is filled. Each failure
is retried with backoff and heals by itself, so the reflector reports an outage once: the
first failure as one WARNING, the rest at DEBUG, the recovery as one INFO.
A server that stays away is not silenced: the WARNING is repeated every `repeat_after` seconds
while it lasts. Failures that are not an outage (401/403, 404, 410, 500, a certificate the
client does not trust, a bad object) keep their own, louder reporting, each condition once
until the watch works again (`condition_level`, D22).
"""

from __future__ import annotations

import errno
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.reflector.support import VeryShortWatchError

REPEAT_AFTER_SECONDS = 60.0
_REINITIALIZING = "storage is (re)initializing"


# The peer closed the connection in the middle of TLS (a handshake cut short: a server going
# down, a proxy or load balancer dropping the connection; or a record never finished): the
# connection dropped, as a reset does. Not a failure of TLS itself (a certificate, a protocol).
_CONNECTION_CUT = (ssl.SSLEOFError, ssl.SSLZeroReturnError)


def _is_tls_failure(err: BaseException) -> bool:
    """A certificate or handshake failure somewhere in the cause chain (not an outage); a
    connection the peer closed during TLS is not one (it dropped: an outage)."""
    chain = _causes(err)
    if any(isinstance(cause, _CONNECTION_CUT) for cause in chain):
        return False
    return any(
        isinstance(cause, ssl.SSLError) or type(cause).__name__ == "SSLError" for cause in chain
    )


def _causes(err: BaseException) -> list[BaseException]:
    """`err` and what caused it: `__cause__`/`__context__` and urllib3's `reason`, outermost first."""
    chain: list[BaseException] = []
    pending: list[BaseException] = [err]
    while pending:
        current = pending.pop(0)
        if any(current is seen for seen in chain):
            continue
        chain.append(current)
        reason = getattr(current, "reason", None)
        for nxt in (reason, current.__cause__, current.__context__):
            if isinstance(nxt, BaseException):
                pending.append(nxt)
    return chain


def failure_cause(err: BaseException) -> str:
    """A short name for why a request failed ("connection refused", "HTTP 503", "timed out"),
    so that a log line says it up front and a change of cause can be told apart."""
    if isinstance(err, ApiStatusError):
        return f"HTTP {err.code}" + (f" {err.reason}" if err.reason else "")
    if type(err).__name__ == "VeryShortWatchError":  # see is_server_unavailable
        return "watch closed at once"
    chain = _causes(err)
    for cause in chain:
        if isinstance(cause, _CONNECTION_CUT):
            return "connection closed during TLS"
    for cause in chain:
        if isinstance(cause, ssl.SSLError):
            return f"TLS failure: {cause.strerror or cause}"
    for cause in chain:
        code = cause.errno if isinstance(cause, OSError) else None
        if code is not None and code in errno.errorcode:
            return os.strerror(code).lower()
    for cause in chain:
        if isinstance(cause, TimeoutError) or "timed out" in str(cause).lower():
            return "timed out"
    for cause in chain:
        if "refused" in str(cause).lower():
            return "connection refused"
    return type(chain[-1]).__name__


def storage_failure(err: BaseException) -> str | None:
    """What keeps the server from filling its cache of a resource, when `err` says so: a 429
    "storage is (re)initializing: failed to list ...: conversion webhook ... failed" (a
    custom resource's conversion webhook unreachable) names it, where a restart's says no
    more than "storage is (re)initializing". Such a failure is retried as an outage is, but
    worded as what it is: the server is up, one resource cannot be served until its cause is
    mended."""
    if not isinstance(err, ApiStatusError) or err.code != 429:
        return None
    _, found, detail = (err.server_message or "").partition(_REINITIALIZING + ": ")
    return detail.strip() or None if found else None


def is_server_unavailable(err: BaseException) -> bool:
    """The server is away for now: unreachable, its connection dropped, it answered 503, or
    429 "storage is (re)initializing" (a restarted apiserver's watch cache filling up)."""
    if isinstance(err, ApiStatusError):
        return err.code == 503 or (err.code == 429 and _REINITIALIZING in str(err))
    # Imported here: the reflector package imports this module, so importing it at the top
    # would be a cycle (this module belongs in kubeinformers.runtime.reflector).

    if isinstance(err, VeryShortWatchError):
        return True
    return isinstance(err, ConnectionError) and not _is_tls_failure(err)


class _Condition:
    """One reported failure condition of an informer: since when, and when last said aloud."""

    __slots__ = ("first", "last_loud", "loud")

    def __init__(self, first: float, *, loud: bool) -> None:
        self.first = first
        self.last_loud = first
        self.loud = loud


class OutageLog:
    """Decides how loudly one reflector reports a failure while the server is away.

    `failed()` logs the first failure of an outage at WARNING and later ones at DEBUG (again
    at WARNING once `repeat_after` seconds passed since the last one); `recovered()` ends the
    outage with one INFO line. Thread-safe; cheap when there is no outage.

    Until the server has answered once (`recovered()` was called: the first list succeeded), a
    change of cause (connection refused, then a TLS failure or HTTP 503) is a new WARNING too:
    a newcomer whose informer never synced sees every distinct reason, each once (issue 18).
    `on_failure` is called with every failure (the reflector keeps the last one for
    `wait_for_cache_sync_or_raise`).
    """

    def __init__(
        self,
        name: str,
        logger: logging.Logger,
        *,
        repeat_after: float = REPEAT_AFTER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.name = name
        self.logger = logger
        self.repeat_after = repeat_after
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._last_warning = 0.0
        self._served = False  # the server has answered once (a list succeeded)
        self._warned_cause: str | None = None
        # (kind, cause) -> when a failure that is not an outage was first and last said (D22)
        self._conditions: dict[tuple[str, str], _Condition] = {}
        self._on_failure = on_failure
        self.failures = 0

    @property
    def in_outage(self) -> bool:
        return self._down_since is not None

    def failed(self, what: str, err: BaseException) -> None:
        """Report `what` failed (e.g. "list of pods") because the server is unavailable."""
        if self._on_failure is not None:
            self._on_failure(err)
        now = self._clock()
        cause = failure_cause(err)
        with self._lock:
            self.failures += 1
            if self._down_since is None:
                self._down_since = self._last_warning = now
                self._warned_cause = cause
                level = logging.WARNING
                if storage_failure(err) is not None:
                    message = (
                        "%s: the API server cannot serve this resource: it fails to fill its "
                        "cache of it (%s: %s); mend what the server names (a conversion "
                        "webhook that cannot be reached, say); retrying until it can"
                    )
                    args: tuple[object, ...] = (self.name, what, err)
                else:
                    message = (
                        "%s: the API server is unavailable (%s: %s); cause: %s; "
                        "retrying until it is back"
                    )
                    args = (self.name, what, err, cause)
            elif not self._served and cause != self._warned_cause:
                self._last_warning = now
                self._warned_cause = cause
                level = logging.WARNING
                message = "%s: the API server is still unavailable, now because of %s (%s: %s)"
                args = (self.name, cause, what, err)
            elif now - self._last_warning >= self.repeat_after:
                self._last_warning = now
                level = logging.WARNING
                message = (
                    "%s: the API server still cannot serve this resource after %.0f s (%s: %s)"
                    if storage_failure(err) is not None
                    else "%s: the API server is still unavailable after %.0f s (%s: %s)"
                )
                args = (self.name, now - self._down_since, what, err)
            else:
                level = logging.DEBUG
                message = "%s: the API server is unavailable (%s: %s)"
                args = (self.name, what, err)
        self.logger.log(level, message, *args)

    @property
    def served(self) -> bool:
        """The server has answered a list once (the informer synced at least once)."""
        return self._served

    def condition_level(self, level: int, err: BaseException, kind: str) -> int:
        """D22: the level to log a failure that is not an outage (401/403, 404, a TLS failure,
        a watch-list fallback) at. Each condition (`kind` of message, cause of `err`) is said
        once at `level`, its repeats at DEBUG, until the watch works again (`watching()`); one
        lasting at WARNING or above is said again every `repeat_after` seconds, as an outage
        is. Before the first sync a cause the outage's WARNING already named is not repeated
        (issue 18: a newcomer sees why, once)."""
        now = self._clock()
        cause = failure_cause(err)
        key = (kind, cause)
        with self._lock:
            known = self._conditions.get(key)
            if known is None and not self._served and cause == self._warned_cause:
                # the outage's WARNING already named this cause
                self._conditions[key] = _Condition(now, loud=False)
                return logging.DEBUG
            if known is None:
                self._conditions[key] = _Condition(now, loud=level > logging.DEBUG)
                return level
            if level >= logging.WARNING and now - known.last_loud >= self.repeat_after:
                known.last_loud = now
                known.loud = True
                return level
            return logging.DEBUG

    def watching(self) -> None:
        """A watch (or watch-list) is open: the conditions reported since the last one are
        over (D22); if any was logged above DEBUG, say once that it works again."""
        if not self._conditions:
            return
        with self._lock:
            conditions, self._conditions = self._conditions, {}
        loud = sorted({cause for (_, cause), c in conditions.items() if c.loud})
        if loud:
            since = min(c.first for c in conditions.values())
            self.logger.info(
                "%s: list and watch work again after %.1f s (the failure was: %s)",
                self.name,
                self._clock() - since,
                "; ".join(loud),
            )

    def recovered(self) -> None:
        """A list or watch succeeded: end the outage (one INFO line if there was one)."""
        self._served = True
        if self._down_since is None:
            return
        with self._lock:
            down_since, self._down_since = self._down_since, None
            failures, self.failures = self.failures, 0
        if down_since is not None:
            self.logger.info(
                "%s: the API server is back after %.1f s (%d failed attempts)",
                self.name,
                self._clock() - down_since,
                failures,
            )
