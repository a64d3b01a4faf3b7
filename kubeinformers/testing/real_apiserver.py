"""RealApiServer: a real kube-apiserver + etcd on loopback for tests, in the style of envtest.

LocalApiServer is fast and scriptable, but it is our own reading of the protocol; this runs the
real thing (the binaries controller-runtime users already have in `KUBEBUILDER_ASSETS`):

    with RealApiServer() as srv:
        core = kubernetes.client.CoreV1Api(srv.api_client())
        srv.restart_apiserver(kill=True)      # a crash, then the same flags again
        srv.compact_etcd()                    # old resourceVersions now answer 410

Binaries are looked up in `$KUBEINFORMERS_APISERVER_ASSETS`, then `$KUBEBUILDER_ASSETS` (a
directory holding `kube-apiserver` and `etcd`), then envtest's default `/usr/local/kubebuilder/bin`,
then, when running from a clone of kubeinformers, `../shared/realk8s/bin/*.xz` beside it
(extracted once into a cache keyed by their content; the same cache `realk8s/start` fills). The server gets a throw-away CA (pure Python, no openssl), an
admin token in `system:masters`, a token for the user `noperms` (authenticated, no RBAC
bindings: 403), RBAC, and the same flags as `realk8s/start` plus a 2 s grace for open watches
on SIGTERM (realk8s's apiserver waits for them to end, so its TERM restarts take 20 s and a KILL).

Both processes run in their own process group and get SIGKILL when the thread that started
them ends (PR_SET_PDEATHSIG), so they die with the test process even when it is SIGKILLed;
they are started from one long-lived thread for that reason. `stop()` (also run at exit)
stops the apiserver, then etcd, and removes the run directory. Tokens are never logged.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import ctypes
import hashlib
import json
import logging
import lzma
import os
import queue
import random
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from kubeinformers.testing.apiserver.tls import serving_certificate, signing_key_pair

log = logging.getLogger("kubeinformers.testing.real_apiserver")

ASSETS_ENV = "KUBEINFORMERS_APISERVER_ASSETS"
KUBEBUILDER_ASSETS_ENV = "KUBEBUILDER_ASSETS"
REQUIRED_BINARIES = ("kube-apiserver", "etcd")
# Where controller-runtime's envtest looks when $KUBEBUILDER_ASSETS is unset.
ENVTEST_DEFAULT_ASSETS = Path("/usr/local/kubebuilder/bin")
# realk8s ships these compressed; the cache key hashes them in this order, as realk8s/start does.
_SHIPPED_BINARIES = ("kube-apiserver", "etcd", "client-go-informer")
_RUN_DIR_PREFIX = "kubeinformers-realk8s-"
_OWNER_FILE = ".kubeinformers-realk8s-owner"
_STOP_GRACE_SECONDS = 20.0
_LOG_TAIL_LINES = 30

USERS = ("admin", "noperms")


class RealApiServerError(RuntimeError):
    """The real server could not be started, restarted or reached."""


class RealApiServerUnavailable(RealApiServerError):
    """No kube-apiserver + etcd binaries were found (tests skip on this)."""


# --- finding the binaries --------------------------------------------------------------------


def _has_binaries(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in REQUIRED_BINARIES)


def _clone_root() -> Path | None:
    """The clone this module runs from; None when kubeinformers is installed (site-packages)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / ".git").exists():
        return root
    return None


def _shared_bin_dirs() -> list[Path]:
    """`../shared/realk8s/bin` beside the clone: the project's own binaries (none when
    installed)."""
    root = _clone_root()
    return [root.parent / "shared" / "realk8s" / "bin"] if root is not None else []


