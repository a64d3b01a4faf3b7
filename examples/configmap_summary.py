"""Example controller: keeps, in every namespace with pods, a ConfigMap counting its pods per
value of one label (default ``app``).

    python -m examples.configmap_summary --local       # against an embedded LocalApiServer
    python -m examples.configmap_summary               # against your kubeconfig's cluster

It shows the pieces working together: typed informers and listers from the generated
factory, a ``ReconcileLoop`` whose keys are namespaces (a pod change enqueues its namespace, so a
burst of pod changes in one namespace is one reconcile), rate-limited retries on conflicts,
and optionally leader election so only one replica writes.

The summary ConfigMap ``pod-summary`` has one entry per label value (``web: "3"``) and
``_unlabelled`` for pods without the label. It carries the label ``SUMMARY_LABEL``; a
ConfigMap of that name without it belongs to someone else and is left alone.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from kubeinformers import (
    AlreadyExists,
    Client,
    Conflict,
    DeletedFinalStateUnknown,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    NotFound,
    NotFoundError,
    ReconcileLoop,
    Requeue,
    object_labels,
    object_name,
    object_namespace,
    split_meta_namespace_key,
)
from kubeinformers.generated.core.v1 import ConfigMap, Container, Pod, PodSpec
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import ObjectMeta

SUMMARY_NAME = "pod-summary"
SUMMARY_LABEL = "kubeinformers.example/pod-summary"
UNLABELLED = "_unlabelled"

log = logging.getLogger("examples.configmap_summary")


def namespace_of(obj: object) -> str:
    """The key of this controller: the object's namespace (tombstones included)."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return split_meta_namespace_key(obj.key)[0]
    return object_namespace(obj)


def is_summary(obj: ConfigMap | DeletedFinalStateUnknown[ConfigMap]) -> bool:
    if isinstance(obj, DeletedFinalStateUnknown):
        return split_meta_namespace_key(obj.key)[1] == SUMMARY_NAME
    return object_name(obj) == SUMMARY_NAME


def count_pods(pods: list[Pod], label_key: str) -> dict[str, str]:
    counts = Counter(object_labels(pod).get(label_key) or UNLABELLED for pod in pods)
    return {value: str(n) for value, n in sorted(counts.items())}


class PodSummaryController:
    """Reconciles one namespace at a time from the informers' caches."""

    def __init__(
        self,
        factory: SharedInformerFactory,
        *,
        label_key: str = "app",
        workers: int = 2,
    ) -> None:
        self.label_key = label_key
        # Writes return once the factory's ConfigMap informer has them (read your writes), so
        # a reconcile never acts on a summary older than its own last write.
        self.client: Client = factory.client()
        pods = factory.core().v1().pods()
        config_maps = factory.core().v1().config_maps()
        self.pods = pods.lister()
        self.config_maps = config_maps.lister()
        self.controller: ReconcileLoop[str] = ReconcileLoop(
            "pod-summary", self.reconcile, workers=workers
        )
        self.controller.watch(pods.informer(), namespace_of)
        # Our own output is watched too: a summary edited or deleted by hand is put back.
        self.controller.watch(config_maps.informer(), namespace_of, predicate=is_summary)

    def reconcile(self, namespace: str) -> None:
        pods = self.pods.pods(namespace).list()
        try:
            existing: ConfigMap | None = self.config_maps.config_maps(namespace).get(SUMMARY_NAME)
        except NotFoundError:
            existing = None
        if existing is not None and SUMMARY_LABEL not in object_labels(existing):
            log.warning(
                "configmap %s/%s exists without label %s; not touching it",
                namespace,
                SUMMARY_NAME,
                SUMMARY_LABEL,
            )
            return
        if not pods:
            if existing is not None:
                self._delete(namespace, existing)
            return
        desired = count_pods(pods, self.label_key)
        if existing is not None and dict(existing.data or {}) == desired:
            return  # up to date: no write
        self._write(namespace, existing, desired)

    def _write(self, namespace: str, existing: ConfigMap | None, data: Mapping[str, str]) -> None:
        if existing is None:
            summary = ConfigMap(
                metadata=ObjectMeta(
                    name=SUMMARY_NAME, namespace=namespace, labels={SUMMARY_LABEL: "true"}
                ),
                data=dict(data),
            )
            try:
                self.client.create(summary)
            except AlreadyExists as err:  # created meanwhile; the cache has not seen it yet
                raise Requeue(f"{namespace}/{SUMMARY_NAME} exists but is not cached yet") from err
            log.info("created %s/%s: %s", namespace, SUMMARY_NAME, dict(data))
        else:
            # Optimistic concurrency: the cached resourceVersion goes with the update; a
            # Conflict means it changed since, and the controller retries with backoff.
            summary = existing.model_copy(deep=True)  # never change the cache's object
            summary.data = dict(data)
            try:
                self.client.update(summary)
            except Conflict as err:
                raise Requeue(f"{namespace}/{SUMMARY_NAME} changed since cached") from err
            log.info("updated %s/%s: %s", namespace, SUMMARY_NAME, dict(data))

    def _delete(self, namespace: str, existing: ConfigMap) -> None:
        try:  # only the version we saw: not one someone recreated meanwhile
            uid = existing.metadata.uid if existing.metadata else None
            self.client.delete(ConfigMap, SUMMARY_NAME, namespace=namespace, uid=uid)
        except NotFound:
            pass
        except Conflict as err:
            raise Requeue(f"{namespace}/{SUMMARY_NAME} was replaced since cached") from err
        log.info("deleted %s/%s: no pods left", namespace, SUMMARY_NAME)


