"""`make demo`: the typed path of kubeinformers end to end, in well under a minute.

    python -m examples.demo            # KUBECONFIG set: that cluster; else an embedded server

1. Generate typed informers for the example CRDs in crds/ (Widget, namespaced; Gadget,
   cluster-scoped) into examples/informers, as `make generate` does.
2. Connect: the cluster of $KUBECONFIG, or a LocalApiServer over HTTPS with a bearer token.
3. Install the CRDs and a namespace (and delete what an interrupted earlier run left in a
   KUBECONFIG cluster), then start ONE shared factory: pods and deployments from
   the built-in generated package, widgets and gadgets from the CRD package on the same
   factory, plus a metadata-only pod informer. Every event is printed.
4. Create, change and delete objects through the typed client (`factory.client()`: each write
   returns once the factory's cache has it) and print what the listers answer after each step; with the embedded server, the pod-summary controller of
   examples/configmap_summary runs alongside, and afterwards the asyncio operator of
   examples/async_operator (a ConfigMap per Widget, leader election, /healthz).
5. Clean up what it created, shut everything down and exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from examples import async_operator, configmap_summary
from examples.informers.demo.v1.gadget import Gadget, GadgetSpec
from examples.informers.demo.v1.widget import Widget, WidgetSpec
from kubeinformers import (
    AlreadyExists,
    Client,
    DeletedFinalStateUnknown,
    Forbidden,
    GroupVersionResource,
    MetadataSharedInformerFactory,
    NotFound,
    NotFoundError,
    Unauthorized,
    discover_resource,
    meta_namespace_key,
    strip_managed_fields,
)
from kubeinformers.generated.apiextensions.v1 import CustomResourceDefinition
from kubeinformers.generated.apps.v1 import Deployment, DeploymentSpec
from kubeinformers.generated.core.v1 import Container, Namespace, Pod, PodSpec, PodTemplateSpec
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import LabelSelector, ObjectMeta

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "kubeinformers-demo"
GROUP, VERSION = "demo.kubeinformers.io", "v1"
DEADLINE_SECONDS = 55.0
_print_lock = threading.Lock()


def say(line: str) -> None:
    """Handlers print from their own threads: one line at a time."""
    with _print_lock:
        print(line, flush=True)


# --- step 1: generate ------------------------------------------------------------------------


def generate_crd_informers() -> None:
    """Regenerate examples/informers from crds/ (deterministic: unchanged files are kept)."""
    from kubeinformers.generator import main as generate

    out = ROOT / "examples" / "informers"
    code = generate(
        ["--crd", str(ROOT / "crds"), "--out", str(out), "--package", "examples.informers", "-q"]
    )
    if code != 0:
        raise SystemExit(f"demo: generating informers from {ROOT / 'crds'} failed (exit {code})")
    say(f"generated typed informers for crds/ into {out.relative_to(ROOT)}/")


# --- step 2: connect ---------------------------------------------------------------------------


class CannotConnect(Exception):
    """The cluster of KUBECONFIG cannot be used: said in one line, without a traceback."""


@contextlib.contextmanager
def connect() -> Iterator[tuple[Any, bool]]:
    """(api_client, local): the KUBECONFIG cluster, or an embedded HTTPS server with a token."""
    if os.environ.get("KUBECONFIG"):
        from kubernetes import config

        try:
            api = config.new_client_from_config()  # type: ignore[no-untyped-call]
        except (config.ConfigException, OSError) as err:
            raise CannotConnect(
                f"cannot read the kubeconfig of KUBECONFIG={os.environ['KUBECONFIG']}: "
                f"{str(err).rstrip('.')}; "
                "unset KUBECONFIG to run against the embedded server"
            ) from None
        say(f"using the cluster of KUBECONFIG ({api.configuration.host})")
        yield api, False
        return
    from kubeinformers.testing import LocalApiServer

    with LocalApiServer(tls=True, token=secrets.token_urlsafe(16)) as server:
        say(f"started an embedded API server at {server.url} (TLS, bearer token)")
        yield server.api_client(), True


# --- step 3: install and watch ----------------------------------------------------------------


def install(api: Any, deadline: float) -> None:
    """The CRDs and the demo namespace (already present is fine); wait until they are served."""
    client = Client(api)
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            try:
                client.create(CustomResourceDefinition.model_validate(doc))
                say(f"created CRD {doc['metadata']['name']}")
            except AlreadyExists:
                pass
    with contextlib.suppress(AlreadyExists):
        client.create(Namespace(metadata=ObjectMeta(name=NAMESPACE)))
    for plural in ("widgets", "gadgets"):
        gvr = GroupVersionResource(GROUP, VERSION, plural)
        wait_until(functools.partial(_served, api, gvr), deadline, f"{gvr} to be served")


# What the demo creates in a cluster of KUBECONFIG. A run stopped half-way (Ctrl-C, a kill)
# leaves some behind, and the next run's creations would fail with AlreadyExists.
DEMO_OBJECTS: tuple[tuple[Any, str, str | None], ...] = (
    (Pod, "web-1", NAMESPACE),
    (Pod, "web-2", NAMESPACE),
    (Pod, "db-1", NAMESPACE),
    (Deployment, "frontend", NAMESPACE),
    (Widget, "w-small", NAMESPACE),
    (Widget, "w-large", NAMESPACE),
    (Gadget, "kubeinformers-demo-gadget", None),
)


def remove_leftovers(api: Any, deadline: float) -> None:
    """Delete what an earlier, interrupted run left behind and wait until it is gone."""
    client = Client(api)

    def exists(kind: Any, name: str, namespace: str | None) -> bool:
        try:
            if namespace is None:
                client.get(kind, name)
            else:
                client.get(kind, name, namespace=namespace)
        except NotFound:
            return False
        return True

    left = [obj for obj in DEMO_OBJECTS if exists(*obj)]
    if not left:
        return
    say(f"deleting what an interrupted earlier run left: {', '.join(name for _, name, _ in left)}")
    for kind, name, namespace in left:
        with contextlib.suppress(NotFound):
            if namespace is None:
                client.delete(kind, name)
            else:
                client.delete(kind, name, namespace=namespace)
    wait_until(
        lambda: not any(exists(*obj) for obj in left),
        deadline,
        "the objects of an earlier run to be deleted",
    )


def _served(api: Any, gvr: GroupVersionResource) -> bool:
    try:
        discover_resource(api, gvr)
        return True
    except LookupError:
        return False


def wait_until(condition: Callable[[], bool], deadline: float, what: str) -> None:
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"demo: gave up waiting for {what}")
        pause.wait(0.05)


class Printer:
    """A handler printing every notification of one kind in a readable form."""

    def __init__(self, kind: str, describe: Callable[[Any], str] = lambda o: "") -> None:
        self.kind = kind
        self.describe = describe

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        how = " (initial list)" if is_in_initial_list else ""
        say(f"  + {self.kind:<10} {meta_namespace_key(obj)}{how} {self.describe(obj)}")

    def on_update(self, old: Any, new: Any) -> None:
        before, after = self.describe(old), self.describe(new)
        change = f"{before} -> {after}" if before != after else after
        say(f"  ~ {self.kind:<10} {meta_namespace_key(new)} {change}")

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            say(f"  - {self.kind:<10} {obj.key} (deletion seen on relist)")
        else:
            say(f"  - {self.kind:<10} {meta_namespace_key(obj)}")


def _labels(obj: Pod) -> str:
    labels = obj.metadata.labels if obj.metadata is not None else None
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "-"
    if obj.metadata is not None and obj.metadata.deletion_timestamp is not None:
        text += " (terminating)"
    return text


def _replicas(obj: Deployment) -> str:
    return f"replicas={obj.spec.replicas if obj.spec is not None else '?'}"


# --- step 4: the script --------------------------------------------------------------------------


def new_pod(name: str, app: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels={"app": app, "demo": "yes"}),
        spec=PodSpec(containers=[Container(name="main", image="nginx:1.27")]),
    )


def new_deployment(name: str, replicas: int) -> Deployment:
    labels = {"app": name}
    return Deployment(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels=labels),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="main", image="nginx:1.27")]),
            ),
        ),
    )


def new_widget(name: str, size: Any, color: str) -> Widget:
    return Widget(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels={"color": color}),
        spec=WidgetSpec(size=size, color=color, replicas=1),
    )


def new_gadget(name: str, model: str) -> Gadget:
    return Gadget(
        metadata=ObjectMeta(name=name, labels={"demo": "yes"}),
        spec=GadgetSpec(model=model, capabilities=["wifi"]),
    )


def main() -> int:
    started = time.monotonic()
    deadline = started + DEADLINE_SECONDS
    generate_crd_informers()
    from examples.informers.informers import CustomInformers  # generated just now

    with connect() as (api, local):
        install(api, deadline)
        remove_leftovers(api, deadline)

        factory = SharedInformerFactory(api, namespace=NAMESPACE, transform=strip_managed_fields)
        crds = CustomInformers(factory)
        pods = factory.core().v1().pods()
        config_maps = factory.core().v1().config_maps()
        config_maps.informer()  # created now, so that the factory starts it
        deployments = factory.apps().v1().deployments()
        widgets = crds.demo().v1().widgets()
        gadgets = crds.demo().v1().gadgets()
        pods.informer().add_event_handler(Printer("pod", _labels))
        deployments.informer().add_event_handler(Printer("deployment", _replicas))
        widgets.informer().add_event_handler(
            Printer("widget", lambda w: f"size={w.spec.size}" if w.spec else "")
        )
        gadgets.informer().add_event_handler(
            Printer("gadget", lambda g: f"model={g.spec.model}" if g.spec else "")
        )
        metadata = MetadataSharedInformerFactory(
            api, metadata_model=ObjectMeta, namespace=NAMESPACE
        )
        pod_metadata = metadata.for_resource(pods.RESOURCE)

        stop_controller = threading.Event()
        controller: threading.Thread | None = None
        with factory, metadata:
            crds.start()  # the same as factory.start(): one shared factory
            metadata.start()
            synced = factory.wait_for_cache_sync(timeout=deadline - time.monotonic())
            metadata.wait_for_cache_sync(timeout=deadline - time.monotonic())
            say(
                f"caches synced: {', '.join(sorted(str(g.resource) for g, ok in synced.items() if ok))}"
            )
            if local:
                controller = threading.Thread(
                    target=configmap_summary.run, args=(api, stop_controller), daemon=True
                )
                controller.start()
            # Typed writes; each returns once this factory's informer of the kind has it.
            client = factory.client()

            say("\n== creating pods, a deployment, widgets and a gadget")
            for name, app in (("web-1", "web"), ("web-2", "web"), ("db-1", "db")):
                client.create(new_pod(name, app))
            client.create(new_deployment("frontend", 2))
            for name, size, color in (("w-small", "small", "red"), ("w-large", "large", "blue")):
                client.create(new_widget(name, size, color))
            client.create(new_gadget("kubeinformers-demo-gadget", "g-1"))
            wait_until(
                lambda: (
                    len(pods.lister().pods(NAMESPACE).list("demo=yes")) == 3
                    and len(widgets.lister().list()) == 2
                    and len(gadgets.lister().list("demo=yes")) == 1
                    and len(deployments.lister().list()) == 1
                ),
                deadline,
                "the creations to reach the caches",
            )
            report(pods, deployments, widgets, gadgets, pod_metadata.lister().list())
            if local:
                show_summary(config_maps, {"web": "2", "db": "1"}, deadline)

            say("\n== relabel db-1 as web, scale frontend to 3, grow w-small, delete w-large")
            relabel = {"metadata": {"labels": {"app": "web"}}}
            client.patch(Pod, "db-1", relabel, namespace=NAMESPACE, patch_type="strategic")
            client.patch(Deployment, "frontend", {"spec": {"replicas": 3}}, namespace=NAMESPACE)
            client.patch(Widget, "w-small", {"spec": {"size": "medium"}}, namespace=NAMESPACE)
            client.delete(Widget, "w-large", namespace=NAMESPACE)
            wait_until(
                lambda: (
                    len(pods.lister().pods(NAMESPACE).list("app=web")) == 3
                    and _size(widgets, "w-small") == "medium"
                    and len(widgets.lister().list()) == 1
                ),
                deadline,
                "the changes to reach the caches",
            )
            report(pods, deployments, widgets, gadgets, pod_metadata.lister().list())
            if local:
                show_summary(config_maps, {"web": "3"}, deadline)

            say("\n== cleaning up")
            for name in ("web-1", "web-2", "db-1"):
                client.delete(Pod, name, namespace=NAMESPACE)
            client.delete(Deployment, "frontend", namespace=NAMESPACE)
            client.delete(Widget, "w-small", namespace=NAMESPACE)
            client.delete(Gadget, "kubeinformers-demo-gadget")
            wait_until(
                lambda: (
                    not pods.lister().pods(NAMESPACE).list("demo=yes")
                    and not widgets.lister().list()
                    and not gadgets.lister().list("demo=yes")
                ),
                deadline,
                "the deletions to reach the caches",
            )
            if local:
                wait_until(
                    lambda: summary_data(config_maps) is None,
                    deadline,
                    "the pod-summary controller to delete its ConfigMap",
                )
                say("  the pod-summary controller deleted its ConfigMap: no pods left")
            stop_controller.set()
            if controller is not None:
                controller.join(timeout=10)
        if local:
            say("\n== an operator written with the asyncio API (examples/async_operator.py)")
            asyncio.run(async_operator.demo(api, NAMESPACE, say=say))
        say(f"\ndone in {time.monotonic() - started:.1f} s; every informer stopped")
    say(NEXT_STEPS)
    return 0


NEXT_STEPS = """
what next:
  read examples/demo.py, examples/configmap_summary.py (a controller with a work queue)
  and examples/async_operator.py (the same with asyncio: reconcile, leader election, health)
  make generate CRDS=path/to/your/crds OUT=yourapp/informers   typed informers for your CRDs
  docs/guide/ (make docs builds the site): getting started, testing, controllers, async, tuning"""


def _size(widgets: Any, name: str) -> str | None:
    try:
        widget = widgets.lister().widgets(NAMESPACE).get(name)
    except NotFoundError:
        return None
    return widget.spec.size if widget.spec is not None else None


def summary_data(config_maps: Any) -> dict[str, str] | None:
    try:
        summary = config_maps.lister().config_maps(NAMESPACE).get(configmap_summary.SUMMARY_NAME)
    except NotFoundError:
        return None
    return dict(summary.data or {})


def show_summary(config_maps: Any, expected: dict[str, str], deadline: float) -> None:
    """The ConfigMap the pod-summary controller (examples/configmap_summary) keeps up to date."""
    wait_until(
        lambda: summary_data(config_maps) == expected,
        deadline,
        f"the pod-summary controller to count {expected}",
    )
    say(f"  pod-summary ConfigMap:        {summary_data(config_maps)} (by the controller)")


def report(
    pods: Any, deployments: Any, widgets: Any, gadgets: Any, metadata_pods: list[Any]
) -> None:
    """What the listers answer now (all from the local caches, no API calls)."""
    web: list[Pod] = pods.lister().pods(NAMESPACE).list("app=web")
    say(
        f"  pods with app=web:            {sorted(p.metadata.name or '' for p in web if p.metadata)}"
    )
    not_db = pods.lister().pods(NAMESPACE).list("app notin (db),demo")
    say(f"  pods with app notin (db),demo: {len(not_db)}")
    frontend: Deployment = deployments.lister().deployments(NAMESPACE).get("frontend")
    say(f"  deployment frontend:          {_replicas(frontend)}")
    listed = widgets.lister().widgets(NAMESPACE).list()
    say(f"  widgets:                      {sorted((w.metadata.name, w.spec.size) for w in listed)}")
    gadget = gadgets.lister().get("kubeinformers-demo-gadget")
    say(f"  gadget (cluster-scoped):      model={gadget.spec.model}")
    say(f"  metadata-only pod cache:      {len(metadata_pods)} pods, no specs held")
    try:
        pods.lister().pods(NAMESPACE).get("nginx")
    except NotFoundError as err:
        say(f"  get nginx:                    NotFoundError: {err}")


def run() -> int:
    """`main()` for a terminal: a cluster that cannot be reached, a kubeconfig that cannot be
    read or credentials the cluster refuses end the demo with one line, not a traceback."""
    try:
        return main()
    except (CannotConnect, ConnectionError, Forbidden, Unauthorized) as err:
        print(f"demo: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run())
