"""mypy --strict checks a user's index function against the informer's model (B17): on a Pod
informer, `add_indexers({"by-node": lambda p: [p.spec.node_name]})` reads `p` as a Pod, and a
function of another model is rejected, not a failure at the first write of the store.
"""

from __future__ import annotations

from pathlib import Path

from tests.generator.genutil import mypy_errors, mypy_rejects_each

HEADER = """\
from __future__ import annotations

from kubeinformers.generated.core.v1 import Node, Pod
from kubeinformers.generated.core.v1.informers import CoreV1Informers
from kubeinformers.runtime.cache.store import (
    IndexFunc,
    Indexers,
    KeyFunc,
    index_func_to_key_func_adapter,
    meta_namespace_index_func,
)


def node_of(pod: Pod) -> list[str]:
    return [pod.spec.node_name or ""] if pod.spec else []


def labels_of(node: Node) -> list[str]:
    return sorted(node.metadata.labels or {}) if node.metadata else []
"""

GOOD = (
    HEADER
    + """

def index_pods(core: CoreV1Informers) -> None:
    informer = core.pods().informer()
    informer.add_indexers({"by-node": lambda p: [p.spec.node_name or ""] if p.spec else []})
    informer.add_indexers({"by-node-2": node_of, "namespace": meta_namespace_index_func})
    by_node: IndexFunc[Pod] = node_of
    indexers: Indexers[Pod] = {"by-node-3": by_node}
    informer.add_indexers(indexers)
    key: KeyFunc[Pod] = index_func_to_key_func_adapter(node_of)
    print(key, informer.get_indexer().by_index("by-node", "node-1"))
"""
)

# One mistake per function; each must be reported on its own line.
BAD = {
    "function_of_another_model": (
        'core.pods().informer().add_indexers({"by-label": labels_of})',
        'Dict entry 0 has incompatible type "str": "Callable[[Node], list[str]]"; '
        'expected "str": "Callable[[Pod], list[str]]"',
    ),
    "lambda_reading_a_field_the_model_lacks": (
        'core.pods().informer().add_indexers({"by-x": lambda p: [p.no_such_field]})',
        '"Pod" has no attribute "no_such_field"',
    ),
    "index_func_typed_for_another_model": (
        "core.nodes().informer().add_indexers({'by-node': node_of})",
        'expected "str": "Callable[[Node], list[str]]"',
    ),
}


def test_b17_mypy_accepts_index_functions_of_the_informers_model(tmp_path: Path) -> None:
    usage = tmp_path / "indexer_typing_good.py"
    usage.write_text(GOOD)
    assert mypy_errors(usage) == []


def test_b17_mypy_rejects_index_functions_of_another_model(tmp_path: Path) -> None:
    mypy_rejects_each(tmp_path / "indexer_typing_bad.py", HEADER, BAD, "core: CoreV1Informers")
