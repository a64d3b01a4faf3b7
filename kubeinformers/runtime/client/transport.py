"""ApiListerWatcher: list (one page per call) and watch a resource over a kubernetes ApiClient.

Authentication, TLS, proxies, kubeconfig and exec plugins all come from the `kubernetes`
package: requests go through the ApiClient's own urllib3 pool manager with the headers its
configuration computes (`update_params_for_auth` runs the token-refresh hook each time).
Bodies are decoded straight from bytes into the model by a swappable `decoder`
(kubeinformers.runtime.codec.wire.JsonDecoder by default); no `kubernetes` model classes are used.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    Self,
    TypeVar,
    cast,
    runtime_checkable,
)
from urllib.parse import quote, urlencode

import urllib3
import urllib3.connectionpool
from pydantic import BaseModel, ValidationError

from kubeinformers.runtime.api.errors import (
    ApiStatusError,
    error_from_status,
    is_connection_refused,
)
from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList, WatchEvent
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.client.auth import request_headers
from kubeinformers.runtime.client.cancel import Cancellation, RequestCancelled, make_cancellable
from kubeinformers.runtime.client.chunked import raw_chunked_body
from kubeinformers.runtime.client.credentials import credentials_for
from kubeinformers.runtime.client.framing import split_frames, split_lines
from kubeinformers.runtime.client.server_version import server_version
from kubeinformers.runtime.client.server_warnings import log_warnings
from kubeinformers.runtime.codec.compact import (
    CACHE_COMPRESSIONS,
    CacheCompression,
    Compactor,
    new_compactor,
)
from kubeinformers.runtime.codec.drift import (
    InvalidFieldError,
    InvalidObjectError,
    PartlyInvalidObjectError,
)
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.tables import messages_for, table_version
from kubeinformers.runtime.codec.wire import JsonDecoder, ObjectDecodeError

if TYPE_CHECKING:
    from kubeinformers.runtime.client.api_client import ApiClient

T = TypeVar("T")

logger = logging.getLogger("kubeinformers.transport")

# 50 informers each hold one watch connection and now and then a list: size the per-host pool
# so none of them ever waits for, or churns, a connection.
MIN_CONNECTION_POOL_SIZE = 128
LIST_TIMEOUT = urllib3.Timeout(connect=30.0, read=180.0)
WATCH_CONNECT_TIMEOUT = 30.0
WATCH_READ_SLACK = 60.0  # read timeout = the watch's timeoutSeconds + this
# The server answers a watch at once (its headers come before any event), so a watch not
# answered within this long is an outage (D24): said at WARNING, tried again after a backoff,
# instead of waiting silently for the watch's read timeout (up to 11 minutes).
WATCH_ANSWER_TIMEOUT = 60.0
_READ_SIZE = 65536
# (server, table release, server release) already said (D25): once per process.
_newer_told: set[tuple[str, tuple[int, int], tuple[int, int]]] = set()
_newer_lock = threading.Lock()


# The reflector retries (with backoff that a stop interrupts, D4/D11, and Retry-After): urllib3
# must not also retry, or sleep on a Retry-After, behind its back. Redirects are still followed,
# and a GET sent on a pooled connection the server had already closed is sent once more.
class _ResendOnce(urllib3.Retry):
    """Our requests' retry policy; its type marks urllib3's "Retrying ..." records as ours.
    A server that did not answer in time is not asked again here: that would wait as long
    again before anyone hears of it."""

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: urllib3.BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: urllib3.connectionpool.ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        if isinstance(error, urllib3.exceptions.ReadTimeoutError):
            raise error
        return super().increment(method, url, response, error, _pool, _stacktrace)


class _QuietResend(logging.Filter):
    """urllib3 logs a WARNING each time it resends a GET whose pooled connection the server
    had closed (every dropped watch, every apiserver restart). For our requests that resend is
    routine; if it fails too, the error reaches the reflector, which reports it (outage.py).
    So our records go down to DEBUG; everyone else's are left alone."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and args and isinstance(args[0], _ResendOnce):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


logging.getLogger("urllib3.connectionpool").addFilter(_QuietResend())

