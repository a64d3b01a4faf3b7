"""The public face: what users import, pinned name by name.

* `kubeinformers` holds what a controller author uses; `kubeinformers.testing` the test
  doubles; `kubeinformers.generator` the generator's entry point; `kubeinformers.labels`
  (the package `kubeinformers.runtime.labels`) label selectors. Each face's names are pinned
  here exactly: adding or removing a public name is a decision, made in this file too.
* Each face is written once: its names are the `from m import X as X` re-exports under
  `if TYPE_CHECKING:` (what mypy reads) and nothing else — no `__all__`, no second table; at
  run time `kubeinformers._exports` serves the same names lazily, and every one resolves.
* Every other package `__init__` of the runtime and the test servers is a docstring only:
  runtime code imports names from their defining modules.
* Examples, the README and every code in docs/ import only public names: from a face (its
  names), or a generated package — never a runtime module.
* `import kubeinformers` imports nothing but the package and its lazy-face helper.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import kubeinformers
from kubeinformers import _exports
from tests.e2e.test_doc_code_blocks import doc_files, python_blocks

REPO = Path(kubeinformers.__file__).parent.parent
GENERATED = ("kubeinformers.generated", "examples.informers")

FACES: dict[str, set[str]] = {
    "kubeinformers": {
        # factories and informers
        "SharedInformerFactory",
        "DynamicSharedInformerFactory",
        "MetadataSharedInformerFactory",
        "PartialObjectMetadata",
        "GenericInformer",
        "SharedIndexInformer",
        "GroupVersionResource",
        "ListOptions",
        "discover_resource",
        "strip_managed_fields",
        "chain_transforms",
        "freeze_burst_survivors",
        "release_freed_memory",
        "Indexer",
        "NAMESPACE_INDEX",  # the warning of a lister without it names these two
        "meta_namespace_index_func",
        # sharding (section N)
        "Shard",
        "ShardRange",
        "LeftShard",
        # listers
        "Lister",
        "ClusterLister",
        "NamespacedLister",
        "GenericLister",
        "NotFoundError",
        # handlers and events
        "ResourceEventHandler",
        "ResourceEventHandlerFuncs",
        "FilteringResourceEventHandler",
        "DeletedFinalStateUnknown",
        "EventStream",
        "InformerEvent",
        "Added",
        "Updated",
        "Deleted",
        # keys and metadata
        "meta_namespace_key",
        "deletion_handling_meta_namespace_key",
        "split_meta_namespace_key",
        "object_name",
        "object_namespace",
        "object_labels",
        "object_annotations",
        "object_uid",
        "object_resource_version",
        # errors a user catches
        "CacheSyncTimeoutError",
        "NoInformerFoundError",
        "InvalidObjectError",
        "InvalidFieldError",  # issue 27: one field of a server newer than the models (K11)
        "DiscoveryError",
        "KindModelError",
        # what a value a CRD's enum gained after generation reads as (K12)
        "UnknownEnumValue",
        # the reconcile loop, work queues and the rate limiters a user picks
        "ReconcileLoop",
        "Requeue",
        "AsyncReconcileLoop",
        "WorkQueue",
        "RateLimitingQueue",
        "AsyncRateLimitingQueue",
        "ItemExponentialFailureRateLimiter",
        "default_controller_rate_limiter",
        # leader election
        "LeaderElector",
        "LeaderElectionConfig",
        "LeaderCallbacks",
        "LeaseLock",
        "AsyncLeaderElector",
        # the shard ring over Leases (issue 29, N20-N24)
        "ShardRing",
        "AsyncShardRing",
        "RingStoppedError",
        "RingHealth",
        "RingMetrics",
        # selectors
        "labels",
        "Selector",
        # metrics and health
        "register_prometheus",
        "unregister_prometheus",
        "FactoryHealth",
        "InformerHealth",
        # the typed client (issue 28) and the errors its calls raise
        "Client",
        "AsyncClient",
        "ApplyConfiguration",
        "retry_on_conflict",
        "retry_on_conflict_async",
        "ReadYourWritesTimeout",
        "UnreadableAnswerError",  # a 2xx answer with no object in it (K11)
        "Status",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Invalid",
        "Forbidden",
        "Unauthorized",
        "TooManyRequests",
    },
    "kubeinformers.testing": {"FakeClock", "FakeListerWatcher", "LocalApiServer", "RealApiServer"},
    "kubeinformers.generator": {"main"},
    "kubeinformers.runtime.labels": {
        "Operator",
        "Requirement",
        "Selector",
        "everything",
        "nothing",
        "parse",
        "to_selector",
    },
}
# The faces users import from by path; `labels` is reached as `kubeinformers.labels`
# (`from kubeinformers import labels`; `labels.parse(...)`).
IMPORTABLE_FACES = ("kubeinformers", "kubeinformers.testing", "kubeinformers.generator")

# Package `__init__`s that are not faces: a docstring and nothing else.
NOT_FACES = [
    "kubeinformers.runtime",
    "kubeinformers.runtime.api",
    "kubeinformers.runtime.cache",
    "kubeinformers.runtime.client",
    "kubeinformers.runtime.codec",
    "kubeinformers.runtime.codec.protobuf",
    "kubeinformers.runtime.reflector",
    "kubeinformers.runtime.workqueue",
    "kubeinformers.testing.apiserver",
]


def source_of(package: str) -> ast.Module:
    module = importlib.import_module(package)
    return ast.parse(Path(str(module.__file__)).read_text())


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_exports_exactly_its_pinned_names(face: str) -> None:
    module = importlib.import_module(face)
    assert set(_exports.face_names(module)) == FACES[face]
    assert set(module.__all__) == FACES[face]
    assert FACES[face] <= set(dir(module))


@pytest.mark.parametrize("face", sorted(FACES))
def test_every_name_of_a_face_resolves_to_its_defining_module_object(face: str) -> None:
    module = importlib.import_module(face)
    for name, (defining, attribute) in _exports.face_names(module).items():
        expected = importlib.import_module(defining)
        value = getattr(expected, attribute, None)
        if value is None:
            value = importlib.import_module(f"{defining}.{attribute}")
        assert getattr(module, name) is value, f"{face}.{name}"
    with pytest.raises(AttributeError, match=f"module '{face}' has no attribute 'NotAName'"):
        _ = module.NotAName


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_is_written_once(face: str) -> None:
    """Only the re-exports name the public names: no `__all__`, no table beside them."""
    tree = source_of(face)
    assigned = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert assigned <= {"TYPE_CHECKING", "__version__"}, assigned
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]


def test_star_import_brings_exactly_the_face() -> None:
    namespace: dict[str, object] = {}
    exec("from kubeinformers import *", namespace)
    assert set(namespace) - {"__builtins__"} == FACES["kubeinformers"]


def test_the_labels_face_is_reached_from_the_top_level() -> None:
    assert kubeinformers.labels is importlib.import_module("kubeinformers.runtime.labels")
    assert str(kubeinformers.labels.parse("app=web")) == "app=web"


def test_test_doubles_are_only_in_kubeinformers_testing() -> None:
    doubles = FACES["kubeinformers.testing"]
    assert not doubles & FACES["kubeinformers"]
    for name in doubles:
        assert not hasattr(kubeinformers, name)


@pytest.mark.parametrize("package", NOT_FACES)
def test_a_package_that_is_not_a_face_is_a_docstring_only(package: str) -> None:
    tree = source_of(package)
    assert len(tree.body) <= 1
    assert all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in tree.body)


def test_importing_kubeinformers_imports_only_the_package() -> None:
    code = (
        "import sys, kubeinformers\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubeinformers')))\n"
        "print('pydantic' in sys.modules, 'typing' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[0] == "['kubeinformers', 'kubeinformers._exports']"
    assert out[1] == "False False"


# --- examples, README and docs import only public names ---


def non_public_imports(source: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if name.startswith("kubeinformers") and not name.startswith(GENERATED):
                    yield f"import {name}"
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            module = node.module
            if not module.startswith("kubeinformers") or module.startswith(GENERATED):
                continue
            public = FACES[module] if module in IMPORTABLE_FACES else set()
            for alias in node.names:
                if alias.name not in public:
                    yield f"from {module} import {alias.name}"


INLINE_IMPORT = re.compile(r"from kubeinformers[\w.]* import [\w, ]+")


def user_facing_sources() -> Iterator[tuple[str, str]]:
    """(where, code): each example, each ```python block of README.md and docs/, and each
    one-line `from kubeinformers... import ...` written in their prose or tables."""
    for path in sorted((REPO / "examples").glob("*.py")):
        yield str(path.relative_to(REPO)), path.read_text()
    for path in doc_files():
        for block in python_blocks(path):
            yield block.where, block.code
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            for match in INLINE_IMPORT.finditer(line):
                yield f"{path.relative_to(REPO)}:{i}", match.group(0).rstrip(", ")


@pytest.mark.parametrize(("where", "source"), list(user_facing_sources()))
def test_examples_and_docs_import_only_public_names(where: str, source: str) -> None:
    found = sorted(set(non_public_imports(source)))
    assert not found, f"{where} imports names that are not public:\n" + "\n".join(found)


def test_the_public_names_check_catches_runtime_imports_and_test_doubles_at_the_top() -> None:
    source = (
        "from kubeinformers.runtime.api.keys import meta_namespace_key\n"
        "import kubeinformers.runtime\n"
        "from kubeinformers import _exports, LocalApiServer, SharedInformerFactory\n"
        "from kubeinformers.testing import LocalApiServer as Server\n"
        "from kubeinformers.runtime.labels import parse\n"
        "from kubeinformers.generated.core.v1 import Pod\n"
    )
    assert sorted(non_public_imports(source)) == [
        "from kubeinformers import LocalApiServer",
        "from kubeinformers import _exports",
        "from kubeinformers.runtime.api.keys import meta_namespace_key",
        "from kubeinformers.runtime.labels import parse",
        "import kubeinformers.runtime",
    ]