def _seed(api_client: Any) -> None:
    """A few pods for --local."""
    client = Client(api_client)
    for i, app in enumerate(["web", "web", "db", None, "web"]):
        client.create(
            Pod(
                metadata=ObjectMeta(
                    name=f"pod-{i}", namespace="default", labels={"app": app} if app else {}
                ),
                spec=PodSpec(containers=[Container(name="c", image="busybox")]),
            )
        )


def run(
    api_client: Any,
    stop: threading.Event,
    *,
    label_key: str = "app",
    leader_election_namespace: str | None = None,
) -> None:
    """Run the controller until stop; with a leader-election namespace, only while leading
    (losing the lease ends the run, as client-go controllers exit on OnStoppedLeading)."""
    factory = SharedInformerFactory(api_client)
    summary = PodSummaryController(factory, label_key=label_key)
    factory.start()
    try:
        if leader_election_namespace is None:
            summary.controller.run(stop)
            return
        identity = f"{socket.gethostname()}-{os.getpid()}"
        lock = LeaseLock(api_client, leader_election_namespace, "pod-summary", identity)
        elector = LeaderElector(
            LeaderElectionConfig(
                lock,
                LeaderCallbacks(
                    on_started_leading=summary.controller.run,
                    on_stopped_leading=stop.set,
                    on_new_leader=lambda leader: log.info("leader is now %s", leader),
                ),
                release_on_cancel=True,
                name="pod-summary",
            )
        )
        elector.run(stop)
    finally:
        factory.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--local", action="store_true", help="run against a LocalApiServer")
    parser.add_argument("--label-key", default="app", help="label whose values are counted")
    parser.add_argument(
        "--leader-elect-namespace",
        metavar="NS",
        help="run only while holding the Lease pod-summary in NS (for several replicas)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stop = threading.Event()
    if args.local:
        from kubeinformers.testing import LocalApiServer

        with LocalApiServer() as server:
            api_client = server.api_client()
            _seed(api_client)
            worker = threading.Thread(
                target=run,
                args=(api_client, stop),
                kwargs={
                    "label_key": args.label_key,
                    "leader_election_namespace": args.leader_elect_namespace,
                },
            )
            worker.start()
            client = Client(api_client)
            deadline = time.monotonic() + 30
            try:
                while time.monotonic() < deadline:
                    try:
                        cm = client.get(ConfigMap, SUMMARY_NAME, namespace="default")
                        print(f"default/{SUMMARY_NAME}: {cm.data}")
                        return 0
                    except NotFound:
                        stop.wait(0.2)
                print("no summary after 30 s")
                return 1
            finally:
                stop.set()
                worker.join()
    from kubernetes import config

    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    api_client = config.new_client_from_config()  # type: ignore[no-untyped-call]
    run(
        api_client,
        stop,
        label_key=args.label_key,
        leader_election_namespace=args.leader_elect_namespace,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