NO_RETRIES = _ResendOnce(
    total=None,
    connect=0,
    read=1,
    redirect=5,
    status=0,
    other=0,
    respect_retry_after_header=False,
    raise_on_redirect=False,
    raise_on_status=False,
)
_MAX_LOGGED_BAD_OBJECTS = 10_000
_NOTHING = object()


def _bad_object_problem(err: BaseException) -> tuple[str, Hashable]:
    """The object an invalid-object report is about (its key) and what is wrong with it (the
    fields and why, never the resourceVersion: a later version with the same bad fields is the
    same news). An error naming no object is its own key."""
    key = str(getattr(err, "key", err))
    problem: Hashable
    if isinstance(err, ObjectDecodeError):
        problem = (err.path, err.reason)
    elif isinstance(err, PartlyInvalidObjectError):
        problem = tuple((f.path, f.reason) for f in err.fields)
    elif isinstance(err, InvalidFieldError):
        problem = ((err.path, err.reason),)
    elif isinstance(err, InvalidObjectError) and isinstance(err.validation_error, ValidationError):
        problem = tuple(
            (tuple(str(p) for p in e["loc"]), e["msg"])
            for e in err.validation_error.errors(include_url=False)
        )
    else:
        problem = (type(err).__name__, str(err))
    return key, problem


class Decoder(Protocol[T]):
    """The seam between bytes and objects."""

    def decode_list(self, data: bytes) -> ObjectList[T]: ...

    def decode_event(self, line: bytes) -> WatchEvent[T]: ...


@runtime_checkable
class SkippingDecoder(Decoder[T], Protocol[T]):
    """A decoder that can also decode a page around its bad items: the good ones, and an error
    per bad one (both built-in decoders can; a page from another fails whole)."""

    def decode_list_skipping(self, data: bytes) -> tuple[ObjectList[T], Sequence[Exception]]: ...


@runtime_checkable
class StreamingDecoder(Decoder[T], Protocol[T]):
    """A decoder that can also decode a JSON list body while it arrives (rule K8): the items,
    and an error per item it could not decode (both built-in decoders can; a page from another
    is read whole first)."""

    def decode_list_stream(
        self, chunks: Iterable[bytes]
    ) -> tuple[ObjectList[T], Sequence[Exception]]: ...


