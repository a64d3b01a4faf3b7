"""The ReconcileLoop (runtime/reconcile/loop.py, over reconcile/core.py) over a minimal fake informer."""

from __future__ import annotations

import importlib
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest

from kubeinformers.runtime.api.keys import DeletedFinalStateUnknown
from kubeinformers.runtime.cache.handlers import ResourceEventHandler
from kubeinformers.runtime.reconcile.loop import ReconcileLoop
from kubeinformers.runtime.workqueue.rate_limiters import ItemExponentialFailureRateLimiter

TIMEOUT = 10.0

Obj = dict[str, Any]


def cm(name: str, namespace: str = "default", rv: str = "1") -> Obj:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}}


class FakeRegistration:
    def __init__(self, informer: FakeInformer) -> None:
        self.informer = informer

    def has_synced(self) -> bool:
        return self.informer.synced.is_set()


class FakeInformer:
    """add_event_handler/has_synced and hooks to fire notifications, nothing else."""

    def __init__(self) -> None:
        self.handlers: list[ResourceEventHandler[Obj]] = []
        self.synced = threading.Event()

    def add_event_handler(self, handler: ResourceEventHandler[Obj]) -> FakeRegistration:
        self.handlers.append(handler)
        return FakeRegistration(self)

    def has_synced(self) -> bool:
        return self.synced.is_set()

    def add(self, obj: Obj) -> None:
        for h in self.handlers:
            h.on_add(obj, False)

    def update(self, old: Obj, new: Obj) -> None:
        for h in self.handlers:
            h.on_update(old, new)

    def delete(self, obj: Obj | DeletedFinalStateUnknown[Obj]) -> None:
        for h in self.handlers:
            h.on_delete(obj)


