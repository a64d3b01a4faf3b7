"""mypy --strict checks the typed client's calls (M6): the model decides the return type, a
namespaced kind's get/patch/delete need `namespace=`, a cluster-scoped kind's take none,
status writes take only kinds with a status, and anything but a generated kind is refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.generator.genutil import REPO, run_mypy

HEADER = """\
from __future__ import annotations

from kubeinformers.generated.core.v1 import ConfigMap, Node, Pod
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.client.typed import AsyncClient, Client
"""

# One mistake per function; each must be reported on its own line.
BAD = {
    "pod_without_namespace": (
        'client.get(Pod, "web")',
        'Value of type variable "CK" of "get" of "Client" cannot be "Pod"',
    ),
    "node_with_namespace": (
        'client.get(Node, "n", namespace="default")',
        'Value of type variable "NK" of "get" of "Client" cannot be "Node"',
    ),
    "delete_pod_without_namespace": (
        'client.delete(Pod, "web")',
        'Value of type variable "CK" of "delete" of "Client" cannot be "Pod"',
    ),
    "list_nodes_in_a_namespace": (
        'client.list(Node, namespace="default")',
        'Value of type variable "NK" of "list" of "Client" cannot be "Node"',
    ),
    "status_of_a_configmap": (
        "client.update_status(ConfigMap())",
        'Value of type variable "SK" of "update_status" of "Client" cannot be "ConfigMap"',
    ),
    "create_a_dict": (
        'client.create({"kind": "Pod"})',
        'Value of type variable "K" of "create" of "Client" cannot be "dict[str, str]"',
    ),
    "create_a_meta": (
        "client.create(ObjectMeta())",
        'Value of type variable "K" of "create" of "Client" cannot be "ObjectMeta"',
    ),
    "wrong_result_type": (
        'client.get(Node, "n").containers',
        '"Node" has no attribute "containers"',
    ),
    "unknown_patch_type": (
        'client.patch(Node, "n", {}, patch_type="yaml")',
        'No overload variant of "patch" of "Client" matches argument types',
    ),
}

ASYNC_BAD = {
    "async_pod_without_namespace": (
        'await aclient.get(Pod, "web")',
        'Value of type variable "CK" of "get" of "AsyncClient" cannot be "Pod"',
    ),
}


def _errors_in(path: Path, mypy_output: str) -> list[str]:
    return [
        line
        for line in mypy_output.splitlines()
        if ": error:" in line and line.split(":", 1)[0].endswith(path.name)
    ]


def test_m6_mypy_rejects_wrong_kinds_scopes_and_types(tmp_path: Path) -> None:
    body = "".join(
        f"\n\ndef {name}(client: Client) -> object:\n    return {expr}\n"
        for name, (expr, _) in BAD.items()
    ) + "".join(
        f"\n\nasync def {name}(aclient: AsyncClient) -> object:\n    return {expr}\n"
        for name, (expr, _) in ASYNC_BAD.items()
    )
    misuse = tmp_path / "client_bad.py"
    misuse.write_text(HEADER + body)
    out = run_mypy([misuse], cwd=REPO, mypy_path=[]).stdout
    errors = _errors_in(misuse, out)
    expected = {**BAD, **ASYNC_BAD}
    for name, (_, message) in expected.items():
        assert [e for e in errors if message in e], f"{name}: {message!r} not in\n{out}"
    assert len(errors) == len(expected), textwrap.indent(out, "  ")