def _cache_root() -> Path:
    if os.environ.get("REALK8S_CACHE"):
        return Path(os.environ["REALK8S_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path(os.environ.get("HOME", "/tmp")) / ".cache")
    return Path(xdg) / "kubeinformers-realk8s"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _extract_shipped(bin_dir: Path) -> Path:
    """Decompress realk8s's `*.xz` binaries once into a content-keyed cache directory.

    Concurrent extractions race safely: each writes a temporary file and renames it into place
    (the key and layout match `realk8s/start`, so the script and this share one cache)."""
    names = [n for n in _SHIPPED_BINARIES if (bin_dir / f"{n}.xz").is_file()]
    listing = "".join(f"{_file_sha256(bin_dir / f'{n}.xz')}  {n}.xz\n" for n in names)
    target = _cache_root() / hashlib.sha256(listing.encode()).hexdigest()[:16]
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        dest = target / name
        if os.access(dest, os.X_OK):
            continue
        log.info("extracting %s into %s", name, target)
        fd, tmp = tempfile.mkstemp(dir=target, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "wb") as out, lzma.open(bin_dir / f"{name}.xz") as src:
                shutil.copyfileobj(src, out, 1 << 20)
            os.chmod(tmp, 0o755)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return target


def missing_assets_message() -> str:
    """Why no binaries were found and how to provide them (one line: tests skip with it)."""
    message = (
        f"no kube-apiserver + etcd binaries: set ${ASSETS_ENV} or ${KUBEBUILDER_ASSETS_ENV} to "
        "a directory holding them (e.g. `export KUBEBUILDER_ASSETS=$(setup-envtest use -p path)`)"
        f", or put them in {ENVTEST_DEFAULT_ASSETS}"
    )
    shared = _shared_bin_dirs()
    if shared:
        message += ", or put realk8s at " + " or ".join(str(d) for d in shared)
    return message


def find_real_apiserver_assets() -> Path | None:
    """The directory holding `kube-apiserver` and `etcd` (extracting realk8s's if needed).

    None when none is found; an environment variable naming a directory without both
    binaries is reported once (WARNING) and skipped."""
    for env in (ASSETS_ENV, KUBEBUILDER_ASSETS_ENV):
        value = os.environ.get(env)
        if not value:
            continue
        if _has_binaries(Path(value)):
            return Path(value)
        log.warning("$%s=%s holds no executable kube-apiserver and etcd; ignoring it", env, value)
    if _has_binaries(ENVTEST_DEFAULT_ASSETS):
        return ENVTEST_DEFAULT_ASSETS
    for bin_dir in _shared_bin_dirs():
        if all((bin_dir / f"{n}.xz").is_file() for n in REQUIRED_BINARIES):
            try:
                return _extract_shipped(bin_dir)
            except OSError as err:
                log.warning("cannot extract %s into %s: %s", bin_dir, _cache_root(), err)
                return None
    return None


# --- processes that die with us ---------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_libc: Any = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - a libc without dlopen(NULL)
        _libc = None


def _die_with_parent(parent_pid: int) -> None:
    """preexec_fn: SIGKILL this child when its parent thread ends (the parent's SIGKILL too)."""
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


@dataclass
class _SpawnRequest:
    argv: list[str]
    log_path: Path
    result: concurrent.futures.Future[subprocess.Popen[bytes]]


class _Spawner:
    """Forks children from one daemon thread that lives as long as the process.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process: a
    server restarted from a short-lived fault-injection thread would otherwise be killed when
    that thread returns."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[_SpawnRequest] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, argv: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="kubeinformers-realk8s-spawner", daemon=True
                )
                self._thread.start()
        request = _SpawnRequest(list(argv), log_path, concurrent.futures.Future())
        self._requests.put(request)
        return request.result.result()

    def _serve(self) -> None:
        parent = os.getpid()
        while True:
            req = self._requests.get()
            try:
                with req.log_path.open("ab") as out:
                    proc = subprocess.Popen(
                        req.argv,
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        preexec_fn=lambda: _die_with_parent(parent),
                    )
            except BaseException as err:
                req.result.set_exception(err)
            else:
                req.result.set_result(proc)


_spawner = _Spawner()
_ports_taken: set[int] = set()
_ports_lock = threading.Lock()


def _free_port() -> int:
    """A loopback port nobody listens on, outside the kernel's ephemeral range (so an outgoing
    connection cannot take it between the pick and the server's listen)."""
    lo, hi = 10000, 32767
    try:
        elo, ehi = (
            int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        )
        if elo > lo + 2000:
            hi = elo - 1
        elif ehi < 63000:
            lo, hi = ehi + 1, 65000
    except (OSError, ValueError):
        pass
    with _ports_lock:
        for _ in range(200):
            port = random.randint(lo, hi)
            if port in _ports_taken:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _ports_taken.add(port)
            return port
    raise RealApiServerError("no free loopback port found")


def _terminate(proc: subprocess.Popen[bytes], name: str, sig: signal.Signals) -> None:
    """Signal a child, wait for it; SIGKILL after the grace period."""
    if proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(_STOP_GRACE_SECONDS)
        return
    except subprocess.TimeoutExpired:
        log.warning(
            "%s (pid %d) ignored %s for %.0f s; killing it",
            name,
            proc.pid,
            sig.name,
            _STOP_GRACE_SECONDS,
        )
    proc.kill()
    proc.wait(_STOP_GRACE_SECONDS)


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"(no log at {path})"
    return f"----- last {len(text)} lines of {path.name} -----\n" + "\n".join(text)


def _sweep_orphaned_run_dirs() -> None:
    """Remove run directories of test processes that died by SIGKILL (their servers died with
    them through PR_SET_PDEATHSIG; only the directory was left)."""
    for run_dir in Path(tempfile.gettempdir()).glob(f"{_RUN_DIR_PREFIX}*"):
        try:
            owner = int((run_dir / _OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(run_dir, ignore_errors=True)
        except PermissionError:
            continue


# --- the server --------------------------------------------------------------------------------


class RealApiServer:
    """A real etcd + kube-apiserver on free loopback ports; a context manager.

    assets: directory with `kube-apiserver` and `etcd` (default: `find_real_apiserver_assets()`).
    extra_apiserver_args: appended to the kube-apiserver flags (e.g. `--feature-gates=...`).
    ready_timeout: seconds to wait for etcd's /health and the apiserver's /readyz.
    """

    def __init__(
        self,
        assets: Path | str | None = None,
        *,
        extra_apiserver_args: Sequence[str] = (),
        ready_timeout: float = 90.0,
    ) -> None:
        self._assets = Path(assets) if assets is not None else None
        self._extra = list(extra_apiserver_args)
        self.ready_timeout = ready_timeout
        self._dir: Path | None = None
        self._tokens: dict[str, str] = {}
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self._apiserver_argv: list[str] = []
        self._server = ""
        self._etcd_url = ""
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"RealApiServer(server={self._server or None!r}, dir={self._dir})"

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> RealApiServer:
        with self._lock:
            if self._dir is not None:
                raise RealApiServerError("RealApiServer is already started")
            if self._assets is None:
                self._assets = find_real_apiserver_assets()
                if self._assets is None:
                    raise RealApiServerUnavailable(missing_assets_message())
            elif not _has_binaries(self._assets):
                raise RealApiServerUnavailable(
                    f"{self._assets} holds no executable kube-apiserver and etcd"
                )
            _sweep_orphaned_run_dirs()
            self._dir = Path(tempfile.mkdtemp(prefix=_RUN_DIR_PREFIX))
            atexit.register(self.stop)
            try:
                (self._dir / _OWNER_FILE).write_text(f"{os.getpid()}\n")
                self._write_pki()
                self._start_etcd()
                self._start_apiserver()
                self._write_kubeconfigs()
            except BaseException:
                self.stop()
                raise
            log.info(
                "real kube-apiserver ready at %s (etcd %s; pids %d, %d)",
                self._server,
                self._etcd_url,
                self.apiserver_pid,
                self.etcd_pid,
            )
            return self

    def stop(self) -> None:
        """Stop the apiserver, then etcd (SIGTERM; SIGKILL after 20 s); remove the run dir."""
        with self._lock:
            if self._apiserver is not None:
                _terminate(self._apiserver, "kube-apiserver", signal.SIGTERM)
                self._apiserver = None
            if self._etcd is not None:
                _terminate(self._etcd, "etcd", signal.SIGTERM)
                self._etcd = None
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
            self._tokens.clear()
            atexit.unregister(self.stop)

    def __enter__(self) -> RealApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- what clients need ------------------------------------------------------------------------

    def _run_dir(self) -> Path:
        if self._dir is None:
            raise RealApiServerError("RealApiServer is not started")
        return self._dir

    @property
    def dir(self) -> Path:
        """The run directory (PKI, kubeconfigs, logs); removed by stop()."""
        return self._run_dir()

    @property
    def assets(self) -> Path:
        """The directory holding the binaries (client-go-informer too, when realk8s ships it)."""
        if self._assets is None:
            raise RealApiServerError("RealApiServer is not started")
        return self._assets

    @property
    def server(self) -> str:
        """The apiserver's URL, https://127.0.0.1:PORT."""
        self._run_dir()
        return self._server

    @property
    def etcd_url(self) -> str:
        """etcd's client URL, http://127.0.0.1:PORT."""
        self._run_dir()
        return self._etcd_url

    @property
    def ca_file(self) -> Path:
        """The CA certificate the serving certificate chains to."""
        return self._run_dir() / "pki" / "ca.crt"

    @property
    def kubeconfig(self) -> Path:
        """An admin kubeconfig (user `admin`, group `system:masters`)."""
        return self._run_dir() / "kubeconfig"

    @property
    def kubeconfig_noperms(self) -> Path:
        """A kubeconfig for user `noperms`: authenticated, no RBAC bindings (403)."""
        return self._run_dir() / "kubeconfig-noperms"

    @property
    def apiserver_pid(self) -> int:
        if self._apiserver is None:
            raise RealApiServerError("kube-apiserver is not running")
        return self._apiserver.pid

    @property
    def etcd_pid(self) -> int:
        if self._etcd is None:
            raise RealApiServerError("etcd is not running")
        return self._etcd.pid

    def configuration(self, user: str = "admin") -> Any:
        """A `kubernetes.client.Configuration` for `user` ("admin" or "noperms"), TLS verified."""
        from kubernetes import client

        if user not in USERS:
            raise ValueError(f"user must be one of {USERS}, not {user!r}")
        self._run_dir()
        cfg = client.Configuration()
        cfg.host = self._server
        cfg.ssl_ca_cert = str(self.ca_file)
        cfg.verify_ssl = True
        cfg.api_key = {"authorization": self._tokens[user]}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        return cfg

    def api_client(self, user: str = "admin") -> Any:
        """A new `kubernetes.client.ApiClient` for `user` ("admin" or "noperms")."""
        from kubernetes import client

        return client.ApiClient(self.configuration(user))

    # --- faults ---------------------------------------------------------------------------------

    def restart_apiserver(self, kill: bool = False, down_seconds: float = 0.0) -> None:
        """Stop the apiserver (SIGTERM, or SIGKILL as a crash), stay down `down_seconds`, start
        it again with the same flags and port, and wait for /readyz. etcd keeps running."""
        with self._lock:
            self._run_dir()
            if self._apiserver is not None:
                _terminate(
                    self._apiserver, "kube-apiserver", signal.SIGKILL if kill else signal.SIGTERM
                )
                self._apiserver = None
            if down_seconds > 0:
                time.sleep(down_seconds)
            self._launch_apiserver()
            self._wait_ready()
            log.info(
                "kube-apiserver restarted (%s) at %s",
                "killed" if kill else "terminated",
                self._server,
            )

    def etcd_revision(self) -> int:
        """etcd's current revision: the newest resourceVersion the apiserver can have handed out."""
        answer = self._etcd_post(
            "/v3/kv/range", {"key": "Lw==", "range_end": "MA==", "count_only": True}
        )
        return int(answer["header"]["revision"])

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (physically); returns that revision.

        Older resourceVersions then fail in etcd; the apiserver's watch cache may still serve
        recent ones until it falls behind (or restarts), after which they answer 410 Gone."""
        revision = self.etcd_revision()
        self._etcd_post("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    # --- internals ----------------------------------------------------------------------------

    def _etcd_post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.etcd_url + path, data=json.dumps(body).encode(), method="POST"
        )
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    def _write_secret(self, path: Path, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)

    def _write_pki(self) -> None:
        pki = self._run_dir() / "pki"
        pki.mkdir(mode=0o700)
        cert = serving_certificate()
        signing = signing_key_pair()
        (pki / "ca.crt").write_text(cert.ca_pem)
        (pki / "serving.crt").write_text(cert.cert_pem)
        self._write_secret(pki / "serving.key", cert.key_pem)
        self._write_secret(pki / "sa.key", signing.private_pem)
        (pki / "sa.pub").write_text(signing.public_pem)
        self._tokens = {user: secrets.token_hex(24) for user in USERS}
        self._write_secret(
            pki / "tokens.csv",
            f"{self._tokens['admin']},admin,admin-uid,system:masters\n"
            f"{self._tokens['noperms']},noperms,noperms-uid\n",
        )

    def _binary(self, name: str) -> str:
        return str(self.assets / name)

    def _start_etcd(self) -> None:
        run = self._run_dir()
        log_path = run / "etcd.log"
        for attempt in range(3):
            url = f"http://127.0.0.1:{_free_port()}"
            argv = [
                self._binary("etcd"),
                "--data-dir", str(run / "etcd-data"),
                "--listen-client-urls", url,
                "--advertise-client-urls", url,
                "--listen-peer-urls", f"http://127.0.0.1:{_free_port()}",
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes", os.environ.get("REALK8S_ETCD_QUOTA_BYTES", "8589934592"),
            ]  # fmt: skip
            self._etcd = _spawner.popen(argv, log_path)
            self._etcd_url = url
            if self._wait_etcd_healthy():
                return
            _terminate(self._etcd, "etcd", signal.SIGKILL)
            self._etcd = None
            if attempt < 2 and "address already in use" in _tail(log_path):
                log.info("etcd's port was taken; retrying with other ports")
                continue
            break
        raise RealApiServerError(
            f"etcd did not become healthy at {self._etcd_url} within {self.ready_timeout:.0f} s\n"
            + _tail(log_path)
        )

    def _wait_etcd_healthy(self) -> bool:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            assert self._etcd is not None
            if self._etcd.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self._etcd_url + "/health", timeout=2) as response:
                    if json.loads(response.read()).get("health") == "true":
                        return True
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        return False

    def _start_apiserver(self) -> None:
        run = self._run_dir()
        pki = run / "pki"
        for attempt in range(3):
            port = _free_port()
            self._server = f"https://127.0.0.1:{port}"
            self._apiserver_argv = [
                self._binary("kube-apiserver"),
                f"--etcd-servers={self._etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={port}",
                f"--tls-cert-file={pki / 'serving.crt'}",
                f"--tls-private-key-file={pki / 'serving.key'}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--disable-admission-plugins=ServiceAccount",
                "--endpoint-reconciler-type=none",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-cluster-ip-range=10.96.0.0/16",
                f"--cert-dir={run / 'apiserver-certs'}",
                "--enable-priority-and-fairness=false",
                "--max-requests-inflight=1000",
                "--max-mutating-requests-inflight=500",
                # Without it a SIGTERM waits for open watches to end by themselves (minutes):
                # restart_apiserver() would fall back to SIGKILL after 20 s every time.
                "--shutdown-watch-termination-grace-period=2s",
                "--v=1",
                *self._extra,
            ]
            (run / "apiserver.cmd").write_text(" ".join(self._apiserver_argv) + "\n")
            self._launch_apiserver()
            try:
                self._wait_ready()
                return
            except RealApiServerError:
                taken = "address already in use" in _tail(run / "apiserver.log")
                if attempt < 2 and taken:
                    assert self._apiserver is not None
                    _terminate(self._apiserver, "kube-apiserver", signal.SIGKILL)
                    self._apiserver = None
                    log.info("kube-apiserver's port was taken; retrying with another port")
                    continue
                raise

    def _launch_apiserver(self) -> None:
        self._apiserver = _spawner.popen(self._apiserver_argv, self._run_dir() / "apiserver.log")

    def _wait_ready(self) -> None:
        """Poll /readyz (admin token, CA verified) until "ok", the timeout, or the process exits."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        request = urllib.request.Request(self._server + "/readyz")
        request.add_header("Authorization", f"Bearer {self._tokens['admin']}")
        deadline = time.monotonic() + self.ready_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            assert self._apiserver is not None
            code = self._apiserver.poll()
            if code is not None:
                raise RealApiServerError(
                    f"kube-apiserver exited with code {code} before becoming ready at "
                    f"{self._server}\n" + _tail(self._run_dir() / "apiserver.log")
                )
            try:
                with urllib.request.urlopen(request, timeout=5, context=ctx) as response:
                    if response.read().strip() == b"ok":
                        return
            except urllib.error.HTTPError as err:
                last = f"HTTP {err.code}"
            except (OSError, ValueError) as err:
                last = str(err)
            time.sleep(0.25)
        raise RealApiServerError(
            f"kube-apiserver not ready at {self._server} after {self.ready_timeout:.0f} s "
            f"(last /readyz: {last})\n" + _tail(self._run_dir() / "apiserver.log")
        )

    def _write_kubeconfigs(self) -> None:
        run = self._run_dir()
        for user, name in (("admin", "kubeconfig"), ("noperms", "kubeconfig-noperms")):
            config = {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "realk8s",
                        "cluster": {
                            "server": self._server,
                            "certificate-authority": str(self.ca_file),
                        },
                    }
                ],
                "users": [{"name": user, "user": {"token": self._tokens[user]}}],
                "contexts": [{"name": "realk8s", "context": {"cluster": "realk8s", "user": user}}],
                "current-context": "realk8s",
            }
            self._write_secret(run / name, yaml.safe_dump(config, sort_keys=False))
