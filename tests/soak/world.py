"""The soak's world: the server, the objects a writer churns, and what each selection holds.

Every write goes through `World.lock` together with its record in `World.history`, so a
checker holding the lock sees the server and the history agree: a (key, resourceVersion) that a
cache holds but the history lacks was never served (a phantom).
"""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubeinformers.runtime import labels
from tests.support.cluster import Cluster

REPO = Path(__file__).resolve().parents[2]
WIDGET_CRD = REPO / "crds" / "demo.kubeinformers.io_widgets.yaml"
NAMESPACES = ("soak-a", "soak-b")
WIDGET_SELECTOR = "tier in (gold,silver)"
TIERS = ("gold", "silver", "bronze")
# The "upgrade-crd" fault (issue 27, K11/K12): the value the upgraded Widget CRD adds to the
# `size` enum; after it `replicas` is a string and `parts` a map (name -> count).
NEW_SIZE = "huge"


@dataclass(frozen=True)
class Kind:
    """One kind the writer churns: how to build it and how many to keep around."""

    api_version: str
    kind: str
    prefix: str
    target: int


PODS = Kind("v1", "Pod", "pod", 120)
CONFIGMAPS = Kind("v1", "ConfigMap", "cm", 120)
WIDGETS = Kind("demo.kubeinformers.io/v1", "Widget", "wdg", 90)
KINDS = (PODS, CONFIGMAPS, WIDGETS)
WRITE_WEIGHTS = (0.4, 0.35, 0.25)


@dataclass(frozen=True)
class Selection:
    """What one informer should hold: a kind, optionally one namespace and a label selector."""

    kind: Kind
    namespace: str | None = None
    selector: str | None = None

    def describe(self) -> str:
        parts = [self.kind.kind]
        if self.namespace:
            parts.append(f"ns={self.namespace}")
        if self.selector:
            parts.append(f"labels={self.selector}")
        return " ".join(parts)


def key_of(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


def _manifest(
    kind: Kind, name: str, ns: str, rng: random.Random, gen: int, upgraded: bool = False
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "labels": {"tier": rng.choice(TIERS), "gen": str(gen)},
    }
    obj: dict[str, Any] = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta}
    if kind is PODS:
        obj["spec"] = {"containers": [{"name": "c", "image": f"nginx:1.{rng.randint(20, 27)}"}]}
    elif kind is CONFIGMAPS:
        obj["data"] = {"gen": str(gen), "blob": "x" * rng.randint(0, 200)}
    else:
        obj["spec"] = widget_spec(rng, gen, upgraded)
    return obj


def widget_spec(rng: random.Random, gen: int, upgraded: bool) -> dict[str, Any]:
    """A Widget's spec in the CRD's first shape (the generated models') or, after the
    "upgrade-crd" fault, in the upgraded one: a new enum value sometimes (K12), `replicas` a
    string and `parts` a map (K11)."""
    if not upgraded:
        size = rng.choice(["small", "medium", "large"])
        return {
            "size": size,
            "replicas": gen % 7,
            "parts": [{"name": "bolt", "count": gen % 7 + 1}],
        }
    size = rng.choice(["small", "large", NEW_SIZE])
    return {"size": size, "replicas": f"{gen % 7}x", "parts": {"bolt": gen % 7 + 1}}


def upgraded_widget_crd(crd: dict[str, Any]) -> dict[str, Any]:
    """The Widget CRD as the server has it (`crd`, with its resourceVersion), upgraded
    incompatibly in its stored version v1: `size` gains NEW_SIZE, `replicas` becomes a string,
    `parts` a map (the scale subresource, which needs an integer replicas, goes)."""
    crd = copy.deepcopy(crd)
    for version in crd["spec"]["versions"]:
        if version["name"] != "v1":
            continue
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        spec["size"]["enum"] = [*spec["size"]["enum"], NEW_SIZE]
        spec["replicas"] = {"type": "string"}
        spec["parts"] = {"type": "object", "additionalProperties": {"type": "integer"}}
        version["subresources"] = {"status": {}}
        version["additionalPrinterColumns"] = [
            c for c in version.get("additionalPrinterColumns", []) if c["name"] != "Replicas"
        ]
    return crd


@dataclass
class WriteStats:
    creates: int = 0
    updates: int = 0
    deletes: int = 0

    @property
    def total(self) -> int:
        return self.creates + self.updates + self.deletes