class Running:
    """A controller's run() on a thread, stopped and joined by the test."""

    def __init__(self, controller: ReconcileLoop[str]) -> None:
        self.stop = threading.Event()
        self.thread = threading.Thread(target=controller.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        self.stop.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "run() did not return after stop"


def test_keys_of_adds_updates_deletes_and_tombstones_are_reconciled() -> None:
    informer = FakeInformer()
    seen: list[str] = []
    all_seen = threading.Event()

    def reconcile(key: str) -> None:
        seen.append(key)
        if len(seen) == 4:
            all_seen.set()

    controller: ReconcileLoop[str] = ReconcileLoop("keys", reconcile)
    controller.watch(informer)
    informer.synced.set()
    running = Running(controller)
    informer.add(cm("a"))
    informer.update(cm("b", rv="1"), cm("b", rv="2"))
    informer.delete(cm("cluster-scoped", namespace=""))
    informer.delete(DeletedFinalStateUnknown("ns1/gone", None))
    assert all_seen.wait(TIMEOUT)
    running.shutdown()
    assert sorted(seen) == ["cluster-scoped", "default/a", "default/b", "ns1/gone"]


def test_workers_start_only_after_caches_synced() -> None:
    informer = FakeInformer()
    other = FakeInformer()
    called = threading.Event()
    controller: ReconcileLoop[str] = ReconcileLoop("sync", lambda key: called.set())
    controller.watch(informer)
    controller.wait_for(other)
    running = Running(controller)
    informer.add(cm("a"))
    informer.synced.set()
    assert not called.wait(0.3)  # the other cache has not synced yet
    other.synced.set()
    assert called.wait(TIMEOUT)
    running.shutdown()


def test_stop_before_sync_returns_without_workers() -> None:
    informer = FakeInformer()
    calls: list[str] = []
    controller: ReconcileLoop[str] = ReconcileLoop("never", calls.append)
    controller.watch(informer)
    informer.add(cm("a"))
    running = Running(controller)
    running.shutdown()
    assert calls == []
    assert not controller.queue.shutting_down() and len(controller.queue) == 1  # for a next run


def test_failure_is_logged_with_key_and_retried_with_growing_delays_then_forgotten(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """I8/I9 through the controller: three failures, delays 20, 40, 80 ms, then success."""
    informer = FakeInformer()
    attempts: list[float] = []
    succeeded = threading.Event()

    def reconcile(key: str) -> None:
        attempts.append(time.monotonic())
        if len(attempts) <= 3:
            raise RuntimeError("flaky backend")
        succeeded.set()

    controller: ReconcileLoop[str] = ReconcileLoop(
        "retry", reconcile, rate_limiter=ItemExponentialFailureRateLimiter(0.02, 10.0)
    )
    controller.watch(informer)
    informer.synced.set()
    with caplog.at_level(logging.WARNING, logger="kubeinformers.reconcile"):
        running = Running(controller)
        informer.add(cm("flaky"))
        assert succeeded.wait(TIMEOUT)
        running.shutdown()
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert len(attempts) == 4
    assert gaps[0] >= 0.02 and gaps[1] >= 0.04 and gaps[2] >= 0.08
    assert controller.queue.num_requeues("default/flaky") == 0  # success forgot it
    failures = [r for r in caplog.records if "default/flaky" in r.getMessage()]
    assert len(failures) == 3
    assert "flaky backend" in failures[0].getMessage()


def test_max_retries_drops_the_key_after_that_many_retries() -> None:
    informer = FakeInformer()
    attempts: Counter[str] = Counter()
    done = threading.Event()

    def reconcile(key: str) -> None:
        attempts[key] += 1
        if key == "default/sentinel":
            done.set()
            return
        raise ValueError("always fails")

    controller: ReconcileLoop[str] = ReconcileLoop(
        "drop",
        reconcile,
        rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01),
        max_retries=2,
    )
    controller.watch(informer)
    informer.synced.set()
    running = Running(controller)
    informer.add(cm("bad"))
    deadline = time.monotonic() + TIMEOUT
    while attempts["default/bad"] < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    informer.add(cm("sentinel"))
    assert done.wait(TIMEOUT)
    # no further retry is pending: nothing waits in the delaying queue
    assert controller.queue.waiting() == 0 and len(controller.queue) == 0
    running.shutdown()
    assert attempts["default/bad"] == 3  # first try + 2 retries
    assert controller.queue.num_requeues("default/bad") == 0


def test_reconcile_returning_seconds_rechecks_the_key_later() -> None:
    informer = FakeInformer()
    calls: list[float] = []
    twice = threading.Event()

    def reconcile(key: str) -> float | None:
        calls.append(time.monotonic())
        if len(calls) == 2:
            twice.set()
            return None
        return 0.05

    controller: ReconcileLoop[str] = ReconcileLoop("periodic", reconcile)
    controller.watch(informer)
    informer.synced.set()
    running = Running(controller)
    informer.add(cm("a"))
    assert twice.wait(TIMEOUT)
    running.shutdown()
    assert calls[1] - calls[0] >= 0.05


def test_shutdown_drains_in_flight_reconciles() -> None:
    informer = FakeInformer()
    entered = threading.Event()
    release = threading.Event()
    finished: list[str] = []

    def reconcile(key: str) -> None:
        entered.set()
        release.wait(TIMEOUT)
        finished.append(key)

    controller: ReconcileLoop[str] = ReconcileLoop("drain", reconcile)
    controller.watch(informer)
    informer.synced.set()
    running = Running(controller)
    informer.add(cm("slow"))
    assert entered.wait(TIMEOUT)
    running.stop.set()
    running.thread.join(0.1)
    assert running.thread.is_alive()  # waiting for the in-flight reconcile
    release.set()
    running.shutdown()
    assert finished == ["default/slow"]


def test_a_stop_waiting_for_a_reconcile_says_so_naming_its_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Never hang silently: a stop that waits for a reconcile that does not return warns,
    # again and again, naming the key it waits for.
    monkeypatch.setattr("kubeinformers.runtime.reconcile.loop.DRAIN_HINT_AFTER", 0.05)
    informer = FakeInformer()
    entered = threading.Event()
    release = threading.Event()

    def reconcile(key: str) -> None:
        entered.set()
        release.wait(TIMEOUT)

    controller: ReconcileLoop[str] = ReconcileLoop("stuck", reconcile)
    controller.watch(informer)
    informer.synced.set()
    warned = threading.Event()

    class Warned(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno == logging.WARNING and "still stopping" in record.getMessage():
                warned.set()

    watcher = Warned()
    logging.getLogger("kubeinformers.reconcile").addHandler(watcher)
    try:
        with caplog.at_level(logging.WARNING, logger="kubeinformers.reconcile"):
            running = Running(controller)
            informer.add(cm("slow"))
            assert entered.wait(TIMEOUT)
            running.stop.set()
            assert warned.wait(TIMEOUT)
            release.set()
            running.shutdown()
    finally:
        logging.getLogger("kubeinformers.reconcile").removeHandler(watcher)
    (first, *_) = [r for r in caplog.records if "still stopping" in r.getMessage()]
    assert "waiting for 1 reconcile(s) in flight to return (default/slow)" in first.getMessage()


def test_a_key_is_never_reconciled_concurrently_with_itself() -> None:
    informer = FakeInformer()
    active: set[str] = set()
    lock = threading.Lock()
    overlaps: list[str] = []
    last_seen_rv: dict[str, int] = {}
    latest_rv: dict[str, int] = {}

    def reconcile(key: str) -> None:
        with lock:
            if key in active:
                overlaps.append(key)
            active.add(key)
            last_seen_rv[key] = latest_rv[key]
        time.sleep(0.0005)
        with lock:
            active.discard(key)

    controller: ReconcileLoop[str] = ReconcileLoop("overlap", reconcile, workers=8)
    controller.watch(informer)
    informer.synced.set()
    running = Running(controller)
    for rv in range(1, 21):
        for i in range(50):
            key = f"default/o{i}"
            with lock:
                latest_rv[key] = rv
            informer.update(cm(f"o{i}", rv=str(rv - 1)), cm(f"o{i}", rv=str(rv)))
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        with lock:
            if last_seen_rv == latest_rv and not active and len(controller.queue) == 0:
                break
        time.sleep(0.01)
    running.shutdown()
    assert overlaps == []
    assert last_seen_rv == {f"default/o{i}": 20 for i in range(50)}


def test_key_func_and_predicate() -> None:
    informer = FakeInformer()
    seen: list[str] = []
    got = threading.Event()

    def reconcile(key: str) -> None:
        seen.append(key)
        got.set()

    def owner_key(obj: Obj | DeletedFinalStateUnknown[Obj]) -> str:
        assert not isinstance(obj, DeletedFinalStateUnknown)
        return "owner-of-" + str(obj["metadata"]["name"])

    def only_b(obj: Obj | DeletedFinalStateUnknown[Obj]) -> bool:
        return not isinstance(obj, DeletedFinalStateUnknown) and obj["metadata"]["name"] == "b"

    controller: ReconcileLoop[str] = ReconcileLoop("owner", reconcile)
    controller.watch(informer, owner_key, predicate=only_b)
    informer.synced.set()
    informer.add(cm("a"))
    informer.add(cm("b"))
    running = Running(controller)
    assert got.wait(TIMEOUT)
    running.shutdown()
    assert seen == ["owner-of-b"]


def test_bad_object_is_logged_not_enqueued(caplog: pytest.LogCaptureFixture) -> None:
    informer = FakeInformer()
    controller: ReconcileLoop[str] = ReconcileLoop("bad", lambda key: None)
    controller.watch(informer)
    with caplog.at_level(logging.ERROR, logger="kubeinformers.reconcile"):
        informer.add(cast(Obj, object()))  # no metadata at all
    assert len(controller.queue) == 0
    assert any("cannot compute a key" in r.getMessage() for r in caplog.records)


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers"):
        ReconcileLoop[str]("zero", lambda key: None, workers=0)


# ----------------------------------------------------------------------------- with real informers


class Reconciler:
    """Reads each key's object from the informer's cache, recording what it saw and whether
    a key was ever reconciled concurrently with itself."""

    def __init__(self, cache: Callable[[str], Obj | None], fail_first: int = 0) -> None:
        self.cache = cache
        self.lock = threading.Lock()
        self.active: set[str] = set()
        self.overlaps: list[str] = []
        self.last_seen: dict[str, str] = {}
        self.count: Counter[str] = Counter()
        self.fail_first = fail_first
        self.changed = threading.Condition(self.lock)

    def __call__(self, key: str) -> None:
        with self.lock:
            if key in self.active:
                self.overlaps.append(key)
            self.active.add(key)
        try:
            obj = self.cache(key)
            seen = "deleted" if obj is None else str((obj.get("data") or {}).get("version"))
            time.sleep(0)  # let other workers run while this key is active
        finally:
            with self.lock:
                self.active.discard(key)
                self.count[key] += 1
                self.last_seen[key] = seen
                self.changed.notify_all()

    def wait_until(self, expected: dict[str, str], timeout: float) -> bool:
        with self.lock:
            return self.changed.wait_for(
                lambda: all(self.last_seen.get(k) == v for k, v in expected.items()), timeout
            )

    def missed(self, expected: dict[str, str]) -> list[str]:
        """The keys whose last change was not seen: what the reconciler saw, how often, and
        what the cache holds now, so a failure says where the change was lost."""
        with self.lock:
            wrong = [k for k, v in expected.items() if self.last_seen.get(k) != v]
            return [
                f"{k}: expected {expected[k]}, saw {self.last_seen.get(k)} "
                f"in {self.count[k]} reconciles; cache now {self.cache(k)}"
                for k in wrong[:20]
            ] + ([f"... {len(wrong)} keys in all"] if len(wrong) > 20 else [])


def configmap(name: str, version: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"version": str(version)},
    }


def test_every_key_is_reconciled_after_its_last_change_with_a_real_informer() -> None:
    """1,000 objects changed 3 times each through SharedIndexInformer + FakeListerWatcher."""
    from kubeinformers.runtime.cache.informer import SharedIndexInformer
    from kubeinformers.testing.fake import FakeListerWatcher

    source: FakeListerWatcher[Obj] = FakeListerWatcher()
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(source, None, name="configmaps")
    reconciler = Reconciler(informer.get_indexer().get_by_key)
    controller: ReconcileLoop[str] = ReconcileLoop("configmaps", reconciler, workers=4)
    controller.watch(informer)
    stop = threading.Event()
    threads = [
        threading.Thread(target=informer.run, args=(stop,), daemon=True),
        threading.Thread(target=controller.run, args=(stop,), daemon=True),
    ]
    for t in threads:
        t.start()
    # Write only once the informer has listed (the empty source) and watches: an object
    # created and deleted before its first LIST is never seen, so never reconciled (a
    # late-starting informer under CPU load made this test wait for deletes it cannot see).
    deadline = time.monotonic() + TIMEOUT
    while not informer.has_synced():
        assert time.monotonic() < deadline, "the informer did not sync"
        stop.wait(0.01)
    n = 1000
    for i in range(n):
        source.add(configmap(f"cm-{i}", 0))
    for version in (1, 2, 3):
        for i in range(n):
            source.modify(configmap(f"cm-{i}", version))
    for i in range(0, n, 10):
        source.delete(configmap(f"cm-{i}", 3))
    expected = {f"default/cm-{i}": ("deleted" if i % 10 == 0 else "3") for i in range(n)}
    try:
        assert reconciler.wait_until(expected, 60.0), reconciler.missed(expected)
    finally:
        stop.set()
        for t in threads:
            t.join(TIMEOUT)
    assert reconciler.overlaps == []
    # the queue collapses bursts: far fewer reconciles than the 5,000 notifications
    assert sum(reconciler.count.values()) <= 4 * n + n // 10


# ----------------------------------------------------------------------------- against LocalApiServer


def local_api_server() -> Any:
    """A LocalApiServer (H4); skips while testing/local_api_server.py is not in the tree."""
    name = "kubeinformers.testing.local_api_server"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        pytest.skip("LocalApiServer (kubeinformers/testing/local_api_server.py) is not here yet")
    return module.LocalApiServer()


@pytest.fixture
def local_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An ApiClient of a fresh LocalApiServer."""
    server = local_api_server()
    # Without TCP_NODELAY on the server, every request of a keep-alive connection waits
    # ~40 ms for a delayed ACK (Nagle): 1,200 sequential writes take 53 s instead of 0.7 s.
    try:
        http = importlib.import_module("kubeinformers.testing.apiserver.http")
    except ImportError:
        http = None  # the server's internals moved: nothing to tune
    handler = getattr(http, "Handler", None)
    if handler is not None and not getattr(handler, "disable_nagle_algorithm", False):
        monkeypatch.setattr(handler, "disable_nagle_algorithm", True)
    with server:
        yield server.api_client()


def test_controller_against_local_api_server(local_api: Any) -> None:
    """1,000 ConfigMaps, each changed 3 times and 100 deleted, through the real HTTP stack:
    every key is reconciled after its last change and never concurrently with itself; then
    a reconcile that fails three times is retried with growing delays (50, 100, 200 ms)
    and succeeds."""
    from concurrent.futures import ThreadPoolExecutor

    from kubeinformers.runtime.api.resource import APIResource
    from kubeinformers.runtime.cache.factory import SharedInformerFactory

    rest = local_api.rest_client
    base = f"{local_api.configuration.host}/api/v1/namespaces/default/configmaps"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def send(method: str, url: str, body: Obj | None, expect: int) -> None:
        # The raw REST client: the typed CoreV1Api's pydantic round trips would triple the
        # time of these 4,100 writes, and this test is about the controller.
        response = rest.request(method, url, headers=headers, body=body)
        # kubernetes 37's RESTResponse is read with read(); up to 36 it holds `data` already.
        data = response.read() if hasattr(response, "read") else response.data
        assert response.status == expect, (method, url, response.status, data[:300])

    factory = SharedInformerFactory(local_api)
    resource = APIResource("", "v1", "configmaps", "ConfigMap", True, "configmap")
    informer = factory.typed_informer(resource, dict)
    reconciler = Reconciler(informer.get_indexer().get_by_key)
    flaky_attempts: list[float] = []

    def reconcile(key: str) -> None:
        if key == "default/flaky":
            flaky_attempts.append(time.monotonic())
            if len(flaky_attempts) <= 3:
                raise RuntimeError("injected failure")
        reconciler(key)

    controller: ReconcileLoop[str] = ReconcileLoop(
        "configmaps",
        reconcile,
        workers=4,
        rate_limiter=ItemExponentialFailureRateLimiter(0.05, 10.0),
    )
    controller.watch(informer)
    stop = threading.Event()
    factory.start()
    runner = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    runner.start()
    # Write only once the informer has listed: a ConfigMap created and deleted before the
    # informer's first list is never seen, so never reconciled (under CPU load the reflector
    # started after cm-0's five writes, and the test waited for a delete it could not see).
    assert all(factory.wait_for_cache_sync(TIMEOUT).values()), "the informer did not sync"
    n = 1000

    def write(i: int) -> None:
        name = f"cm-{i}"
        send("POST", base, configmap(name, 0), 201)
        for version in (1, 2, 3):
            send("PUT", f"{base}/{name}", configmap(name, version), 200)
        if i % 10 == 0:
            send("DELETE", f"{base}/{name}", None, 200)

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(write, range(n)))
        expected = {f"default/cm-{i}": ("deleted" if i % 10 == 0 else "3") for i in range(n)}
        assert reconciler.wait_until(expected, 60.0), reconciler.missed(expected)
        assert reconciler.overlaps == []

        send("POST", base, configmap("flaky", 0), 201)
        assert reconciler.wait_until({"default/flaky": "0"}, TIMEOUT)
    finally:
        stop.set()
        runner.join(TIMEOUT)
        factory.shutdown()
    assert len(flaky_attempts) == 4
    gaps = [b - a for a, b in itertools.pairwise(flaky_attempts)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2, gaps
    assert controller.queue.num_requeues("default/flaky") == 0


def test_configmap_summary_example_against_local_api_server(local_api: Any) -> None:
    """examples/configmap_summary.py: summaries per namespace follow pod changes, vanish with
    the last pod, and come back when deleted by hand."""
    from kubernetes import client as k8s
    from kubernetes.client.exceptions import ApiException

    from examples.configmap_summary import SUMMARY_NAME, run

    core = k8s.CoreV1Api(local_api)

    def pod(name: str, app: str | None) -> k8s.V1Pod:
        return k8s.V1Pod.model_validate(
            {
                "metadata": {"name": name, "labels": {"app": app} if app else {}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            }
        )

    def summary(namespace: str) -> dict[str, str] | None:
        try:
            return dict(core.read_namespaced_config_map(SUMMARY_NAME, namespace).data or {})
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    def eventually(namespace: str, expected: dict[str, str] | None) -> None:
        deadline = time.monotonic() + TIMEOUT
        while (got := summary(namespace)) != expected:
            assert time.monotonic() < deadline, f"{namespace}: {got} != {expected}"
            time.sleep(0.02)

    for namespace in ("team-a", "team-b"):
        core.create_namespace(k8s.V1Namespace.model_validate({"metadata": {"name": namespace}}))
    for name, app in [("w1", "web"), ("w2", "web"), ("d1", "db"), ("x", None)]:
        core.create_namespaced_pod("team-a", pod(name, app))
    core.create_namespaced_pod("team-b", pod("w1", "web"))
    stop = threading.Event()
    runner = threading.Thread(target=run, args=(local_api, stop), daemon=True)
    runner.start()
    try:
        eventually("team-a", {"_unlabelled": "1", "db": "1", "web": "2"})
        eventually("team-b", {"web": "1"})
        core.delete_namespaced_pod("d1", "team-a")
        core.create_namespaced_pod("team-a", pod("c1", "cache"))
        eventually("team-a", {"_unlabelled": "1", "cache": "1", "web": "2"})
        core.delete_namespaced_pod("w1", "team-b")
        eventually("team-b", None)
        core.delete_namespaced_config_map(SUMMARY_NAME, "team-a")
        eventually("team-a", {"_unlabelled": "1", "cache": "1", "web": "2"})
    finally:
        stop.set()
        runner.join(TIMEOUT)
    assert not runner.is_alive()


def test_waiting_for_sync_says_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kubeinformers.runtime.reconcile.core as reconcile_core

    monkeypatch.setattr(reconcile_core, "SYNC_HINT_AFTER", 0.05)
    informer = FakeInformer()
    controller: ReconcileLoop[str] = ReconcileLoop("hint", lambda key: None)
    controller.watch(informer)
    stop = threading.Event()
    with caplog.at_level(logging.WARNING, logger="kubeinformers.reconcile"):
        threading.Timer(0.3, stop.set).start()
        assert not controller.wait_for_cache_sync(stop)
    assert any("1 of 1 caches to sync" in r.getMessage() for r in caplog.records)


def test_requeue_retries_with_backoff_and_logs_one_line_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from kubeinformers.runtime.reconcile.core import Requeue

    calls: list[str] = []

    def reconcile(key: str) -> None:
        calls.append(key)
        if len(calls) == 1:
            raise Requeue("cache is behind")

    controller: ReconcileLoop[str] = ReconcileLoop("requeue-test", reconcile)
    with caplog.at_level(logging.DEBUG, logger="kubeinformers"):
        controller.process("ns/a")
    assert controller.queue.num_requeues("ns/a") == 1  # rate-limited like a failure
    records = [r for r in caplog.records if "ns/a" in r.getMessage()]
    assert [r.levelno for r in records] == [logging.INFO]
    assert records[0].exc_info is None and "cache is behind" in records[0].getMessage()
    controller.process("ns/a")
    assert calls == ["ns/a", "ns/a"] and controller.queue.num_requeues("ns/a") == 0
    controller.queue.shut_down()


def test_i12_a_loop_runs_again_and_loses_nothing_meanwhile() -> None:
    """As the asyncio loop: a run after a run gets what the first left waiting and what the
    informers and `enqueue` brought in between."""
    informer = FakeInformer()
    informer.synced.set()
    seen: list[str] = []
    lock = threading.Condition()
    failures = {"default/retry": 1}

    def reconcile(key: str) -> float | None:
        with lock:
            seen.append(key)
            lock.notify_all()
            first = seen.count(key) == 1
        if failures.get(key):
            failures[key] -= 1
            raise RuntimeError("transient")
        return 0.3 if key == "default/recheck" and first else None

    def until(keys: set[str]) -> None:
        with lock:
            assert lock.wait_for(lambda: keys <= set(seen), TIMEOUT), f"seen {seen}"

    controller: ReconcileLoop[str] = ReconcileLoop(
        "again", reconcile, rate_limiter=ItemExponentialFailureRateLimiter(0.3, 1.0)
    )
    controller.watch(informer)
    running = Running(controller)
    informer.add(cm("retry"))
    informer.add(cm("recheck"))
    until({"default/retry", "default/recheck"})
    running.shutdown()  # a retry and a re-check are waiting
    informer.add(cm("meanwhile"))
    controller.enqueue("default/manual")
    with lock:
        seen.clear()
    running = Running(controller)
    until({"default/retry", "default/recheck", "default/meanwhile", "default/manual"})
    running.shutdown()


def test_i12_a_loop_given_its_own_queue_runs_once_and_says_so() -> None:
    from kubeinformers.runtime.workqueue.queue import RateLimitingQueue

    informer = FakeInformer()
    informer.synced.set()
    controller: ReconcileLoop[str] = ReconcileLoop(
        "given", lambda key: None, queue=RateLimitingQueue(name="given")
    )
    controller.watch(informer)
    Running(controller).shutdown()
    with pytest.raises(RuntimeError, match="give it no queue to run it again"):
        controller.run(threading.Event())


def test_i12_i9_failure_counts_outlive_a_run_with_the_default_rate_limiter() -> None:
    """The asyncio loop's twin: `max_retries` counts a key's failures over runs (every run's
    queue has the loop's one rate limiter)."""
    attempts = 0
    running: list[Running] = []
    lost = threading.Event()

    def reconcile(key: str) -> None:
        nonlocal attempts
        attempts += 1
        if attempts == 2:
            first = controller.queue
            running[0].stop.set()  # the lease is lost while the key backs off
            # Its retry is the next run's once this run has handed its queue over (I12); a
            # retry due before that (10 ms) would be this run's, however slow the machine.
            deadline = time.monotonic() + TIMEOUT
            while controller.queue is first and time.monotonic() < deadline:
                lost.wait(0.001)
            lost.set()
        raise RuntimeError("keeps failing")

    dropped = threading.Event()

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "dropping it" in record.getMessage():
                dropped.set()

    controller: ReconcileLoop[str] = ReconcileLoop("counts", reconcile, max_retries=2)
    controller.enqueue("default/broken")
    running.append(Running(controller))
    assert lost.wait(TIMEOUT)
    running[0].shutdown()
    assert attempts == 2
    said = Said()
    logging.getLogger("kubeinformers.reconcile").addHandler(said)
    try:
        second = Running(controller)
        assert dropped.wait(TIMEOUT)
        second.shutdown()
    finally:
        logging.getLogger("kubeinformers.reconcile").removeHandler(said)
    assert attempts == 3  # max_retries + 1 over both runs


def test_i12_i7_a_delay_asked_while_no_run_goes_counts_from_the_ask() -> None:
    """The asyncio loop's twin: `enqueue_after(key, 1)` before a run means one second from
    the call, not from the run's start."""
    reconciled_at: list[float] = []
    reconciled = threading.Event()

    def reconcile(key: str) -> None:
        reconciled_at.append(time.monotonic())
        reconciled.set()

    controller: ReconcileLoop[str] = ReconcileLoop("due", reconcile)
    asked = time.monotonic()
    controller.enqueue_after("default/later", 1.0)
    # The scenario: a second passes with no run going (the wait ends early only if the key
    # were reconciled without a run, which must not happen).
    assert not reconciled.wait(1.0)
    running = Running(controller)
    assert reconciled.wait(TIMEOUT)
    running.shutdown()
    assert 1.0 <= reconciled_at[0] - asked < 1.8


class InterruptibleStop(threading.Event):
    """A stop event whose wait raises KeyboardInterrupt once `interrupt` is set: Ctrl-C
    arriving while `run` waits in the main thread with Python's default SIGINT handler."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupt = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            if self.interrupt.is_set():
                raise KeyboardInterrupt
            left = 0.01 if deadline is None else min(0.01, deadline - time.monotonic())
            if left <= 0:
                return False
            self.interrupt.wait(left)
        return True


class HeldReconcile:
    """A reconcile that says when it began, returns only once released and says it returned
    (the threaded twin of test_async_reconcile's)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()

    def __call__(self, key: str) -> None:
        self.entered.set()
        self.release.wait(TIMEOUT)
        self.finished.set()


def held_loop(name: str) -> tuple[FakeInformer, HeldReconcile, ReconcileLoop[str]]:
    """A loop of two workers reconciling with a HeldReconcile, its informer synced."""
    informer = FakeInformer()
    held = HeldReconcile()
    loop: ReconcileLoop[str] = ReconcileLoop(name, held, workers=2)
    loop.watch(informer)
    informer.synced.set()
    return informer, held, loop


def test_i19_an_interrupted_run_drains_its_workers_before_it_raises() -> None:
    """I19: Ctrl-C in `run` (KeyboardInterrupt out of its wait) ends it as a stop does: the
    reconcile in flight finishes and every worker ends before the interrupt is raised. It
    used to raise at once, the workers reconciling on after `run` (and factory.shutdown())."""
    informer, held, loop = held_loop("interrupted")
    entered, release, finished = held.entered, held.release, held.finished
    stop = InterruptibleStop()
    outcome: list[tuple[str, bool]] = []

    def run() -> None:
        try:
            loop.run(stop)
        except KeyboardInterrupt:
            outcome.append(("KeyboardInterrupt", finished.is_set()))

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    informer.add(cm("a"))
    assert entered.wait(TIMEOUT)
    queue = loop.queue  # this run's (a next run gets a fresh one)
    stop.interrupt.set()
    # `run` now drains (its queue shuts down) or, as it used to, has already raised.
    deadline = time.monotonic() + TIMEOUT
    while runner.is_alive() and not queue.shutting_down():
        assert time.monotonic() < deadline, "run neither drained nor raised"
        runner.join(0.01)
    release.set()
    runner.join(TIMEOUT)
    assert not runner.is_alive()
    assert outcome == [("KeyboardInterrupt", True)]  # raised, after the reconcile returned
    workers = [t for t in threading.enumerate() if t.name.startswith("controller-interrupted")]
    assert workers == []


def test_n10_a_release_while_the_run_stops_waits_for_the_draining_reconciles() -> None:
    """N10: `release` called while `run` is stopping (a ring member told to stop releases
    everything, then deletes its Lease) waits for the reconciles its workers still drain.
    It looked only at the next run's fresh queue and returned True at once, so the member
    left the ring with a reconcile running and another replica started the same key beside
    it (found on a real kube-apiserver: three ring replicas, one sent SIGTERM)."""
    informer, held, loop = held_loop("stopping")
    entered, release, finished = held.entered, held.release, held.finished
    running = Running(loop)
    informer.add(cm("a"))
    assert entered.wait(TIMEOUT)
    queue = loop.queue  # this run's
    running.stop.set()
    deadline = time.monotonic() + TIMEOUT
    while not queue.shutting_down():  # the run drains now
        assert time.monotonic() < deadline, "run did not begin to stop"
        running.thread.join(0.01)
    assert loop.release(lambda key: True, timeout=0.2) is False  # "default/a" still runs
    assert not finished.is_set()
    release.set()
    assert loop.release(lambda key: True, timeout=TIMEOUT) is True
    assert finished.is_set()
    running.thread.join(TIMEOUT)
    assert not running.thread.is_alive()
