"""The API server's Kubernetes release (GET /version), asked now and then per ApiClient.

Why: built-in kinds are read as protobuf through a table generated from one Kubernetes
release. Protobuf names a field by its number only, so a field a newer server sends and the
table lacks cannot be kept: it would be missing from the cached object, and an update built
from that object would clear it on the server. The transport reads a newer server's objects
as JSON instead (D25), where such a field is kept among the model's extra fields. A server
upgraded while informers run is noticed at their next list or watch after RECHECK_AFTER.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import urllib3

from kubeinformers.runtime.client.auth import request_headers

__all__ = ["RECHECK_AFTER", "parse_version", "server_version"]

logger = logging.getLogger("kubeinformers.transport")

RECHECK_AFTER = 600.0  # seconds a known release is trusted before it is asked again
RETRY_AFTER_FAILURE = 30.0  # after /version failed: protobuf meanwhile, as before it was asked
_TIMEOUT = urllib3.Timeout(connect=10.0, read=10.0)
_NO_RETRIES = urllib3.Retry(total=0, redirect=3, raise_on_redirect=False)

_lock = threading.Lock()
# ApiClient -> (when to ask again, (major, minor) or None when not known)
_known: weakref.WeakKeyDictionary[Any, tuple[float, tuple[int, int] | None]] = (
    weakref.WeakKeyDictionary()
)


def parse_version(body: bytes) -> tuple[int, int] | None:
    """(1, 37) from /version's {"major": "1", "minor": "37+"}: the digits each starts with
    (distributions add a suffix); None when it says no such thing."""
    try:
        info = json.loads(body)
        numbers = []
        for key in ("major", "minor"):
            text = str(info[key])
            digits = len(text) - len(text.lstrip("0123456789"))
            numbers.append(int(text[:digits]))
    except (ValueError, KeyError, TypeError):
        return None
    return numbers[0], numbers[1]


def server_version(
    api_client: Any, *, clock: Callable[[], float] = time.monotonic
) -> tuple[int, int] | None:
    """The (major, minor) release of the server `api_client` talks to; None when it cannot be
    told (the server did not answer /version: asked again after RETRY_AFTER_FAILURE)."""
    now = clock()
    with _lock:
        known = _known.get(api_client)
    if known is not None and now < known[0]:
        return known[1]
    version = _ask(api_client)
    with _lock:
        try:
            _known[api_client] = (
                now + (RECHECK_AFTER if version is not None else RETRY_AFTER_FAILURE),
                version,
            )
        except TypeError:
            pass  # a client that cannot be weakly referenced: asked every time
    return version


def _ask(api_client: Any) -> tuple[int, int] | None:
    host = str(api_client.configuration.host).rstrip("/")
    try:
        headers = request_headers(api_client, "application/json", "/version", [])
        resp = api_client.rest_client.pool_manager.request(
            "GET", f"{host}/version", headers=headers, timeout=_TIMEOUT, retries=_NO_RETRIES
        )
    except Exception as e:  # the list or watch that follows reports an unreachable server
        logger.debug("cannot ask %s for its version: %s", host, e)
        return None
    if resp.status != 200:
        logger.debug("%s answered /version with HTTP %s", host, resp.status)
        return None
    version = parse_version(resp.data)
    if version is None:
        logger.debug("%s answered /version without a release: %r", host, resp.data[:200])
    return version