@dataclass
class World:
    """The server (LocalApiServer, or a real one through RealCluster) plus the bookkeeping of
    everything written to it."""

    server: Cluster
    rng: random.Random
    lock: threading.RLock = field(default_factory=threading.RLock)
    # kind -> key -> every resourceVersion that key ever had on the server
    history: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    deleted: dict[str, set[str]] = field(default_factory=dict)
    live: dict[str, list[str]] = field(default_factory=dict)  # kind -> names (ns/name)
    stats: WriteStats = field(default_factory=WriteStats)
    # Set by the "upgrade-crd" fault once the server validates Widgets with the upgraded CRD:
    # from then on every Widget written is in the new shape.
    widgets_upgraded: bool = False
    # The CRD's resourceVersion then: a Widget stored before it is served pruned by the new
    # schema (`parts` items lose their fields) at the same resourceVersion it was cached at.
    upgraded_at: int = 0
    _serial: int = 0

    def setup(self) -> None:
        for ns in NAMESPACES:
            self.server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        crd = yaml.safe_load(WIDGET_CRD.read_text())
        self.server.create(crd)
        for kind in KINDS:
            self.history[kind.kind] = {}
            self.deleted[kind.kind] = set()
            self.live[kind.kind] = []
            # what the server holds of its own (a real one: kube-system configmaps) was served
            for obj in self.server.list(kind.api_version, kind.kind):
                self._record(kind, obj)
            for _ in range(kind.target // 2):
                self.create(kind)

    # --- writes (each under the lock, recorded before the lock is released) ---------------

    def _record(self, kind: Kind, obj: dict[str, Any]) -> None:
        self.history[kind.kind].setdefault(key_of(obj), set()).add(
            obj["metadata"]["resourceVersion"]
        )

    def _record_range(self, kind: Kind, key: str, before: int) -> None:
        """Every resourceVersion the server used since `before` was for `key` (we hold the
        lock: no other write ran). A pod's delete writes two: terminating, then deleted."""
        seen = self.history[kind.kind].setdefault(key, set())
        seen.update(str(rv) for rv in range(before + 1, self.server.resource_version + 1))

    def create(self, kind: Kind) -> None:
        with self.lock:
            self._serial += 1
            ns = self.rng.choice(NAMESPACES)
            name = f"{kind.prefix}-{self._serial:06d}"
            obj = self.server.create(_manifest(kind, name, ns, self.rng, 0, self.widgets_upgraded))
            self._record(kind, obj)
            self.live[kind.kind].append(f"{ns}/{name}")
            self.stats.creates += 1

    def update(self, kind: Kind) -> None:
        with self.lock:
            names = self.live[kind.kind]
            if not names:
                return
            ns, name = names[self.rng.randrange(len(names))].split("/")
            obj = self.server.get(kind.api_version, kind.kind, name, ns)
            gen = int(obj["metadata"]["labels"].get("gen", "0")) + 1
            obj["metadata"]["labels"]["gen"] = str(gen)
            if self.rng.random() < 0.3:  # moves objects in and out of label selections
                obj["metadata"]["labels"]["tier"] = self.rng.choice(TIERS)
            if kind is CONFIGMAPS:
                obj["data"] = {"gen": str(gen)}
            elif kind is WIDGETS:
                obj["spec"] = widget_spec(self.rng, gen, self.widgets_upgraded)
            self._record(kind, self.server.replace(obj))
            self.stats.updates += 1

    def delete(self, kind: Kind, index: int | None = None) -> str | None:
        with self.lock:
            names = self.live[kind.kind]
            if not names:
                return None
            i = self.rng.randrange(len(names)) if index is None else index % len(names)
            key = names.pop(i)
            ns, name = key.split("/")
            before = self.server.resource_version
            self.server.delete(kind.api_version, kind.kind, name, ns)
            self._record_range(kind, key, before)
            self.deleted[kind.kind].add(key)
            self.stats.deletes += 1
            return key

    def random_write(self) -> None:
        kind = self.rng.choices(KINDS, WRITE_WEIGHTS)[0]
        count = len(self.live[kind.kind])
        roll = self.rng.random()
        if count < kind.target * 0.3 or (roll < 0.35 and count < kind.target):
            self.create(kind)
        elif roll < 0.7 or count <= 1:
            self.update(kind)
        else:
            self.delete(kind)

    def renumbered(self) -> None:
        """After a restart that renumbered every object: record their new resourceVersions."""
        with self.lock:
            for kind in KINDS:
                for obj in self.server.list(kind.api_version, kind.kind):
                    self._record(kind, obj)

    # --- reads ------------------------------------------------------------------------------

    def expected(self, selection: Selection) -> dict[str, str]:
        """key -> resourceVersion of what the server holds for `selection`, right now."""
        kind = selection.kind
        match: Callable[[dict[str, str]], bool] = (
            labels.parse(selection.selector).matches if selection.selector else lambda _: True
        )
        return {
            key_of(o): o["metadata"]["resourceVersion"]
            for o in self.server.list(kind.api_version, kind.kind, selection.namespace)
            if match(o["metadata"].get("labels") or {})
        }

    def ever_served(self, kind: Kind, key: str, rv: str) -> bool:
        return rv in self.history[kind.kind].get(key, ())


class Writer:
    """A thread that keeps creating, updating and deleting objects until stopped."""

    def __init__(self, world: World, *, pause_every: float = 0.002) -> None:
        self.world = world
        self.pause_every = pause_every
        self.running = threading.Event()  # cleared: the writer idles (checkpoints)
        self.stop = threading.Event()
        self._gate = threading.Lock()  # held for each write and its `running` check
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, name="soak-writer", daemon=True)

    def start(self) -> None:
        self.running.set()
        self.thread.start()

    def pause(self) -> None:
        """Stop writing; returns once no write is in flight (and none will start)."""
        self.running.clear()
        with self._gate:
            pass

    def resume(self) -> None:
        self.running.set()

    def close(self) -> None:
        self.stop.set()
        self.running.set()
        self.thread.join(10)

    def _loop(self) -> None:
        while not self.stop.is_set():
            with self._gate:
                wrote = self.running.is_set() and not self.stop.is_set()
                if wrote:
                    try:
                        self.world.random_write()
                    except Exception as e:  # the writer's own bug: report it, stop writing
                        self.error = e
                        return
            if wrote:
                self.stop.wait(self.pause_every)
            else:
                self.running.wait(0.1)
