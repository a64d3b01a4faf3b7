"""The credentials of a kubernetes `ApiClient` for one request, on every client we support.

`ApiClient.update_params_for_auth` writes the configuration's credentials (the bearer token,
after running its refresh hook: exec plugins and expiring kubeconfig tokens use it) into a
request's headers and query. Its signature changed in kubernetes 37, with the OpenAPI
generator behind it:

- up to 36: ``update_params_for_auth(headers, queries, auth_settings)``;
- from 37: ``update_params_for_auth(headers, queries, auth_settings, resource_path, method,
  body, request_auth=None)``.

`apply_auth` calls whichever the client has (read once per ApiClient class from its
signature), so the transport, discovery and our tests speak to both.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

__all__ = ["apply_auth", "request_headers"]

# ApiClient class -> whether its update_params_for_auth takes the request (path, method, body).
_TAKES_REQUEST: dict[type, bool] = {}
_lock = threading.Lock()


def _takes_request(api_client: Any) -> bool:
    cls = type(api_client)
    known = _TAKES_REQUEST.get(cls)
    if known is None:
        try:
            names = list(inspect.signature(api_client.update_params_for_auth).parameters)
        except (TypeError, ValueError):  # a C or wrapped method without a signature
            names = []
        known = "resource_path" in names or len(names) >= 6
        with _lock:
            _TAKES_REQUEST[cls] = known
    return known


def apply_auth(
    api_client: Any,
    headers: dict[str, str],
    queries: list[tuple[str, str]],
    path: str,
    method: str = "GET",
) -> None:
    """Add `api_client`'s bearer-token credentials for `method path` to `headers`/`queries`."""
    if _takes_request(api_client):
        api_client.update_params_for_auth(headers, queries, ["BearerToken"], path, method, None)
    else:
        api_client.update_params_for_auth(headers, queries, ["BearerToken"])


def request_headers(
    api_client: Any, accept: str, path: str, queries: list[tuple[str, str]]
) -> dict[str, str]:
    """The headers of a GET of `path`: the client's default headers, `accept`, its
    User-Agent and its credentials (`apply_auth`, which may write `queries` too)."""
    headers: dict[str, str] = dict(api_client.default_headers)
    headers["Accept"] = accept
    headers.setdefault("User-Agent", api_client.user_agent)
    apply_auth(api_client, headers, queries, path)
    return headers
