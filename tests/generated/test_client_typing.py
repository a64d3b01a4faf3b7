"""mypy --strict checks the typed client's calls (M6): the model decides the return type, a
namespaced kind's get/patch/delete need `namespace=`, a cluster-scoped kind's take none,
status writes take only kinds with a status, and anything but a generated kind is refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.generator.genutil import REPO, run_mypy

HEADER = """\
from __future__ import annotations

from kubeinformers.generated.authentication.v1 import TokenReview, TokenReviewSpec
from kubeinformers.generated.core.v1 import ConfigMap, Node, Pod
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.generated.policy.v1 import Eviction
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
        'Value of type variable "WK" of "create" of "Client" cannot be "dict[str, str]"',
    ),
    "create_a_meta": (
        "client.create(ObjectMeta())",
        'Value of type variable "WK" of "create" of "Client" cannot be "ObjectMeta"',
    ),
    # A kind's class matched the protocols by its `__kube_lister__` class variable: mypy
    # accepted `client.create(ConfigMap)`, which failed at run time with a KindModelError
    # about pydantic's ModelMetaclass.
    "create_a_class": (
        "client.create(ConfigMap)",
        'Value of type variable "WK" of "create" of "Client" cannot be "type[ConfigMap]"',
    ),
    # M13: a kind served without list and watch is created, and nothing else.
    "get_a_token_review": (
        'client.get(TokenReview, "t")',
        'Value of type variable "CK" of "get" of "Client" cannot be "TokenReview"',
    ),
    "update_a_token_review": (
        "client.update(TokenReview(spec=TokenReviewSpec()))",
        'Value of type variable "K" of "update" of "Client" cannot be "TokenReview"',
    ),
    "create_a_review_class": (
        "client.create(TokenReview)",
        'Value of type variable "WK" of "create" of "Client" cannot be "type[TokenReview]"',
    ),
    # M15: the subresources patch and update write through are named.
    "patch_a_misspelt_subresource": (
        'client.patch(Pod, "p", {}, namespace="d", subresource="resise")',
        'No overload variant of "patch" of "Client" matches argument types',
    ),
    # M14: a kind created under an object is created, and nothing else.
    "get_an_eviction": (
        'client.get(Eviction, "p", namespace="d")',
        'Value of type variable "NK" of "get" of "Client" cannot be "Eviction"',
    ),
    "update_a_class": (
        "client.update(Pod)",
        'Value of type variable "K" of "update" of "Client" cannot be "type[Pod]"',
    ),
    "wrong_result_type": (
        'client.get(Node, "n").containers',
        '"Node" has no attribute "containers"',
    ),
    "unknown_patch_type": (
        'client.patch(Node, "n", {}, patch_type="yaml")',
        'No overload variant of "patch" of "Client" matches argument types',
    ),
    # M16: the field validations are named.
    "create_with_a_misspelt_field_validation": (
        'client.create(ConfigMap(), field_validation="strict")',
        'Argument "field_validation" to "create" of "Client" has incompatible type',
    ),
    "patch_with_a_misspelt_field_validation": (
        'client.patch(Node, "n", {}, field_validation="strict")',
        'No overload variant of "patch" of "Client" matches argument types',
    ),
    # The client took `api_client: Any`: a server URL passed mypy and failed at run time
    # with AttributeError; its `api_client` read back as Any.
    "client_of_a_url": (
        'Client("https://127.0.0.1:6443")',
        'Argument 1 to "Client" has incompatible type "str"; expected "ApiClient"',
    ),
    "api_client_is_typed": (
        "client.api_client.not_an_attribute",
        '"ApiClient" has no attribute "not_an_attribute"',
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


APPLY_HEADER = """\
from __future__ import annotations

from examples.informers.demo.v1.apply.widget import WidgetApply
from kubeinformers.generated.apps.v1 import Deployment
from kubeinformers.generated.apps.v1.apply import DeploymentApply, StatefulSetApply
from kubeinformers.generated.core.v1.apply import ConfigMapApply, ContainerApply
from kubeinformers.runtime.client.typed import AsyncClient, Client
"""

# M8: apply configurations. One mistake per function, each reported on its own line; the
# accepted uses (only spec.replicas plus identity, containers by name...) are in
# tests/typing/usage_client.py, which mypy must pass.
APPLY_BAD = {
    "wrong_field_name": (
        'DeploymentApply(metadata={"name": "w", "namespace": "d"}, spec={"replica": 3})',
        'Extra key "replica" for TypedDict "DeploymentSpecApply"',
    ),
    "wrong_value_type": (
        'DeploymentApply(metadata={"name": "w", "namespace": "d"}, spec={"replicas": "3"})',
        'TypedDict item "replicas" has type "int"',
    ),
    "container_without_its_name_key": (
        'DeploymentApply(metadata={"name": "w", "namespace": "d"}, '
        'spec={"template": {"spec": {"containers": [{"image": "nginx"}]}}})',
        'Missing key "name" for TypedDict "ContainerApply"',
    ),
    "port_without_its_container_port_key": (
        'ContainerApply(name="app", ports=[{"protocol": "TCP"}])',
        'Missing key "containerPort" for TypedDict "ContainerPortApply"',
    ),
    "namespaced_kind_without_namespace": (
        'DeploymentApply(metadata={"name": "w"})',
        'Missing key "namespace" for TypedDict "NamespacedObjectMetaApply"',
    ),
    "configuration_without_metadata": (
        'DeploymentApply(spec={"replicas": 1})',
        'Missing named argument "metadata" for "DeploymentApply"',
    ),
    "another_kinds_result": (
        '_a_deployment(client.apply(StatefulSetApply(metadata={"name": "s", "namespace": "d"})))',
        'Argument 1 to "_a_deployment" has incompatible type "StatefulSet"; expected "Deployment"',
    ),
    "another_kinds_configuration": (
        '_deployment_only(StatefulSetApply(metadata={"name": "s", "namespace": "d"}))',
        'Argument 1 to "_deployment_only" has incompatible type "StatefulSetApply"; '
        'expected "DeploymentApply"',
    ),
    "status_apply_of_a_kind_without_status": (
        'client.apply_status(ConfigMapApply(metadata={"name": "c", "namespace": "d"}))',
        'Value of type variable "SK" of "apply_status" of "Client" cannot be "ConfigMap"',
    ),
    "enum_value_the_crd_does_not_list": (
        'WidgetApply(metadata={"name": "w", "namespace": "d"}, spec={"size": "huge"})',
        "TypedDict item \"size\" has type \"Literal['small', 'medium', 'large']\"",
    ),
}

APPLY_ASYNC_BAD = {
    "async_another_kinds_result": (
        "_a_deployment(await aclient.apply("
        'StatefulSetApply(metadata={"name": "s", "namespace": "d"})))',
        'Argument 1 to "_a_deployment" has incompatible type "StatefulSet"; expected "Deployment"',
    ),
}


def test_m8_mypy_rejects_wrong_apply_configurations(tmp_path: Path) -> None:
    helper = (
        "\n\ndef _deployment_only(config: DeploymentApply) -> object:\n    return config\n"
        "\n\ndef _a_deployment(obj: Deployment) -> object:\n    return obj\n"
    )
    body = "".join(
        f"\n\ndef {name}(client: Client) -> object:\n    return {expr}\n"
        for name, (expr, _) in APPLY_BAD.items()
    ) + "".join(
        f"\n\nasync def {name}(aclient: AsyncClient) -> object:\n    return {expr}\n"
        for name, (expr, _) in APPLY_ASYNC_BAD.items()
    )
    misuse = tmp_path / "apply_bad.py"
    misuse.write_text(APPLY_HEADER + helper + body)
    out = run_mypy([misuse], cwd=REPO, mypy_path=[]).stdout
    errors = _errors_in(misuse, out)
    expected = {**APPLY_BAD, **APPLY_ASYNC_BAD}
    for name, (_, message) in expected.items():
        assert [e for e in errors if message in e], f"{name}: {message!r} not in\n{out}"
    assert len(errors) == len(expected), textwrap.indent(out, "  ")
