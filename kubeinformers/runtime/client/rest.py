"""One REST request to the API server, sent over a kubernetes ApiClient: the core under the
typed clients (`kubeinformers.runtime.client.typed`).

The same connection as the informers' transport (`transport.py`): the ApiClient's urllib3
pool manager, its TLS settings and the headers its configuration computes (the token-refresh
hook runs on every request). Failures come back as the typed errors of
`kubeinformers.runtime.api.errors` (NotFound, Conflict, Invalid...), worded with the object and
the server. As client-go's rest client, a 429 or a 5xx with a Retry-After is retried after it,
at most `max_retries` times, and then raised as TooManyRequests.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import urllib3

from kubeinformers.runtime.api.errors import (
    ApiStatusError,
    error_from_status,
    is_connection_refused,
)
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.client.api_client import ApiClient
from kubeinformers.runtime.client.auth import apply_auth
from kubeinformers.runtime.client.cancel import make_cancellable, pause
from kubeinformers.runtime.client.credentials import credentials_for
from kubeinformers.runtime.client.server_warnings import log_warnings
from kubeinformers.runtime.client.transport import (
    NO_RETRIES,
    STATUS_REASONS,
    ensure_connection_pool_size,
    parse_retry_after,
)

logger = logging.getLogger("kubeinformers.client")

JSON = "application/json"
REQUEST_TIMEOUT = urllib3.Timeout(connect=30.0, read=60.0)
APPLY_PATCH = "application/apply-patch+yaml"  # a server-side apply's content type
JSON_PATCH = "application/json-patch+json"  # an RFC 6902 JSON patch's
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"  # built-in kinds only
# client-go: rest.Request's maxRetries for a Retry-After answer, and no wait longer than this.
DEFAULT_MAX_RETRIES = 10
MAX_RETRY_AFTER = 30.0


@dataclass(frozen=True, slots=True)
class Request:
    """One API request: `what` words it for errors (`create pods "web" in namespace "x"`);
    `resource` and `subresource` are what its path asks for, which a 404 naming no object says
    the server does not serve."""

    method: str
    path: str
    what: str
    query: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=())
    resource: APIResource | None = None
    subresource: str | None = None


class RestCore:
    """Sends Requests over `api_client` and returns the response body (bytes).

    Thread-safe; shared by the sync and asyncio clients (the asyncio one runs `send` in a
    worker thread, so the event loop never blocks on the network).
    """

    def __init__(self, api_client: ApiClient, *, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        if not isinstance(api_client, ApiClient):
            raise TypeError(
                "the client needs a kubernetes.client.ApiClient (config.new_client_from_config(), "
                f"or factory.client()), not {type(api_client).__name__}"
            )
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.api_client = api_client
        self.max_retries = max_retries
        # The informers' credentials for this configuration (D23): a token file re-read when
        # it changes and at once after a 401, an exec plugin run again.
        self.credentials = credentials_for(api_client.configuration)
        ensure_connection_pool_size(api_client)
        # M10: an AsyncClient call cancelled ends its request at once (Cancellation.scope).
        make_cancellable(getattr(getattr(api_client, "rest_client", None), "pool_manager", None))

    @property
    def server(self) -> str:
        return str(self.api_client.configuration.host).rstrip("/")

    def send(self, request: Request) -> bytes:
        """The response body of a 2xx answer; the typed ApiStatusError of any other."""
        attempt = 0
        credentials = self.credentials
        while True:
            status, body, retry_after = self._send_once(request)
            if status == 401 and credentials.refused(f"{request.what} at {self.server}"):
                status, body, retry_after = self._send_once(request)  # new credentials: once
            if status < 300:
                if credentials.refusing:
                    credentials.accepted(f"{request.what} at {self.server}")
                return body
            err = self.error(request, status, body, retry_after)
            attempt += 1
            self.wait_to_retry(err, attempt, request.what)

    def wait_to_retry(self, err: ApiStatusError, attempt: int, what: str) -> None:
        """Wait before retry number `attempt` of a request that failed with `err`, or raise
        `err` when it is not to be retried: as client-go's rest client (`checkWait`), a 429 or
        a 5xx with a Retry-After is sent again after it (at most MAX_RETRY_AFTER), up to
        `max_retries` times. A 429 without one is not: the server refuses for now without
        saying when (an eviction its pod's disruption budget does not allow), and the caller
        decides when to ask again."""
        code = err.code
        retriable = err.retry_after is not None and (code == 429 or code >= 500)
        if not retriable or attempt > self.max_retries:
            raise err
        wait = min(err.retry_after or 0.0, MAX_RETRY_AFTER)
        logger.debug(
            "%s: the server answered %d, retrying in %.1f s (attempt %d of %d)",
            what,
            code,
            wait,
            attempt,
            self.max_retries,
        )
        pause(wait)  # ended at once by a Cancellation (an AsyncClient call cancelled, M10)

    def _send_once(self, request: Request) -> tuple[int, bytes, float | None]:
        api = self.api_client
        headers: dict[str, str] = dict(api.default_headers)
        headers["Accept"] = JSON
        headers.setdefault("User-Agent", api.user_agent)
        if request.content_type is not None:
            headers["Content-Type"] = request.content_type
        headers.update(request.headers)
        queries = list(request.query)
        apply_auth(api, headers, queries, request.path, request.method)
        url = f"{self.server}{quote(request.path)}"
        if queries:
            url = f"{url}?{urlencode(queries)}"
        try:
            resp = api.rest_client.pool_manager.request(
                request.method,
                url,
                body=request.body,
                headers=headers,
                preload_content=True,
                timeout=REQUEST_TIMEOUT,
                retries=NO_RETRIES,
            )
        except (urllib3.exceptions.HTTPError, OSError) as e:
            if isinstance(e, urllib3.exceptions.ReadTimeoutError):
                applied = "" if request.method == "GET" else "; it may have been applied"
                raise ConnectionError(
                    f"cannot {request.what}: {self.server} accepted the request but did not "
                    f"answer within {REQUEST_TIMEOUT.read_timeout:g} s (an API server that hangs, "
                    f"or a proxy or load balancer that lost it){applied}"
                ) from e
            cls = ConnectionRefusedError if is_connection_refused(e) else ConnectionError
            raise cls(f"cannot {request.what}: {self.server} unreachable: {e}") from e
        except ValueError:
            resp = None  # raised below, outside this block, so that it holds no trace of it
        if resp is None:
            # http.client refuses a header value with a line break and quotes the value in
            # its message: that value is the credential, which must never be shown (M4), nor
            # kept as the new error's __context__.
            names = ", ".join(sorted(headers))
            raise ValueError(
                f"cannot {request.what} at {self.server}: a request header is invalid (one of "
                f"{names}; a token with a line break in it?); check the credentials of the "
                "configuration"
            )
        log_warnings(resp.headers.get("Warning"), request.what, self.server)
        return resp.status, resp.data, parse_retry_after(resp.headers.get("Retry-After"))

    def error(
        self, request: Request, code: int, body: bytes, retry_after: float | None
    ) -> ApiStatusError:
        """The server's Status as its typed error, worded with the request and what to do."""
        status: Status | None
        try:
            status = Status.model_validate_json(body)
        except Exception:
            status = None
        if status is None or status.kind not in (None, "Status"):
            text = body[:500].decode("utf-8", "replace").strip()
            status = Status(
                code=code, reason=STATUS_REASONS.get(code, ""), message=text or f"HTTP {code}"
            )
        if not status.code:
            status.code = code
        err = error_from_status(status, retry_after=retry_after)
        err.code = code
        hint = _HINTS.get(code, "")
        owned = any(c.reason == "FieldManagerConflict" for c in err.causes)
        if code == 403 and any(c.reason == "NamespaceTerminating" for c in err.causes):
            hint = (  # NamespaceLifecycle admission: no RBAC rule is missing
                "the namespace is being deleted: nothing new can be created in it until it is "
                "gone (its objects' finalizers done); create the namespace again then, or use "
                "another"
            )
        elif code == 429 and any(c.reason == "DisruptionBudget" for c in err.causes):
            hint = (  # an eviction: the pod's PodDisruptionBudget decides, not the server's load
                "the pod's PodDisruptionBudget allows no disruption now (its cause says why): "
                "evict it again later, as kubectl drain does every 5 s"
                + ("; retried after its Retry-After without success" if err.retry_after else "")
            )
        elif code == 429 and err.retry_after is None:
            hint = "the server refuses it for now without a Retry-After: try again later"
        elif code == 409 and err.reason == "Conflict" and owned:
            hint = (
                "another field manager owns these fields: leave them out of the apply, or "
                "take them over with force=True"
            )
        elif code == 409 and err.reason == "Conflict" and request.content_type == APPLY_PATCH:
            hint = (  # an apply that sent metadata.resourceVersion: force=True does not help
                "the object changed since the metadata.resourceVersion the apply sent: leave "
                "resourceVersion out of an apply, or read the object again and redo it"
            )
        elif code == 422 and not err.causes and request.content_type == JSON_PATCH:
            hint = (  # the server's message says no more (apimachinery drops jsonpatch's error)
                "the JSON patch does not apply to the object as the server has it: a `test` "
                "operation failed, or a path it names does not exist (an `add` needs the "
                "parent), or an operation is malformed (an `op` other than add, remove, "
                "replace, move, copy and test, or no `path`)"
            )
        elif code == 422 and not err.causes:
            hint = "the server rejected the request as invalid"
        elif code == 415 and request.content_type == STRATEGIC_MERGE_PATCH:
            hint = (  # a custom resource: its schema has no patch strategies to merge lists by
                "a strategic merge patch is for built-in kinds only: patch a custom resource "
                'with patch_type="merge" or "json", or apply it'
            )
        elif code == 404 and request.resource and not (status.details and status.details.name):
            # A missing object's Status names it; a path the server does not serve is answered
            # "404 page not found" (an unknown group or version, a CRD not installed) or a
            # Status naming nothing ("the server could not find the requested resource").
            hint = _not_served(request.resource, request.subresource)
        elif code == 400 and "managedFields must be nil" in (status.message or ""):
            hint = (  # an apply of a model read from the server
                "an apply sends only the fields this field manager owns: apply an apply "
                "configuration (the kind's `...Apply` class), or a model with only those "
                "fields set, not an object read from the server (clear its "
                "metadata.managed_fields and metadata.resource_version at least)"
            )
        elif code == 500 and "failed to create typed patch object" in (status.message or ""):
            hint = (  # an apply's fields read against the server's schema: not a server failure
                "the server's schema does not declare the field it names, or not with that "
                "type: fix it or leave it out (regenerate the apply configurations from this "
                "server if they differ from it); sent again unchanged, the apply fails again"
            )
        elif code == 500 and "should not be set on objects to be created" in (status.message or ""):
            hint = (  # a create of an object read from the server
                "a create takes a new object: clear metadata.resource_version (and uid) of an "
                "object read from the server, or update or apply it instead"
            )
        elif code == 409 and err.reason == "Conflict" and "precondition" in (status.message or ""):
            hint = (  # a delete's failed precondition: redoing the delete would defeat it
                "the object is no longer the one the delete's preconditions name (another uid: "
                "it was deleted and created again; another resourceVersion: it changed): read "
                "it again and decide whether that one is to be deleted"
            )
        elif code == 409 and err.reason == "Conflict":
            hint = (
                "the object changed since it was read: read it again and redo the change "
                "(retry_on_conflict does this)"
            )
        err.message = f"cannot {request.what} at {self.server}: {status.message or err.reason}"
        if hint:
            err.message = f"{err.message}; {hint}"
        err.args = (err.message,)
        return err


_HINTS = {
    401: "check the credentials (token, client certificate or exec plugin) of the kubeconfig",
    403: "check the RBAC rules of the credentials",
    422: "the server rejected the fields named in the error's causes",
    429: "the server is overloaded; retried after its Retry-After without success",
}


def _not_served(resource: APIResource, subresource: str | None) -> str:
    served = resource.gvr.group_resource()
    check = "for a custom resource that its CustomResourceDefinition is installed"
    if subresource:
        served = f"{served}/{subresource}"
        check = f"{check} and declares the {subresource} subresource in this version"
    return (
        f"the server does not serve {served} in {resource.api_version}: check the API group "
        f"and version, and {check}"
    )


def query(**params: str | int | bool | None) -> tuple[tuple[str, str], ...]:
    """Query parameters, camelCase names as given; None values are left out."""
    out: list[tuple[str, str]] = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        out.append((name, str(value)))
    return tuple(out)


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "JSON",
    "STRATEGIC_MERGE_PATCH",
    "Request",
    "RestCore",
    "query",
]
