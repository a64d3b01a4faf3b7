"""Credentials that change while informers run: rotated token files, exec plugins (issue 27).

The `kubernetes` package loads credentials once: a kubeconfig's `tokenFile:` is read when the
kubeconfig is loaded and never again, and the in-cluster loader re-reads the service-account
token only once a minute. Its refresh hook (`Configuration.refresh_api_key_hook`, run before
every request) also writes the kubeconfig's (or the cluster's) host, CA and client
certificate back into the configuration, so a user who changes `configuration.host` after
loading is silently sent to the old server.

`credentials_for(configuration)` wraps that hook, once per configuration (every user of the
configuration benefits, the `kubernetes` package's own API objects too):

- a token file (kubeconfig `tokenFile:`, the in-cluster projected token
  `/var/run/secrets/kubernetes.io/serviceaccount/token`) is re-read before a request whenever
  it changed (size, modification time or inode: one `stat` per request), and at once after a
  401, so a rotation costs at most the one request that was refused;
- an exec plugin is run again after a 401 (the loader already runs it again when its
  credential expires);
- the connection settings the user set on the configuration (host, CA, client certificate,
  TLS server name, proxy) are handed to the loader before its hook runs, so the hook keeps
  them instead of restoring the kubeconfig's.

A refused request is reported once per episode (`refused`: a WARNING saying what is re-read),
repeats at DEBUG (again at WARNING every 60 s while it lasts), and the first accepted request
after it says so at INFO (`accepted`). Tokens are never logged.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["SERVICE_ACCOUNT_TOKEN_FILE", "Credentials", "credentials_for"]

SERVICE_ACCOUNT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
REPEAT_AFTER_SECONDS = 60.0
# The configuration keys the kubernetes loaders write back on every request.
_CONNECTION_KEYS = (
    "host",
    "ssl_ca_cert",
    "cert_file",
    "key_file",
    "verify_ssl",
    "tls_server_name",
    "proxy",
)

logger = logging.getLogger("kubeinformers.credentials")

_lock = threading.Lock()
_by_configuration: weakref.WeakKeyDictionary[Any, Credentials] = weakref.WeakKeyDictionary()


def credentials_for(configuration: Any) -> Credentials:
    """The `Credentials` of a `kubernetes.client.Configuration` (made, and its refresh hook
    wrapped, on first use; the same object afterwards)."""
    with _lock:
        found = _by_configuration.get(configuration)
        if found is None:
            hook = getattr(configuration, "refresh_api_key_hook", None)
            shared = getattr(hook, "kubeinformers_credentials", None)
            found = shared if isinstance(shared, Credentials) else Credentials(configuration)
            _by_configuration[configuration] = found
        return found


def _loader_of(hook: object) -> Any:
    """The kubernetes loader a refresh hook closes over (its `self`), or None."""
    code = getattr(hook, "__code__", None)
    closure = getattr(hook, "__closure__", None)
    if code is None or not closure:
        return None
    for name, cell in zip(code.co_freevars, closure, strict=False):
        if name == "self":
            try:
                return cell.cell_contents
            except ValueError:
                return None
    return None


def _file_state(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class Credentials:
    """What refreshes one configuration's credentials, and how a refusal is reported."""

    def __init__(self, configuration: Any, *, clock: Callable[[], float] = time.monotonic):
        self.configuration = configuration
        self._clock = clock
        self._lock = threading.Lock()
        self._token_file: str | None = None
        self._token_prefix = "Bearer "
        self._file_state: tuple[int, int, int] | None = None
        self._exec: Any = None  # the kubeconfig loader whose exec plugin can be run again
        self._loader: Any = None
        self._refused_since: float | None = None
        self._refused = 0
        self._last_warning = 0.0
        self.source = "static credentials of the configuration"
        hook = getattr(configuration, "refresh_api_key_hook", None)
        loader = _loader_of(hook)
        if hook is None or loader is None:
            return
        self._loader = loader
        if hasattr(loader, "_token_filename"):  # kubernetes.config.incluster_config
            self._token_file = str(loader._token_filename)
            self._token_prefix = "bearer "
            self.source = f"the service account token file {self._token_file}"
        else:
            user = getattr(loader, "_user", None)
            token_file = _safe_get(user, "tokenFile")
            if token_file and _safe_get(user, "auth-provider") is None:
                base = loader._get_base_path(getattr(user, "path", None)) or ""
                self._token_file = os.path.join(base, str(token_file))
                self.source = f"the kubeconfig's token file {self._token_file}"
            elif _safe_get(user, "exec") is not None:
                self._exec = loader
                command = _safe_get(_safe_get(user, "exec"), "command") or "?"
                self.source = f"the kubeconfig's exec plugin {command!r}"
        if self._token_file is not None:
            # Read now, trimmed as client-go trims it: the kubernetes package keeps a trailing
            # newline, which no HTTP header may carry.
            self._read_token_file(_file_state(self._token_file))
        credentials = self
        original = [hook]

        def refresh_api_key_hook(cfg: Any) -> None:
            credentials._before_hook(cfg)
            original[0](cfg)
            # The loaders' hook installs a fresh copy of itself each time it runs: keep ours
            # in front of it.
            current = getattr(cfg, "refresh_api_key_hook", None)
            if current is not refresh_api_key_hook and current is not None:
                original[0] = current
                cfg.refresh_api_key_hook = refresh_api_key_hook

        # A copy of the configuration (copy.deepcopy keeps functions) shares the loader: it
        # finds these credentials through the hook.
        refresh_api_key_hook.kubeinformers_credentials = self  # type: ignore[attr-defined]
        configuration.refresh_api_key_hook = refresh_api_key_hook

    # -- before every request (the wrapped hook) -----------------------------------------------

    def _before_hook(self, cfg: Any) -> None:
        loader = self._loader
        # The user's connection settings win over the loader's (issue 27: a changed host).
        for key in _CONNECTION_KEYS:
            if key in loader.__dict__:
                value = getattr(cfg, key, None)
                if getattr(loader, key) != value:
                    setattr(loader, key, value)
        if self._token_file is not None:
            state = _file_state(self._token_file)
            if state is not None and state != self._file_state:
                self._read_token_file(state)

    def _read_token_file(self, state: tuple[int, int, int] | None) -> bool:
        """Load the token file into the loader; True if the token changed."""
        path = self._token_file
        assert path is not None
        try:
            with open(path, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            logger.warning("cannot read the token file %s: %s; keeping the last token", path, e)
            return False
        with self._lock:
            self._file_state = state
        if not token:
            logger.warning("the token file %s is empty; keeping the last token", path)
            return False
        value = self._token_prefix + token
        loader = self._loader
        if getattr(loader, "token", None) == value:
            return False
        loader.token = value
        if hasattr(loader, "token_expires_at"):  # in-cluster: its own re-read timer
            import datetime

            loader.token_expires_at = datetime.datetime.now() + datetime.timedelta(minutes=1)
        return True  # the loader's hook copies it into the configuration (api_key)

    def refreshable(self) -> bool:
        """A token file or an exec plugin: a refusal may be cured by reading it again."""
        return self._token_file is not None or self._exec is not None

    def changed(self) -> bool:
        """The token file changed since it was last read (False without a token file)."""
        path = self._token_file
        if path is None:
            return False
        state = _file_state(path)
        return state is not None and state != self._file_state

    def wait_for_change(self, stop: threading.Event, timeout: float) -> bool:
        """Wait up to `timeout` seconds, less if the token file changes or `stop` is set
        (polled every quarter second); True if it changed."""
        if self._token_file is None:
            stop.wait(timeout)
            return False
        deadline = self._clock() + timeout
        while not stop.is_set():
            if self.changed():
                return True
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False
            stop.wait(min(0.25, remaining))
        return False

    # -- a 401 and what follows ----------------------------------------------------------------

    def refused(self, what: str) -> bool:
        """A request (`what`: "list pods in all namespaces at <server>") was answered 401: re-read the token file (or run the exec plugin
        again) now. True if that gave new credentials (retry at once); the refusal is logged
        once per episode."""
        renewed = False
        how = "nothing to re-read: the credentials are fixed in the configuration"
        if self._token_file is not None:
            how = f"re-reading the token from {self._token_file}"
            renewed = self._read_token_file(_file_state(self._token_file))
        elif self._exec is not None:
            how = f"running {self.source} again"
            renewed = self._rerun_exec()
        now = self._clock()
        with self._lock:
            self._refused += 1
            first = self._refused_since is None
            if first:
                self._refused_since = self._last_warning = now
            repeat = not first and now - self._last_warning >= REPEAT_AFTER_SECONDS
            if repeat:
                self._last_warning = now
            refused_for = now - (self._refused_since or now)
        if first:
            # Static credentials will not heal by themselves: an ERROR. A token file or exec
            # plugin may be in the middle of a rotation: a WARNING (repeated while it lasts).
            logger.log(
                logging.WARNING if self.refreshable() else logging.ERROR,
                "credentials refused (401): cannot %s; %s%s",
                what,
                how,
                ": new credentials, retrying at once"
                if renewed
                else (
                    ": unchanged, retrying with backoff until they change"
                    if self.refreshable()
                    else "; update them (kubeconfig) or check the server's authentication"
                ),
            )
        else:
            logger.log(
                logging.WARNING if repeat else logging.DEBUG,
                "credentials still refused (401): cannot %s after %.0f s (%d refused requests); %s",
                what,
                refused_for,
                self._refused,
                how,
            )
        return renewed

    def accepted(self, what: str) -> None:
        """A request succeeded: if credentials were refused before, say they are accepted."""
        with self._lock:
            since: float | None = self._refused_since
            self._refused_since = None
            refused, self._refused = self._refused, 0
        if since is None:  # another thread said it already
            return
        logger.info(
            "credentials accepted again: %s (%s), after %d refused request%s over %.1f s",
            what,
            self.source,
            refused,
            "" if refused == 1 else "s",
            self._clock() - since,
        )

    @property
    def refusing(self) -> bool:
        """The last request was refused and none has been accepted since."""
        return self._refused_since is not None

    def _rerun_exec(self) -> bool:
        loader = self._exec
        before = getattr(loader, "token", None)
        try:
            loader._load_authentication()
        except Exception as e:  # the plugin's own failure: say it, keep the old credentials
            logger.warning("running %s again failed: %s", self.source, e)
            return False
        after = getattr(loader, "token", None)
        return after is not None and after != before


def _safe_get(node: Any, key: str) -> Any:
    """`node[key]` of a kubernetes ConfigNode (or mapping), None when absent."""
    if node is None:
        return None
    getter = getattr(node, "safe_get", None)
    if callable(getter):
        return getter(key)
    if isinstance(node, dict):
        return node.get(key)
    return None
