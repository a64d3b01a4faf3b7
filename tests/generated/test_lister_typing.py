"""mypy --strict knows a lister's scope (H9): a namespaced kind is read through its namespace
step (`pods(ns).get(name)`), a cluster-scoped kind directly (`nodes().lister().get(name)`);
the wrong one is a type error, not a TypeError at run time.
"""

from __future__ import annotations

from pathlib import Path

from kubeinformers.generated.core.v1.listers import NodeLister, PodLister
from kubeinformers.runtime.cache.listers import ClusterLister, Lister, NamespacedLister
from tests.generator.genutil import mypy_errors, mypy_rejects_each

HEADER = """\
from __future__ import annotations

from kubeinformers.generated.core.v1 import Node, Pod
from kubeinformers.generated.core.v1.informers import CoreV1Informers
"""

GOOD = (
    HEADER
    + """

def pod(core: CoreV1Informers) -> Pod:
    return core.pods().lister().pods("default").get("web")


def all_pods(core: CoreV1Informers) -> list[Pod]:
    return core.pods().lister().list("app=web") + core.pods().lister().pods("").list()


def node(core: CoreV1Informers) -> Node:
    return core.nodes().lister().get("node-1")


def nodes(core: CoreV1Informers) -> list[Node]:
    return core.nodes().lister().list("role=worker")
"""
)

# One mistake per function; each must be reported on its own line.
BAD = {
    "pod_without_namespace": (
        'core.pods().lister().get("web")',
        '"PodLister" has no attribute "get"',
    ),
    "node_by_namespace": (
        'core.nodes().lister().by_namespace("default")',
        '"NodeLister" has no attribute "by_namespace"',
    ),
    "node_namespace_step": (
        'core.nodes().lister().pods("default")',
        '"NodeLister" has no attribute "pods"',
    ),
}


def test_h9_generated_listers_subclass_the_base_of_their_scope() -> None:
    assert issubclass(PodLister, NamespacedLister) and not issubclass(PodLister, ClusterLister)
    assert issubclass(NodeLister, ClusterLister) and not issubclass(NodeLister, NamespacedLister)
    assert issubclass(PodLister, Lister) and issubclass(NodeLister, Lister)


def test_h9_mypy_accepts_reads_that_match_the_scope(tmp_path: Path) -> None:
    usage = tmp_path / "lister_scope_good.py"
    usage.write_text(GOOD)
    assert mypy_errors(usage) == []


def test_h9_mypy_rejects_get_without_namespace_and_a_namespace_step_on_cluster_kinds(
    tmp_path: Path,
) -> None:
    mypy_rejects_each(tmp_path / "lister_scope_bad.py", HEADER, BAD, "core: CoreV1Informers")
