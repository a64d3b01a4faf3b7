"""One calm line per API server outage, instead of an ERROR for every failed request.

A kube-apiserver restart (a rollout, a crash) fails every list and watch for a few seconds: the
watch connection drops, the port refuses connections, then the new server answers 503 ("the
request has been made before all known HTTP paths have been installed") until its handlers are
in place, and 429 "storage is (re)initializing" until its watch cache is filled. Each failure
is retried with backoff and heals by itself, so the reflector reports an outage once: the
first failure as one WARNING, the rest at DEBUG, the recovery as one INFO.
A server that stays away is not silenced: the WARNING is repeated every `repeat_after` seconds
while it lasts. Failures that are not an outage (401/403, 404, 410, 500, a certificate the
client does not trust, a bad object) keep their own, louder reporting.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from collections.abc import Callable

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.reflector.support import VeryShortWatchError

REPEAT_AFTER_SECONDS = 60.0
_REINITIALIZING = "storage is (re)initializing"


def _is_tls_failure(err: BaseException) -> bool:
    """A certificate or handshake failure somewhere in the cause chain (not an outage)."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError) or type(current).__name__ == "SSLError":
            return True
        reason = getattr(current, "reason", None)  # urllib3's MaxRetryError
        if isinstance(reason, BaseException) and _is_tls_failure(reason):
            return True
        current = current.__cause__ or current.__context__
    return False


def is_server_unavailable(err: BaseException) -> bool:
    """The server is away for now: unreachable, its connection dropped, it answered 503, or
    429 "storage is (re)initializing" (a restarted apiserver's watch cache filling up)."""
    if isinstance(err, ApiStatusError):
        return err.code == 503 or (err.code == 429 and _REINITIALIZING in str(err))
    if isinstance(err, VeryShortWatchError):
        return True
    return isinstance(err, ConnectionError) and not _is_tls_failure(err)


class OutageLog:
    """Decides how loudly one reflector reports a failure while the server is away.

    `failed()` logs the first failure of an outage at WARNING and later ones at DEBUG (again
    at WARNING once `repeat_after` seconds passed since the last one); `recovered()` ends the
    outage with one INFO line. Thread-safe; cheap when there is no outage.
    """

    def __init__(
        self,
        name: str,
        logger: logging.Logger,
        *,
        repeat_after: float = REPEAT_AFTER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.logger = logger
        self.repeat_after = repeat_after
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._last_warning = 0.0
        self.failures = 0

    @property
    def in_outage(self) -> bool:
        return self._down_since is not None

    def failed(self, what: str, err: BaseException) -> None:
        """Report `what` failed (e.g. "list of pods") because the server is unavailable."""
        now = self._clock()
        with self._lock:
            self.failures += 1
            if self._down_since is None:
                self._down_since = self._last_warning = now
                level = logging.WARNING
                message = "%s: the API server is unavailable (%s: %s); retrying until it is back"
                args: tuple[object, ...] = (self.name, what, err)
            elif now - self._last_warning >= self.repeat_after:
                self._last_warning = now
                level = logging.WARNING
                message = "%s: the API server is still unavailable after %.0f s (%s: %s)"
                args = (self.name, now - self._down_since, what, err)
            else:
                level = logging.DEBUG
                message = "%s: the API server is unavailable (%s: %s)"
                args = (self.name, what, err)
        self.logger.log(level, message, *args)

    def recovered(self) -> None:
        """A list or watch succeeded: end the outage (one INFO line if there was one)."""
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
