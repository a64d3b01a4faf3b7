"""Runs the soak: informers + handlers against a server, a writer, a fault injector.

The server is LocalApiServer with its protocol-level fault hooks (faults.py), or a real
kube-apiserver + etcd (`server="real"`, RealApiServer) with the faults a real cluster has:
restarts, crashes, compactions, dropped or refused connections through a TCP proxy, a
rotated token, and once, mid-run, an incompatible upgrade of the Widget CRD ("upgrade-crd",
issue 27) after which Widgets are written in the new shape (real_faults.py).

Six informers over HTTPS with a bearer token: pods (all namespaces, generated factory),
configmaps restricted to one namespace, the demo CRD's widgets selected by label (generated
from crds/ into examples/informers), configmaps metadata-only (MetadataSharedInformerFactory),
widgets again through the ordered queue (RealFIFO) with eager decoding, and pods again through
the atomic queue (RealFIFO in atomic mode, C-3). Three handlers
each: a plain one, one that raises when armed, one that blocks for seconds when armed.

Between faults the caches are sampled for phantoms (a key/resourceVersion the server never
had); every `checkpoint_every` faults the writer pauses, timed faults are undone, and every
cache and every handler's replayed view must converge to the server's state for its
selection (keys and resourceVersions). Handlers check their own callbacks continuously
(recorder.py). After "upgrade-crd", every checkpoint also reads every cached Widget of both
Widget informers (lazy and eager): the server's labels; `spec.size` reads, a value the CRD
added as UnknownEnumValue (K12); a field the server sent in a new type (`replicas` a string,
`parts` a map or items pruned) raises InvalidFieldError naming the object and the field while
the rest reads (K11); the informers healthy. At the end: everything shut down, no thread and
no socket of ours left, no bearer token in any log record, and each drifted Widget version
reported by one ERROR at most, without a traceback (K7, K11).
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import random
import re
import socket
import sys
import tempfile
import threading
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeinformers.runtime.api.keys import meta_namespace_key, object_resource_version
from kubeinformers.runtime.api.listwatch import ListOptions
from kubeinformers.runtime.api.model import UnknownEnumValue
from kubeinformers.runtime.cache.dynamic import MetadataSharedInformerFactory
from kubeinformers.runtime.cache.factory import SharedInformerFactory as RuntimeFactory
from kubeinformers.runtime.cache.informer import SharedIndexInformer
from kubeinformers.runtime.client.transport import ApiListerWatcher
from kubeinformers.runtime.codec.drift import InvalidFieldError
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.local_api_server import LocalApiServer
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.soak.faults import Injector
from tests.soak.real_faults import RealInjector, TokenRotation
from tests.soak.recorder import Recorder
from tests.soak.world import (
    CONFIGMAPS,
    NEW_SIZE,
    PODS,
    WIDGET_SELECTOR,
    WIDGETS,
    Selection,
    World,
    Writer,
    key_of,
)
from tests.support.cluster import Cluster, RealCluster
from tests.support.sa_tokens import token_file_kubeconfig
from tests.support.tcp_proxy import TcpProxy

TOKEN = "soak-bearer-t0ken-never-logged"
DEFAULT_SEED = 20260522


@dataclass
class SoakConfig:
    seed: int = DEFAULT_SEED
    faults: int = 1000
    checkpoint_every: int = 50
    interval: tuple[float, float] = (0.03, 0.25)  # seconds between two faults
    converge_timeout: float = 60.0
    progress: Callable[[str], None] | None = None
    server: str = "local"  # "local" (LocalApiServer) or "real" (RealApiServer)
    real: RealApiServer | None = None  # a started real server to use (else one is started)
    # The real server's "upgrade-crd" fault replaces this fault number's (None: the middle of
    # the run, 0: never); LocalApiServer does not validate CRD schemas, so it has none.
    upgrade_crd_at: int | None = None


@dataclass
class Watched:
    """One informer, what it should hold, and its handlers."""

    name: str
    informer: SharedIndexInformer[Any]
    selection: Selection
    recorders: list[Recorder]


@dataclass
class SoakResult:
    seed: int
    server: str = "local"
    faults: int = 0
    survived: int = 0
    objects_compared: int = 0
    lost: int = 0
    phantom: int = 0
    stale_updates: int = 0
    bad_callbacks: int = 0
    tombstones: int = 0
    writes: int = 0
    handler_errors: int = 0
    # After "upgrade-crd": cached Widgets checked whose server version is in the new shape
    # (their drifted fields raised InvalidFieldError, the rest read: K11, K12).
    drifted_checked: int = 0
    duration: float = 0.0
    fault_counts: dict[str, int] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations and self.survived == self.faults

    def summary(self) -> str:
        return (
            f"soak: server={self.server} seed={self.seed} faults={self.faults} "
            f"survived={self.survived} "
            f"objects_compared={self.objects_compared} lost={self.lost} phantom={self.phantom} "
            f"stale_updates={self.stale_updates} bad_callbacks={self.bad_callbacks} "
            f"tombstones={self.tombstones} writes={self.writes} "
            f"handler_errors_injected={self.handler_errors} "
            f"drifted_checked={self.drifted_checked} "
            f"duration={self.duration:.1f}s"
        )


# --- leaks -------------------------------------------------------------------------------------


def open_sockets() -> set[str]:
    """The sockets this process holds ('socket:[inode]' links in /proc/self/fd)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def describe_socket(link: str) -> str:
    """'socket:[inode]' with its TCP addresses or unix path, from /proc/net."""
    inode = link[len("socket:[") : -1]
    for table in ("tcp", "tcp6", "unix", "udp", "udp6"):
        try:
            lines = open(f"/proc/net/{table}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if table == "unix" and len(cols) >= 7 and cols[6] == inode:
                return f"{link} unix {cols[7] if len(cols) > 7 else '(unnamed)'}"
            if table != "unix" and len(cols) > 9 and cols[9] == inode:
                local, remote = (_addr(c) for c in cols[1:3])
                return f"{link} {table} {local} -> {remote} state {cols[3]}"
    return link


def _addr(hex_addr: str) -> str:
    host, port = hex_addr.split(":")
    return f"{host}:{int(port, 16)}"


def leaked(
    threads_before: set[threading.Thread], sockets_before: set[str], timeout: float = 10.0
) -> list[str]:
    """Threads and sockets opened since the baseline and still there after `timeout`."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while True:
        gc.collect()  # a socket in a reference cycle (an exception's traceback) is garbage
        threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        sockets = open_sockets() - sockets_before
        if (not threads and not sockets) or time.monotonic() > deadline:
            break
        tick.wait(0.05)
    problems = [f"thread left running: {t.name}" for t in threads]
    for link in sorted(sockets):
        problems.append(f"socket left open: {describe_socket(link)}; {socket_holders(link)}")
    return problems


def _fds_of(link: str) -> set[int]:
    """This process' file descriptors open on `link` ('socket:[inode]')."""
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == link:
                fds.add(int(fd))
        except OSError:
            continue
    return fds


def _name(obj: object) -> str:
    """A short description of an object on a referrer chain: its type, and what names it."""
    kind = type(obj)
    if isinstance(obj, types.FrameType):
        code = obj.f_code
        text = f"frame {code.co_qualname} ({Path(code.co_filename).name}:{obj.f_lineno})"
    elif isinstance(obj, types.GeneratorType):
        state = "finished" if obj.gi_frame is None else "suspended"
        text = f"generator {obj.gi_code.co_qualname} ({'running' if obj.gi_running else state})"
    elif isinstance(obj, types.FunctionType):
        text = f"function {obj.__qualname__}"
    elif isinstance(obj, types.TracebackType):
        text = f"traceback of {obj.tb_frame.f_code.co_qualname}"
    elif isinstance(obj, BaseException):
        text = f"exception {kind.__qualname__}: {obj}"
    elif isinstance(obj, types.ModuleType):
        text = f"module {obj.__name__}"
    elif isinstance(obj, dict):
        text = f"dict of {len(obj)} ({', '.join(str(k)[:40] for k in list(obj)[:4])})"
    elif isinstance(obj, (list, tuple, set)):
        text = f"{kind.__name__} of {len(obj)}"
    else:
        text = f"{kind.__module__}.{kind.__qualname__}"
    return text if len(text) <= 120 else text[:117] + "..."


def _named_class(obj: object) -> bool:
    """A class its module names (alive as long as the module), not one made at run time."""
    if not isinstance(obj, type):
        return False
    found: object = sys.modules.get(obj.__module__)
    for part in obj.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is obj


def socket_holders(link: str, max_depth: int = 40, max_level: int = 2000) -> str:
    """What keeps the socket of `link` open: the chain of referrers from its Python socket
    object to something alive for sure (a module, a class its module names, a frame a thread
    runs), found a level at a time (one gc.get_referrers pass over the heap per level), else
    to the farthest object reached.

    What the collector does not see, neither does this: the local variables of a running
    function (CPython keeps them out of its frame object), references held in C, and objects
    gc.freeze moved to the permanent generation (K16; their count is given).
    """
    frozen = gc.get_freeze_count()
    unseen = f"; {frozen} objects frozen by gc.freeze" if frozen else ""
    fds = _fds_of(link)
    # Every object met, breadth-first; parent[i] is the index of what nodes[i] refers to.
    nodes: list[object] = []
    for obj in gc.get_objects():
        if issubclass(type(obj), socket.socket) and not getattr(obj, "_closed", True):
            if obj.fileno() in fds:
                nodes.append(obj)
    del obj
    if not nodes:
        return f"no socket object of its fd among the collector's objects{unseen}"
    running: set[int] = set()
    for top in sys._current_frames().values():
        frame: types.FrameType | None = top
        while frame is not None:
            running.add(id(frame))
            frame = frame.f_back
    del top
    parent = [-1] * len(nodes)
    index = {id(n): i for i, n in enumerate(nodes)}
    level = list(range(len(nodes)))
    own = socket_holders.__code__
    root = -1
    for _ in range(max_depth):
        at_level = {id(nodes[i]): i for i in level}
        targets = tuple(nodes[i] for i in level)
        referrers = gc.get_referrers(*targets)
        mine = {id(nodes), id(targets), id(referrers)}
        found: list[int] = []
        ref: object = None
        for ref in referrers:
            if id(ref) in index or id(ref) in mine:
                continue
            if isinstance(ref, types.FrameType) and ref.f_code is own:
                continue
            held = [at_level[id(x)] for x in gc.get_referents(ref) if id(x) in at_level]
            if not held:
                continue
            index[id(ref)] = len(nodes)
            nodes.append(ref)
            parent.append(held[0])
            found.append(len(nodes) - 1)
            if isinstance(ref, types.ModuleType) or _named_class(ref) or id(ref) in running:
                root = len(nodes) - 1
                break
        del targets, referrers, ref
        if root >= 0 or not found:
            break
        level = found[:max_level]
    # The chain to what is alive, or else to the farthest object reached.
    end = root if root >= 0 else len(nodes) - 1
    chain = []
    while end >= 0:
        chain.append(_name(nodes[end]))
        end = parent[end]
    text = "held by: " + " <- ".join(reversed(chain))
    if root >= 0:
        return text
    if found:
        return f"{text} <- ... (no module, named class or running frame within {max_depth} levels)"
    return (
        f"{text} (nothing the collector sees holds the last: a local variable of a running "
        f"function, a reference from C, an object frozen by gc.freeze, or garbage{unseen})"
    )


# --- logging -------------------------------------------------------------------------------------


class _LogScan(logging.Handler):
    """Counts the runtime's log records and finds any that carries the bearer token."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.secrets = secrets  # grows while the soak runs (rotated tokens)
        self.records = 0
        self.leaks: list[str] = []
        # (logger, message, has a traceback) of every ERROR about a Widget that does not
        # decode or validate ("upgrade-crd")
        self.widget_errors: list[tuple[str, str, bool]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records += 1
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + str(record.exc_info[1])
        if any(secret in text for secret in self.secrets) and len(self.leaks) < 5:
            self.leaks.append(f"{record.name}: {text[:200]}")
        decode_report = "cannot decode" in text or "validate" in text
        if record.levelno >= logging.ERROR and "Widget" in text and decode_report:
            self.widget_errors.append((record.name, text, record.exc_info is not None))


# The runtime's loggers and the HTTP library's (its records name the URLs it retried).
SCANNED_LOGGERS = ("kubeinformers", "urllib3")


@contextmanager
def _captured_logs(secrets: list[str], quiet: bool) -> Iterator[_LogScan]:
    """Scan every record of SCANNED_LOGGERS; with `quiet`, keep them from other handlers.

    Quiet also matters for leak checking: a handler that keeps records (pytest's log
    capture) keeps urllib3's "Retrying after connection broken by <error>" records, whose
    error's traceback holds the socket of the broken connection open.
    """
    scan = _LogScan(secrets)
    loggers = [logging.getLogger(name) for name in SCANNED_LOGGERS]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(scan)
        lg.setLevel(logging.DEBUG)
        if quiet:
            lg.propagate = False
    try:
        yield scan
    finally:
        for lg, (level, propagate) in zip(loggers, saved, strict=True):
            lg.removeHandler(scan)
            lg.setLevel(level)
            lg.propagate = propagate


@contextmanager
def fast_backoff() -> Iterator[None]:
    """client-go's backoff shape (factor 2, jitter 1), 16x shorter: the soak converges fast.

    The controller builds its reflector without a backoff argument, so the module's `Backoff`
    is what it uses."""
    original = reflector_module.__dict__["Backoff"]
    setattr(  # noqa: B010 - the attribute is not re-exported, mypy must not see it
        reflector_module,
        "Backoff",
        functools.partial(Backoff, initial=0.05, cap=1.0, reset_interval=10.0),
    )
    try:
        yield
    finally:
        setattr(reflector_module, "Backoff", original)  # noqa: B010


# --- the run -------------------------------------------------------------------------------------


def _label_selected(options: ListOptions) -> ListOptions:
    return options.copy(label_selector=WIDGET_SELECTOR)


def _start_informers(api: Any, stop: threading.Event) -> tuple[list[RuntimeFactory], list[Watched]]:
    from examples.informers.demo.v1.informers import WidgetInformer
    from examples.informers.demo.v1.models import Widget
    from examples.informers.informers import CustomInformers
    from kubeinformers.generated.informers import SharedInformerFactory

    everything = SharedInformerFactory(api)
    in_namespace = SharedInformerFactory(api, namespace="soak-a")
    labelled = SharedInformerFactory(api, tweak_list_options=_label_selected)
    metadata = MetadataSharedInformerFactory(api)
    # C-3: the atomic RealFIFO (client-go v0.36's informer queue) on the generated path
    atomic = SharedInformerFactory(api, queue="atomic")
    # C-2 (RealFIFO, batches of distinct keys) and eager decoding, on a plain runtime factory
    ordered = RuntimeFactory(api)
    ordered_widgets = ordered.informer_for(
        WidgetInformer.RESOURCE.gvr,
        lambda resync: SharedIndexInformer(
            ApiListerWatcher(api, WidgetInformer.RESOURCE, Widget, decode="eager"),
            Widget,
            resync,
            name="widgets-ordered-eager",
            queue="ordered",
        ),
    )
    watched: list[tuple[str, SharedIndexInformer[Any], Selection]] = [
        ("pods", everything.core().v1().pods().informer(), Selection(PODS)),
        (
            "configmaps(soak-a)",
            in_namespace.core().v1().config_maps().informer(),
            Selection(CONFIGMAPS, "soak-a"),
        ),
        (
            "widgets(labels)",
            CustomInformers(labelled).demo().v1().widgets().informer(),
            Selection(WIDGETS, None, WIDGET_SELECTOR),
        ),
        (
            "configmaps(metadata)",
            metadata.for_resource(in_namespace.core().v1().config_maps().RESOURCE).informer(),
            Selection(CONFIGMAPS),
        ),
        ("widgets(ordered,eager)", ordered_widgets, Selection(WIDGETS)),
        ("pods(atomic)", atomic.core().v1().pods().informer(), Selection(PODS)),
    ]
    result = []
    for name, informer, selection in watched:
        recorders = [Recorder(f"{name}/{role}", stop) for role in ("plain", "raiser", "blocker")]
        for r in recorders:
            informer.add_event_handler(
                on_add=r.on_add, on_update=r.on_update, on_delete=r.on_delete
            )
        result.append(Watched(name, informer, selection, recorders))
    factories: list[RuntimeFactory] = [
        everything,
        in_namespace,
        labelled,
        metadata,
        ordered,
        atomic,
    ]
    for factory in factories:
        factory.start()
    return factories, result


def cache_state(informer: SharedIndexInformer[Any]) -> dict[str, str]:
    return {
        meta_namespace_key(o): object_resource_version(o) for o in informer.get_indexer().list()
    }


def _delivery_state(informer: SharedIndexInformer[Any]) -> str:
    """Where a view that did not converge stands: the informer's health, its queue, and per
    handler what is buffered, delivered and how old the oldest buffered notification is."""
    metrics = informer.metrics()
    handlers = ", ".join(
        f"{h.handler}: {h.buffered} buffered (oldest {h.oldest_buffered_age:.1f}s), "
        f"{h.delivered} delivered, {h.errors} raised"
        for h in metrics.handlers
    )
    health = informer.health()
    return (
        f"informer healthy={health.healthy} synced={health.synced} stopped={health.stopped} "
        f"problems={health.problems()}; {metrics.queued_items} queued; handlers: {handlers}"
    )


def _diff(expected: dict[str, str], actual: dict[str, str]) -> tuple[list[str], list[str]]:
    """(lost: on the server but missing or at another resourceVersion, phantom: extra keys)."""
    lost = [f"{k}@{rv} (has {actual.get(k)})" for k, rv in expected.items() if actual.get(k) != rv]
    phantom = [f"{k}@{actual[k]}" for k in actual.keys() - expected.keys()]
    return lost, phantom


# What the transport's one ERROR per bad object says: eager (K7) names the object and its
# resourceVersion, lazy (K11, on the first read) names the object.
_EAGER_REPORT = re.compile(r"cannot decode .*? object (\S+) \(resourceVersion (\S+)\)")
_LAZY_REPORT = re.compile(r"Widget '([^']+)' has fields that do not validate")
_DRIFTED_FIELDS = (("replicas", "spec.replicas"), ("parts", "spec.parts"))


def _old_shape(attr: str, value: Any) -> bool:
    """Whether the server's value of a Widget's spec field fits the models' (first) CRD. After
    "upgrade-crd" the server serves an object stored before it with `parts` items pruned to
    `{}` (the new schema's map has no `name`), so those drifted too without a write."""
    if attr == "replicas":
        return value is None or isinstance(value, int)
    return value is None or (
        isinstance(value, list) and all(isinstance(p, dict) and "name" in p for p in value)
    )


def _old_value(attr: str, value: Any) -> Any:
    """What the models read for a field of the old shape (`parts` by its items' names)."""
    return [p["name"] for p in value] if attr == "parts" and value is not None else value


class Soak:
    def __init__(self, config: SoakConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.result = SoakResult(seed=config.seed)
        self.stop = threading.Event()
        self._started = time.monotonic()
        self._secrets: list[str] = []  # every credential the run uses: none may be logged
        self._world: World | None = None

    def _say(self, text: str) -> None:
        if self.config.progress is not None:
            self.config.progress(text)

    def _violation(self, text: str) -> None:
        if len(self.result.violations) < 50:
            self.result.violations.append(text)

    def _sample_phantoms(self, world: World, watched: list[Watched]) -> None:
        """Continuous check: every (key, resourceVersion) in a cache or a handler's view was
        served at some point (between checkpoints they may lag, never invent)."""
        with world.lock:
            for w in watched:
                views = {"cache": cache_state(w.informer)}
                views.update({r.name: r.snapshot() for r in w.recorders})
                for what, view in views.items():
                    for key, rv in view.items():
                        if not world.ever_served(w.selection.kind, key, rv):
                            self.result.phantom += 1
                            self._violation(f"{w.name} {what} holds {key}@{rv}, never served")

    def _converged(self, world: World, watched: list[Watched]) -> bool:
        with world.lock:
            for w in watched:
                expected = world.expected(w.selection)
                if cache_state(w.informer) != expected:
                    return False
                if any(r.snapshot() != expected for r in w.recorders):
                    return False
        return True

    def _checkpoint(self, world: World, watched: list[Watched], injector: Injector) -> bool:
        """Writer paused, faults undone: all caches and views converge to the server."""
        injector.clear()
        deadline = time.monotonic() + self.config.converge_timeout
        tick = threading.Event()
        while not self._converged(world, watched) and time.monotonic() < deadline:
            tick.wait(0.05)
        ok = True
        with world.lock:
            for w in watched:
                expected = world.expected(w.selection)
                views = {"cache": cache_state(w.informer)}
                views.update({r.name: r.snapshot() for r in w.recorders})
                for what, actual in views.items():
                    self.result.objects_compared += len(expected)
                    lost, phantom = _diff(expected, actual)
                    self.result.lost += len(lost)
                    self.result.phantom += len(phantom)
                    if lost or phantom:
                        ok = False
                        self._violation(
                            f"{w.name} {what} did not converge in "
                            f"{self.config.converge_timeout:.0f}s: lost {lost[:5]} "
                            f"phantom {phantom[:5]}; {_delivery_state(w.informer)}"
                        )
        return ok

    def _check_drift(self, world: World, watched: list[Watched]) -> bool:
        """After "upgrade-crd" (issue 27), on a converged checkpoint: every cached Widget is the
        server's version (checked by the convergence: nothing stale) with the server's labels;
        a field whose type changed raises InvalidFieldError naming the object and the field
        (K11) while the rest reads, a new enum value reads (K12); the informers stay healthy."""
        ok = True

        def bad(text: str) -> None:
            nonlocal ok
            ok = False
            self._violation(text)

        with world.lock:
            server = {key_of(o): o for o in world.server.list(WIDGETS.api_version, WIDGETS.kind)}
            for w in watched:
                if w.selection.kind is not WIDGETS:
                    continue
                if not w.informer.health().healthy:
                    bad(f"{w.name} unhealthy after the CRD upgrade: {w.informer.health()}")
                indexer = w.informer.get_indexer()
                for key in world.expected(w.selection):
                    sent, cached = server[key], indexer.get_by_key(key)
                    if cached is None:
                        continue  # counted as lost by the convergence check
                    if cached.metadata.labels != sent["metadata"]["labels"]:
                        bad(
                            f"{w.name} {key}: labels {cached.metadata.labels}, server has "
                            f"{sent['metadata']['labels']}"
                        )
                    spec, want = cached.spec, sent["spec"]
                    size = spec.size  # K12: a value the CRD added reads
                    if size != want["size"] or (
                        size == NEW_SIZE and not isinstance(size, UnknownEnumValue)
                    ):
                        bad(
                            f"{w.name} {key}: spec.size reads {size!r}, server has {want['size']!r}"
                        )
                    drifted = False
                    # Stored before the upgrade: cached as served then or (relisted) as served
                    # now, its `parts` pruned; the same resourceVersion, both the server's.
                    before = int(sent["metadata"]["resourceVersion"]) < world.upgraded_at
                    for attr, path in _DRIFTED_FIELDS:  # K11: only a field of a new type raises
                        expect_error = not _old_shape(attr, want.get(attr))
                        drifted = drifted or expect_error
                        try:
                            value = getattr(spec, attr)
                            if attr == "parts" and value is not None:
                                value = [part.name for part in value]
                        except InvalidFieldError as err:
                            if before and attr == "parts" and err.path.startswith(path):
                                continue
                            if not expect_error or not err.path.startswith(path) or err.key != key:
                                bad(
                                    f"{w.name} {key}: reading {path} raised for {err.key} "
                                    f"{err.path} (the server has {want.get(attr)!r})"
                                )
                        else:
                            if before and attr == "parts" and value and set(value) == {"bolt"}:
                                continue  # as written before the upgrade (world.widget_spec)
                            if expect_error or value != _old_value(attr, want.get(attr)):
                                bad(
                                    f"{w.name} {key}: {path} read as {value!r}, the server "
                                    f"has {want.get(attr)!r}"
                                )
                    self.result.drifted_checked += drifted
        return ok

    def _check_drift_reports(self, logs: _LogScan) -> None:
        """K11/K7: each drifted object version is reported once, at ERROR, naming the field,
        without a traceback: no flood however often it is relisted or read."""
        world = self._world
        eager: Counter[tuple[str, str]] = Counter()
        lazy: Counter[str] = Counter()
        for logger_name, text, traceback in logs.widget_errors:
            if traceback:
                self._violation(f"{logger_name}: a traceback with {text[:200]}")
            if not any(path in text for _, path in _DRIFTED_FIELDS):
                self._violation(f"{logger_name}: an ERROR naming no drifted field: {text[:200]}")
            if m := _EAGER_REPORT.search(text):
                eager[(m[1], m[2])] += 1
            elif m := _LAZY_REPORT.search(text):
                lazy[m[1]] += 1
        repeated = [f"{k}@{rv} x{n}" for (k, rv), n in eager.items() if n > 1]
        versions = world.history[WIDGETS.kind] if world is not None else {}
        repeated += [f"{k} x{n}" for k, n in lazy.items() if n > len(versions.get(k, ()))]
        if repeated:
            self._violation(f"drifted Widgets reported more than once: {repeated[:5]}")

    def _check_callbacks(self, world: World, watched: list[Watched]) -> None:
        for w in watched:
            for r in w.recorders:
                s = r.stats
                self.result.stale_updates += s.stale_updates
                self.result.bad_callbacks += s.duplicate_adds + s.unknown_updates
                self.result.tombstones += s.tombstones
                self.result.handler_errors += s.raised
                for v in s.violations:
                    self._violation(v)
                kind = w.selection.kind.kind
                for key in r.tombstone_keys:
                    # A tombstone is for an object deleted (or, for a label selection,
                    # relabelled out of it) while the informer was not watching.
                    gone = key in world.deleted[kind]
                    if not (gone or (w.selection.selector and key in world.history[kind])):
                        self._violation(f"{r.name}: tombstone for {key}, never deleted")

    def run(self) -> SoakResult:
        cfg = self.config
        self.result.server = cfg.server
        own_real: RealApiServer | None = None
        if cfg.server == "real" and cfg.real is None:
            # started before the baseline: its process-wide spawner thread is not a leak
            own_real = RealApiServer().start()
        real = cfg.real or own_real
        try:
            self._secrets.append(
                TOKEN if real is None else real.configuration().api_key["authorization"]
            )
            threads_before = set(threading.enumerate())
            sockets_before = open_sockets()
            self._started = time.monotonic()
            with fast_backoff(), _captured_logs(self._secrets, quiet=True) as logs:
                self._run(real)
            self.result.duration = time.monotonic() - self._started
            if logs.leaks:
                self._violation(f"bearer token in log records: {logs.leaks}")
            self._check_drift_reports(logs)
            for problem in leaked(threads_before, sockets_before):
                self._violation(problem)
        finally:
            if own_real is not None:
                own_real.stop()
        self._say(
            f"log records: {logs.records}; faults by kind: "
            + ", ".join(f"{k}={v}" for k, v in sorted(self.result.fault_counts.items()))
        )
        return self.result

    def _run(self, real: RealApiServer | None) -> None:
        cfg = self.config
        local: LocalApiServer | None = None
        proxy: TcpProxy | None = None
        token_dir: tempfile.TemporaryDirectory[str] | None = None
        rotation: TokenRotation | None = None
        cluster: Cluster
        if real is None:
            local = LocalApiServer(
                tls=True,
                token=TOKEN,
                bookmark_interval=0.5,
                history_size=3000,
                too_large_rv_wait=0.3,
            )
            local.start()
            cluster = local
            api = local.api_client()
        else:
            cluster = RealCluster(real)
            proxy = TcpProxy(("127.0.0.1", int(real.server.rsplit(":", 1)[1]))).start()
            # The informers read a service-account token from a file (kubeconfig tokenFile:)
            # that the "rotate-token" fault replaces (issue 27); they connect through the proxy.
            token_dir = tempfile.TemporaryDirectory(prefix="kubeinformers-soak-token-")
            rotation = TokenRotation.start(cluster, Path(token_dir.name), self._secrets)
            from kubernetes import config as kube_config

            kubeconfig = token_file_kubeconfig(
                Path(token_dir.name) / "kubeconfig", proxy.url, real.ca_file, rotation.path
            )
            api = kube_config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        writer: Writer | None = None
        factories: list[RuntimeFactory] = []
        try:
            world = self._world = World(cluster, random.Random(self.rng.random()))
            world.setup()
            factories, watched = _start_informers(api, self.stop)
            for factory in factories:
                synced = factory.wait_for_cache_sync(timeout=60)
                if not all(synced.values()):
                    self._violation(f"initial sync failed: {synced}")
                    return
            self._say(f"soak: seed={cfg.seed}: {len(watched)} informers synced; injecting")
            recorders = [r for w in watched for r in w.recorders]
            writer = Writer(world)
            injector: Injector
            if real is None:
                injector = Injector(
                    world,
                    random.Random(self.rng.random()),
                    recorders,
                    raisers=[w.recorders[1] for w in watched],
                    blockers=[w.recorders[2] for w in watched],
                )
            else:
                injector = RealInjector(
                    world,
                    random.Random(self.rng.random()),
                    recorders,
                    raisers=[w.recorders[1] for w in watched],
                    blockers=[w.recorders[2] for w in watched],
                    real=real,
                    proxy=proxy,
                    pause_writes=writer.pause,
                    resume_writes=writer.resume,
                    rotation=rotation,
                    upgrade_crd_at=max(1, cfg.faults // 2)
                    if cfg.upgrade_crd_at is None
                    else cfg.upgrade_crd_at,
                )
            writer.start()
            window = bad_callbacks = 0
            for i in range(1, cfg.faults + 1):
                injector.fire()
                window += 1
                self.result.faults += 1
                self.stop.wait(self.rng.uniform(*cfg.interval))
                injector.tick()
                if i % 5 == 0:
                    self._sample_phantoms(world, watched)
                if i % cfg.checkpoint_every == 0 or i == cfg.faults:
                    writer.pause()
                    before = len(self.result.violations)
                    ok = self._checkpoint(world, watched, injector)
                    if ok and world.widgets_upgraded:
                        ok = self._check_drift(world, watched)
                    bad = sum(r.violation_count() for r in recorders)
                    if bad > bad_callbacks:
                        ok = False
                        bad_callbacks = bad
                    if ok and len(self.result.violations) == before:
                        self.result.survived += window
                    window = 0
                    self._say(
                        f"soak: {i}/{cfg.faults} faults, {world.stats.total} writes, "
                        f"checkpoint {'ok' if ok else 'FAILED'} "
                        f"({time.monotonic() - self._started:.0f}s)"
                    )
                    if writer.error is not None:
                        self._violation(f"the writer failed: {writer.error!r}")
                        break
                    if i < cfg.faults:
                        writer.resume()
            self._check_callbacks(world, watched)
            self.result.writes = world.stats.total
            self.result.fault_counts = dict(injector.counts)
        finally:
            self.stop.set()
            if writer is not None:
                writer.close()
            for factory in factories:
                factory.shutdown(timeout=30)
            api.close()
            if proxy is not None:
                proxy.stop()
            if token_dir is not None:
                token_dir.cleanup()
            if isinstance(cluster, RealCluster):
                cluster.close()
            if local is not None:
                local.stop()


def run_soak(config: SoakConfig) -> SoakResult:
    return Soak(config).run()
