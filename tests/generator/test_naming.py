"""Names the generator gives: words of API names, kind classes and modules, and the import
aliases that let a class keep its kind's name (issue 15, bug 4)."""

from __future__ import annotations

import pytest

from kubeinformers.generator import imports, naming


@pytest.mark.parametrize(
    ("api_name", "python_name"),
    [
        ("assignedIPv4", "assigned_ipv4"),
        ("enableK8sTokenAuth", "enable_k8s_token_auth"),
        ("k8sVersion", "k8s_version"),
        ("IPv6Pool", "ipv6_pool"),
        ("externalIPs", "external_ips"),
        ("podIPs", "pod_ips"),
        ("APIService", "api_service"),
        ("serverTLSBootstrap", "server_tls_bootstrap"),
        ("dns01", "dns01"),
        ("s3Bucket", "s3_bucket"),
        ("x-kubernetes-foo", "x_kubernetes_foo"),
    ],
)
def test_acronyms_and_versions_stay_one_word(api_name: str, python_name: str) -> None:
    assert naming.snake_case(api_name) == python_name


@pytest.mark.parametrize(
    ("kind", "cls", "renamed"),
    [
        ("postgresql", "postgresql", False),
        ("UUID", "UUID", False),
        ("Field", "Field", False),
        ("Any", "Any", False),
        ("None", "None_", True),
        ("class", "class_", True),
        ("my-kind", "my_kind", True),
    ],
)
def test_a_kind_is_its_own_class_name_unless_python_forbids_it(
    kind: str, cls: str, renamed: bool
) -> None:
    assert naming.kind_class(kind) == (cls, renamed)


def test_a_kind_module_never_shadows_a_class_of_its_package() -> None:
    assert naming.kind_module("PrometheusRule") == "prometheus_rule"
    assert naming.kind_module("postgresql") == "postgresql_models"  # the class is `postgresql`
    assert naming.kind_module("Models") == "models_"  # the package's models index
    assert naming.kind_module("IPPool", {"ip_pool"}) == "ip_pool2"


def test_restore_aliases_the_imports_a_class_name_would_shadow() -> None:
    ph = imports.placeholder(0)
    generated = (
        "from datetime import datetime\n"
        "from typing import Annotated, Any\n"
        "from pydantic import Field\n\n\n"
        f"class {ph}(KubeModel):\n"
        '    datetime: Annotated[datetime | None, Field(alias="datetime")] = None\n'
        "    extra: Any | None = None\n"
        "    other: other.datetime | None = None\n"
    )
    restored = imports.restore(generated, {ph: "datetime"})
    assert restored == (
        "from datetime import datetime as _datetime\n"
        "from typing import Annotated, Any\n"
        "from pydantic import Field\n\n\n"
        "class datetime(KubeModel):\n"
        '    datetime: Annotated[_datetime | None, Field(alias="datetime")] = None\n'
        "    extra: Any | None = None\n"
        "    other: other.datetime | None = None\n"
    )


def test_restore_leaves_modules_without_placeholders_alone() -> None:
    code = "from pydantic import Field\n\nx = Field()\n"
    assert imports.restore(code, {imports.placeholder(3): "Field"}) == code