DecodeMode = Literal["lazy", "eager"]
WireFormat = Literal["protobuf", "json"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
# As client-go's clientsets: protobuf, else JSON (a kind the server cannot write as protobuf).
PROTOBUF_ACCEPT = f"{PROTOBUF}, application/json"
_PROTOBUF_MAGIC = b"k8s\x00"


def default_decoder(
    model: type[T],
    decode: DecodeMode = "lazy",
    *,
    describe: str = "",
    on_invalid: Callable[[BaseException], None] | None = None,
    compactor: Compactor | None = None,
) -> Decoder[T]:
    """The decoder for `model`: lazy models (built on first access) unless `decode="eager"`.

    Lazy decoding splits list pages and watch lines into raw items and decodes only each
    object's identity; the full model is validated on first access (kubeinformers.runtime.codec.lazy).
    A bad object is then reported through `on_invalid` on first access. Eager decoding
    validates every object up front and reports a bad one at once; it is cached at the version
    the server sent, built field by field, its bad fields raising when read (K7, K11).
    """
    if decode not in ("lazy", "eager"):
        raise ValueError(f'decode must be "lazy" or "eager", got {decode!r}')
    if decode == "lazy" and isinstance(model, type) and issubclass(model, BaseModel):
        lazy = LazyDecoder(model, on_invalid=on_invalid, describe=describe, compactor=compactor)
        if lazy.builder.supported:
            return cast("Decoder[T]", lazy)
    return JsonDecoder(model, describe=describe)


class _ReportWhileAlive:
    """The lazy decoders' `on_invalid`: reports through an ApiListerWatcher while it lives.

    Why: every lazy class holds its decoder's hook (K11), and every object cached holds its
    class; holding the ApiListerWatcher (its reflector, store and last error) strongly would
    keep a stopped informer, its whole cache included, alive as long as the application keeps
    one object it cached (K9). Once the ApiListerWatcher is gone, a bad object found by a late
    read is still logged."""

    __slots__ = ("_report",)

    def __init__(self, report: Callable[[BaseException], None]) -> None:
        self._report = weakref.WeakMethod(report)

    def __call__(self, err: BaseException) -> None:
        report = self._report()
        if report is None:
            logger.error("%s (read after its informer stopped)", err)
            return
        report(err)


def ensure_connection_pool_size(api_client: Any, minimum: int = MIN_CONNECTION_POOL_SIZE) -> None:
    """Grow (never shrink) the ApiClient's per-host connection pool to `minimum`.

    urllib3 keys pools by their settings, so pools created from now on get the new size.
    """
    cfg = api_client.configuration
    if (cfg.connection_pool_maxsize or 0) < minimum:
        cfg.connection_pool_maxsize = minimum
    pool_manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
    kw = getattr(pool_manager, "connection_pool_kw", None)
    if isinstance(kw, dict) and (kw.get("maxsize") or 1) < minimum:
        kw["maxsize"] = minimum


def query_params(options: ListOptions, *, watch: bool) -> list[tuple[str, str]]:
    """meta/v1 ListOptions as query parameters; empty values are omitted as Go's omitempty does."""
    q: list[tuple[str, str]] = []
    if options.label_selector:
        q.append(("labelSelector", options.label_selector))
    if options.field_selector:
        q.append(("fieldSelector", options.field_selector))
    if options.resource_version:
        q.append(("resourceVersion", options.resource_version))
    if options.resource_version_match:
        q.append(("resourceVersionMatch", options.resource_version_match))
    if options.limit:
        q.append(("limit", str(options.limit)))
    if options.continue_:
        q.append(("continue", options.continue_))
    if options.timeout_seconds is not None:
        q.append(("timeoutSeconds", str(options.timeout_seconds)))
    if watch:
        q.append(("watch", "true"))
        if options.allow_watch_bookmarks:
            q.append(("allowWatchBookmarks", "true"))
    if options.send_initial_events is not None:
        q.append(("sendInitialEvents", "true" if options.send_initial_events else "false"))
    if options.shard_selector:
        q.append(("shardSelector", options.shard_selector))
    return q


class ApiListerWatcher(Generic[T]):
    """A ListerWatcher over the Kubernetes REST API (JSON), decoding into `model`.

    `model=dict` gives plain dicts (dynamic informers). Raises ApiStatusError for failure
    Statuses and ConnectionError (ConnectionRefusedError when refused) when the server cannot
    be reached. An object that fails validation in a watch stream is logged once, counted in
    `decode_errors` and reported to the decode error handler (the reflector's watch error
    handler); the stream goes on. The event is passed on with the object at the version the
    server sent, built field by field (its bad fields raise InvalidFieldError when read); one
    without a readable identity (no key to cache it by) is skipped (K7, K11).
    """

    def __init__(
        self,
        api_client: ApiClient,
        resource: APIResource,
        model: type[T],
        *,
        namespace: str | None = None,
        tweak_list_options: Callable[[ListOptions], ListOptions | None] | None = None,
        decoder: Decoder[T] | None = None,
        decode: DecodeMode = "lazy",
        accept: str | None = None,
        watch_accept: str | None = None,
        watch_idle_timeout: float | None = None,
        wire_format: WireFormat = "protobuf",
        cache_compression: CacheCompression = "none",
    ) -> None:
        self.api_client = api_client
        # No byte (not even a bookmark) on a watch for this long: the watch is ended and the
        # reflector re-watches from its last resourceVersion (a stalled proxy or connection).
        self.watch_idle_timeout = watch_idle_timeout
        self.idle_reconnects = 0
        # Accept headers; metadata-only informers ask for PartialObjectMetadata(List) (J2).
        self.accept = accept or "application/json"
        self.watch_accept = watch_accept or self.accept
        self.resource = resource
        self.model = model
        self.namespace = namespace or None
        self.tweak_list_options = tweak_list_options
        # The compact store (cache_compression): lazy objects keep their bytes compressed,
        # with a dictionary per decoder (JSON and protobuf bytes differ).
        if cache_compression not in CACHE_COMPRESSIONS:
            raise ValueError(
                f'cache_compression must be "none" or "zlib", got {cache_compression!r}'
            )
        if cache_compression != "none" and (decoder is not None or decode != "lazy"):
            raise ValueError(
                'cache_compression compresses lazy objects: it needs decode="lazy" and the '
                "built-in decoder"
            )
        self.decoder: Decoder[T] = decoder or default_decoder(
            model,
            decode,
            describe=self.describe(),
            on_invalid=_ReportWhileAlive(self.report_bad_object),
            compactor=new_compactor(cache_compression),
        )
        if wire_format not in ("protobuf", "json"):
            raise ValueError(f'wire_format must be "protobuf" or "json", got {wire_format!r}')
        # Built-in kinds come as protobuf when decoded lazily (the server writes protobuf
        # about twice as fast as JSON, and the cached bytes are a third smaller); responses
        # are decoded by their Content-Type, so a server that answers JSON is read as JSON.
        self.protobuf: ProtobufLazyDecoder[Any] | None = None
        if (
            wire_format == "protobuf"
            and decoder is None
            and decode == "lazy"
            and accept is None
            and watch_accept is None
            and resource.protobuf is not None
            and isinstance(self.decoder, LazyDecoder)
        ):
            self.protobuf = ProtobufLazyDecoder(
                cast(type[BaseModel], model),
                message=resource.protobuf.message,
                messages=messages_for(resource.protobuf),
                on_invalid=_ReportWhileAlive(self.report_bad_object),
                describe=self.describe(),
                compactor=new_compactor(cache_compression),
            )
            self.accept = self.watch_accept = PROTOBUF_ACCEPT
        # The release of the protobuf table: a newer server is read as JSON (D25).
        self._table_version = (
            table_version(resource.protobuf)
            if self.protobuf is not None and resource.protobuf is not None
            else None
        )
        self.path = resource.collection_path(self.namespace)
        self.decode_errors = 0
        self._decode_error_handler: Callable[[BaseException], None] | None = None
        # Invalid objects reported (key -> what was wrong), see report_bad_object.
        self._logged_bad: OrderedDict[str, Hashable] = OrderedDict()
        self._lock = threading.Lock()
        ensure_connection_pool_size(api_client)
        # A stop ends the requests in flight at once (`cancel_requests`), as client-go's
        # cancelled context does: a server that never answers cannot hold up a shutdown.
        make_cancellable(getattr(api_client.rest_client, "pool_manager", None))
        self._cancellation = Cancellation(f"{self.describe()} at {self.server}")
        # Token files re-read when they change and after a 401; the user's host kept.
        self.credentials = credentials_for(api_client.configuration)

    # -------------------------------------------------------------------------- wording

    @property
    def server(self) -> str:
        return str(self.api_client.configuration.host).rstrip("/")

    def describe(self) -> str:
        """`pods in namespace "x"`, `pods in all namespaces`, `nodes`: for messages."""
        what = self.resource.gvr.group_resource()
        if not self.resource.namespaced:
            return what
        if self.namespace:
            return f'{what} in namespace "{self.namespace}"'
        return f"{what} in all namespaces"

    def __repr__(self) -> str:
        return f"ApiListerWatcher({self.describe()} at {self.server})"

    def is_watch_list_semantics_unsupported(self) -> bool:
        """D17/H8: a real API server client supports watch-list (the server may still refuse)."""
        return False

    def set_decode_error_handler(self, handler: Callable[[BaseException], None]) -> None:
        """Called by the Reflector: undecodable objects go to its watch error handler."""
        self._decode_error_handler = handler

    # -------------------------------------------------------------------------- requests

    def _options(self, options: ListOptions) -> ListOptions:
        """H8: the tweak function sees a copy; it may change it in place or return a new one."""
        if self.tweak_list_options is None:
            return options
        copy = options.copy()
        tweaked = self.tweak_list_options(copy)
        return tweaked if tweaked is not None else copy

    def _request(
        self, options: ListOptions, *, watch: bool, timeout: urllib3.Timeout
    ) -> urllib3.BaseHTTPResponse:
        """One GET. A 401 makes the credentials re-read their token file (or run their exec
        plugin) at once; if that gave new credentials the request is sent again, once."""
        verb = "watch" if watch else "list"
        credentials = self.credentials
        resp = self._send(options, watch=watch, timeout=timeout)
        if resp.status == 401:
            body = self._drain(resp)
            if credentials.refused(f"{verb} {self.describe()} at {self.server}"):
                resp = self._send(options, watch=watch, timeout=timeout)
                if resp.status == 401:
                    body = self._drain(resp)
            if resp.status == 401:
                err = self._status_error(verb, 401, body, resp.headers.get("Retry-After"))
                err.reported = True  # said once per episode by the credentials
                raise err
        # M11: a deprecated API version's warning comes with every list and watch of it.
        log_warnings(resp.headers.get("Warning"), f"{verb} {self.describe()}", self.server, logger)
        if resp.status >= 300:
            body = self._drain(resp)
            raise self._status_error(verb, resp.status, body, resp.headers.get("Retry-After"))
        if credentials.refusing:
            credentials.accepted(f"{verb} {self.describe()} at {self.server}")
        return resp

    @staticmethod
    def _drain(resp: urllib3.BaseHTTPResponse) -> bytes:
        try:
            return resp.read()
        except Exception:
            return b""
        finally:
            resp.release_conn()

    def _send(
        self, options: ListOptions, *, watch: bool, timeout: urllib3.Timeout
    ) -> urllib3.BaseHTTPResponse:
        verb = "watch" if watch else "list"
        api = self.api_client
        queries = query_params(options, watch=watch)
        # Runs the configuration's refresh hook (credentials.py wraps it: a rotated token
        # file is read here, and the host the user set is kept).
        headers = request_headers(api, self._accept(watch), self.path, queries)
        if not watch:
            # As client-go's transport: big lists come compressed (the server does not
            # compress watches); urllib3 inflates them on read.
            headers.setdefault("Accept-Encoding", "gzip")
        url = f"{self.server}{quote(self.path)}"
        if queries:
            url = f"{url}?{urlencode(queries)}"
        try:
            return api.rest_client.pool_manager.request(
                "GET",
                url,
                headers=headers,
                preload_content=False,
                timeout=timeout,
                retries=NO_RETRIES,
            )
        except (urllib3.exceptions.HTTPError, OSError) as e:
            self._raise_if_cancelled(verb, e)
            if isinstance(e, urllib3.exceptions.ReadTimeoutError):
                raise ConnectionError(
                    f"cannot {verb} {self.describe()}: {self.server} accepted the request but "
                    f"did not answer within {timeout.read_timeout:g} s (an API server that "
                    "hangs, or a proxy or load balancer that lost it)"
                ) from e
            cls = ConnectionRefusedError if is_connection_refused(e) else ConnectionError
            raise cls(f"cannot {verb} {self.describe()}: {self.server} unreachable: {e}") from e
        except ValueError:
            pass  # raised below, outside this block, so that it holds no trace of the value
        # http.client refuses a header value with a line break and quotes the value in its
        # message: that value is the credential, which must never be logged (nor kept as the
        # new error's __context__, where a traceback or an error reporter would find it).
        names = ", ".join(sorted(headers))
        raise ValueError(
            f"cannot {verb} {self.describe()}: a request header is invalid (one of {names}; "
            "a token with a line break in it?); check the credentials of the configuration"
        )

    def _accept(self, watch: bool) -> str:
        """The Accept header: protobuf for a built-in kind, unless the server is a newer
        Kubernetes release than the protobuf table (D25): then JSON, which keeps the fields
        the table lacks (protobuf names them by number only; they would be lost)."""
        accept = self.watch_accept if watch else self.accept
        table = self._table_version
        if table is None:
            return accept
        server = server_version(self.api_client)
        if server is None or server <= table:
            return accept
        key = (self.server, table, server)
        with _newer_lock:
            first = key not in _newer_told
            _newer_told.add(key)
        if first:
            logger.info(
                "the API server at %s is Kubernetes %d.%d, newer than the generated models' "
                "protobuf table (%d.%d): built-in kinds are read as JSON, which keeps the "
                "fields the models lack; regenerate the models against this server to read "
                "protobuf again",
                self.server,
                *server,
                *table,
            )
        return "application/json"

    def cancel_requests(self) -> None:
        """End the list or watch request in flight at once (connecting, waiting for the
        answer or reading it) and refuse every later one with RequestCancelled: the informer
        this source serves has stopped (client-go cancels the request's context)."""
        self._cancellation.cancel()

    def _raise_if_cancelled(self, verb: str, err: BaseException) -> None:
        if self._cancellation.cancelled:
            raise RequestCancelled(f"{verb} {self.describe()}: stopped") from err

    def wait_for_new_credentials(self, stop: threading.Event, timeout: float) -> bool:
        """After a 401: wait up to `timeout` seconds, less if the token file changes (or
        `stop` is set); True if it changed (the reflector then tries again at once)."""
        return self.credentials.wait_for_change(stop, timeout)

    def _status_error(
        self, verb: str, code: int, body: bytes, retry_after_header: str | None
    ) -> ApiStatusError:
        """The server's Status as an ApiStatusError; 401/403 worded for the user, no token."""
        status: Status | None = None
        try:
            if body.startswith(_PROTOBUF_MAGIC) and self.protobuf is not None:
                status = self.protobuf.decode_status(body)
            else:
                status = Status.model_validate_json(body)
        except Exception:
            status = None
        if status is None or status.kind not in (None, "Status"):
            text = body[:500].decode("utf-8", "replace").strip()
            status = Status(
                code=code, reason=STATUS_REASONS.get(code, ""), message=text or f"HTTP {code}"
            )
        retry_after = parse_retry_after(retry_after_header)
        err = error_from_status(status, retry_after=retry_after)
        err.code = code  # the HTTP status is authoritative
        if code == 401:
            err.message = (
                f"cannot {verb} {self.describe()} at {self.server}: {err.message}; "
                "check the credentials (token, client certificate or exec plugin) of the kubeconfig"
            )
        elif code == 403:
            err.message = (
                f"cannot {verb} {self.describe()} at {self.server}: {err.message}; "
                "check the RBAC rules of the credentials"
            )
        elif code == 400:
            err.message = (
                f"cannot {verb} {self.describe()} at {self.server}: {err.message}; "
                "check the label and field selectors, and that a continue token comes from the "
                "same list"
            )
        elif code == 404 and not (status.details and status.details.name):
            # A collection is never missing: its path is (an unknown group answers plain text
            # "404 page not found"), so say which resource and what to check.
            err.message = (
                f"cannot {verb} {self.describe()} at {self.server}: the server does "
                f"not serve {self.resource.gvr.group_resource()} in {self.resource.api_version} "
                f"({err.message}); check the API group and version, and for a custom resource "
                "that its CustomResourceDefinition is installed"
            )
        err.args = (err.message,)
        return err

    # -------------------------------------------------------------------------- list/watch

    def list(self, options: ListOptions) -> ObjectList[T]:
        """One page; the reflector's pager follows `continue_`. `cancel_requests` ends it."""
        with self._cancellation.scope():
            return self._list(self._options(options))

    def _list(self, options: ListOptions) -> ObjectList[T]:
        resp = self._request(options, watch=False, timeout=LIST_TIMEOUT)
        protobuf = self._protobuf_for(resp)
        if protobuf is not None:
            return cast(ObjectList[T], self._list_streaming(resp, protobuf.decode_list_stream))
        decoder = self.decoder
        if isinstance(decoder, StreamingDecoder):

            def decode_json(chunks: Iterable[bytes]) -> ObjectList[T]:
                page, bad = decoder.decode_list_stream(chunks)
                for err in bad:
                    self.report_bad_object(err)
                return page

            return self._list_streaming(resp, decode_json)
        try:
            data = resp.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            self._raise_if_cancelled("list", e)
            raise ConnectionError(
                f"cannot list {self.describe()}: reading the response from {self.server} failed: {e}"
            ) from e
        finally:
            resp.release_conn()
        try:
            return self.decoder.decode_list(data)
        except ObjectDecodeError:
            raise
        except ValueError as e:
            return self._decode_list_slowly(data, e)

    def _list_streaming(
        self,
        resp: urllib3.BaseHTTPResponse,
        decode: Callable[[Iterable[bytes]], ObjectList[Any]],
    ) -> ObjectList[Any]:
        """A list decoded while it arrives (K8): `decode` cuts its items out of the body and
        decodes each as it completes, so decoding overlaps the server's writing."""
        clean = False

        def chunks() -> Iterator[bytes]:
            try:
                yield from response_chunks(resp)
            except (urllib3.exceptions.HTTPError, OSError) as e:
                self._raise_if_cancelled("list", e)
                raise ConnectionError(
                    f"cannot list {self.describe()}: reading the response from {self.server} "
                    f"failed: {e}"
                ) from e

        try:
            page = decode(chunks())
            clean = True
            return page
        finally:
            if not clean:
                resp.close()  # unread bytes may remain: the connection must not be reused
            resp.release_conn()

    def _protobuf_for(self, resp: urllib3.BaseHTTPResponse) -> ProtobufLazyDecoder[Any] | None:
        """The protobuf decoder if this response is protobuf, else None (JSON)."""
        protobuf = self.protobuf
        if protobuf is None:
            return None
        content_type = resp.headers.get("Content-Type") or ""
        return protobuf if content_type.startswith(PROTOBUF) else None

    def _decode_list_slowly(self, data: bytes, first_error: ValueError) -> ObjectList[T]:
        """A page with undecodable objects: keep the good ones, report and skip the bad ones."""
        decoder = self.decoder
        if not isinstance(decoder, SkippingDecoder):
            raise first_error
        page, bad = decoder.decode_list_skipping(data)
        for err in bad:
            self.report_bad_object(err)
        return page

    def watch(self, options: ListOptions) -> HttpWatch[T]:
        options = self._options(options)
        read = (options.timeout_seconds + WATCH_READ_SLACK) if options.timeout_seconds else None
        if self.watch_idle_timeout is not None:
            read = self.watch_idle_timeout if read is None else min(read, self.watch_idle_timeout)
        answer = WATCH_ANSWER_TIMEOUT if read is None else min(read, WATCH_ANSWER_TIMEOUT)
        timeout = urllib3.Timeout(connect=WATCH_CONNECT_TIMEOUT, read=answer)
        with self._cancellation.scope():  # until the answer comes: then HttpWatch.stop ends it
            resp = self._request(options, watch=True, timeout=timeout)
        if read != answer:
            _set_read_timeout(resp, read)  # for the stream: its events may be minutes apart
        return HttpWatch(resp, self)

    def report_idle_watch(self, err: BaseException) -> None:
        """A watch read nothing for its idle timeout: said once at INFO, then at DEBUG."""
        with self._lock:
            self.idle_reconnects += 1
            first = self.idle_reconnects == 1
        logger.log(
            logging.INFO if first else logging.DEBUG,
            "the watch of %s at %s was silent for %s s (no event, no bookmark); reconnecting "
            "from the last resourceVersion%s (%s)",
            self.describe(),
            self.server,
            f"{self.watch_idle_timeout:g}" if self.watch_idle_timeout else "its read timeout",
            "" if first else f" (idle reconnect #{self.idle_reconnects})",
            err,
        )

    def report_bad_object(self, err: BaseException) -> None:
        """Count, log, and hand to the decode error handler.

        Logged at ERROR once per object and problem (K7, K11): the object's later versions with
        the same bad fields (a drifted CRD object whose status keeps changing) at DEBUG; a
        different problem of the object is news again. What was said is remembered for the
        last `_MAX_LOGGED_BAD_OBJECTS` objects (least recently reported forgotten first).
        Public so a decoder that finds bad objects later (a lazy one) can report through it.
        """
        key, problem = _bad_object_problem(err)
        with self._lock:
            self.decode_errors += 1
            logged = self._logged_bad
            first = logged.get(key, _NOTHING) != problem
            logged[key] = problem
            logged.move_to_end(key)
            if len(logged) > _MAX_LOGGED_BAD_OBJECTS:
                logged.popitem(last=False)
        if not first:
            logger.debug("%s (reported before for this object)", err)
        else:
            # Say what became of it: kept at this version, its bad fields raising when read
            # (K11), or, without an identity to key it by, left out; a lazy object's own
            # message says so itself.
            if isinstance(err, ObjectDecodeError):
                logger.error(
                    "%s; %s",
                    err,
                    "cached at this version: a read of a field that does not validate raises "
                    f"InvalidFieldError, the rest reads; {err.remedy}"
                    if err.cached
                    else "left out: it has no identity to cache it by",
                )
            else:
                logger.error("%s", err)
        handler = self._decode_error_handler
        if handler is not None:
            try:
                handler(err)
            except Exception:
                logger.exception("the decode error handler raised")


def _set_read_timeout(resp: urllib3.BaseHTTPResponse, seconds: float | None) -> None:
    """Read the rest of `resp` with this timeout (None: none) instead of the request's."""
    conn = resp.connection
    sock = getattr(conn, "sock", None)
    if sock is not None:
        sock.settimeout(seconds)


def response_chunks(resp: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """A streaming response's body, decompressed, in pieces as they arrive (a chunked
    body by its chunks, otherwise whatever each socket read returns)."""
    dechunked = raw_chunked_body(resp, _READ_SIZE)
    if dechunked is not None:  # many chunks per read (client/chunked.py)
        yield from dechunked
        return
    supports_chunked = getattr(resp, "supports_chunked_reads", None)
    if resp.chunked and callable(supports_chunked) and supports_chunked():
        yield from resp.read_chunked(None, decode_content=True)
        return
    while True:
        data = resp.read1(_READ_SIZE)
        if not data:
            return
        yield data


class HttpWatch(Generic[T]):
    """One streaming watch response, read line by line; `stop()` ends it from any thread."""

    def __init__(self, resp: urllib3.BaseHTTPResponse, owner: ApiListerWatcher[T]) -> None:
        self._resp = resp
        self._owner = owner
        self._stopped = False
        self._lock = threading.Lock()
        self._released = False
        self._reading = False

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            released, reading = self._released, self._reading
        if released:
            return
        if not reading:
            self._release(clean=False)  # nobody iterates: give the connection back now
            return
        try:
            self._resp.shutdown()  # unblocks the reader in its own thread
        except Exception:
            try:
                self._resp.close()
            except Exception:
                pass

    def is_stopped(self) -> bool:
        return self._stopped

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        with self._lock:
            if self._stopped or self._reading:
                return
            self._reading = True
        owner = self._owner
        protobuf = owner._protobuf_for(self._resp)
        if protobuf is not None:
            decode: Callable[[bytes], WatchEvent[Any]] = protobuf.decode_event
            units = split_frames(response_chunks(self._resp))
            unit_name = "frame"
        else:
            decode = owner.decoder.decode_event
            units = split_lines(response_chunks(self._resp))
            unit_name = "line"
        clean = True
        try:
            for unit in units:
                if self.is_stopped():
                    return
                try:
                    event = decode(unit)
                except ObjectDecodeError as e:
                    owner.report_bad_object(e)
                    if e.kept is None:
                        continue
                    event = e.kept
                except ValueError as e:
                    # Not even an event: skipping it could lose a change; ending the watch
                    # makes the reflector resume from the last resourceVersion.
                    clean = False
                    logger.warning(
                        "undecodable %s in the watch of %s at %s, re-watching: %s",
                        unit_name,
                        owner.describe(),
                        owner.server,
                        e,
                    )
                    return
                if self.is_stopped():
                    return
                yield event
        except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as e:
            clean = False
            if not self.is_stopped():
                owner.report_idle_watch(e)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            # (ValueError: a protobuf stream cut inside a frame, TruncatedFrameError.)
            # A broken stream ends the watch like a clean close (the reflector re-watches);
            # client-go's StreamWatcher does the same.
            clean = False
            if not self.is_stopped():
                logger.info("watch of %s at %s ended: %s", owner.describe(), owner.server, e)
        finally:
            self._release(clean)

    def _release(self, clean: bool) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
            stopped = self._stopped
        resp = self._resp
        if stopped or not clean:
            resp.close()
        resp.release_conn()


# The reason of a Status the server did not send (an answer that is not a Status), by code.
STATUS_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def parse_retry_after(value: str | None) -> float | None:
    """A Retry-After header in seconds; None when absent, negative or an HTTP date."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP date: rare from kube-apiserver; the backoff applies instead
    return seconds if seconds >= 0 else None


__all__ = [
    "MIN_CONNECTION_POOL_SIZE",
    "NO_RETRIES",
    "STATUS_REASONS",
    "ApiListerWatcher",
    "Decoder",
    "HttpWatch",
    "ensure_connection_pool_size",
    "parse_retry_after",
    "query_params",
]
