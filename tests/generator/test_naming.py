"""Names the generator gives: words of API names, kind classes and modules, and the import
aliases that let a class keep its kind's name (issue 15, bug 4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubeinformers.generator import cli, imports, naming


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


@pytest.mark.parametrize("api_name", ["type", "match", "case"])
def test_h35_soft_keywords_are_field_names_on_every_python(
    api_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """H35: `type` became a soft keyword in Python 3.12; a generator run there must still
    write `type: str` (every condition's `type`), not `type_`, as on 3.11. Simulated here
    whatever Python runs the test: every word a soft keyword, as a future Python may make it."""
    monkeypatch.setattr(naming.keyword, "issoftkeyword", lambda _word: True)
    monkeypatch.setattr(naming.keyword, "softkwlist", ["_", "case", "match", "type"])
    naming.field_name.cache_clear()
    try:
        assert naming.field_name(api_name) == api_name
        assert naming.safe_identifier(api_name) == api_name
        assert naming.field_name("class") == "class_"  # a keyword: renamed, everywhere
    finally:
        naming.field_name.cache_clear()


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
    assert naming.kind_module("Apply") == "apply_"  # the package of the apply configurations
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


# H11: group accessors when first labels agree.
@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        # a Crossplane provider: each service in two scopes, and the provider's own groups
        (
            ["ec2.aws.upbound.io", "ec2.aws.m.upbound.io", "aws.upbound.io", "aws.m.upbound.io"],
            {
                "ec2.aws.upbound.io": "ec2",
                "ec2.aws.m.upbound.io": "ec2_m",
                "aws.upbound.io": "aws",
                "aws.m.upbound.io": "aws_m",
            },
        ),
        (
            ["ops.alpha.example.com", "ops.beta.example.org"],
            {"ops.alpha.example.com": "ops_alpha", "ops.beta.example.org": "ops_beta"},
        ),
        # a built-in group keeps its short name
        (["apps", "apps.example.com"], {"apps": "apps", "apps.example.com": "apps_example"}),
        # three providers' ec2: the differing labels, and the scope after them
        (
            ["ec2.aws.upbound.io", "ec2.aws.m.upbound.io", "ec2.gcp.upbound.io"],
            {
                "ec2.aws.upbound.io": "ec2_aws",
                "ec2.aws.m.upbound.io": "ec2_aws_m",
                "ec2.gcp.upbound.io": "ec2_gcp",
            },
        ),
        # labels reordered: the first that differs tells them apart
        (["a.x.y.io", "a.y.x.io"], {"a.x.y.io": "a_x", "a.y.x.io": "a_y"}),
    ],
)
def test_groups_sharing_a_first_label_add_the_labels_that_set_them_apart(
    groups: list[str], expected: dict[str, str]
) -> None:
    names = naming.group_names(groups)
    assert names.names == expected
    assert naming.group_names(list(reversed(groups))).names == expected


def test_a_group_accessor_is_its_first_label_in_snake_case_and_never_a_keyword_or_ours() -> None:
    """H11: `cert-manager.io` is `cert_manager`; AWS's `lambda` service (both scopes) and a
    group named like a factory method get a trailing underscore, and no note is printed for
    a group that shares its first label with none."""
    names = naming.group_names(
        ["cert-manager.io", "lambda.aws.upbound.io", "lambda.aws.m.upbound.io", "start.example.com"]
    )
    assert names.names == {
        "cert-manager.io": "cert_manager",
        "lambda.aws.upbound.io": "lambda_",
        "lambda.aws.m.upbound.io": "lambda_m",
        "start.example.com": "start_",
    }
    assert len(names.collisions) == 1 and "lambda.aws.m.upbound.io" in names.collisions[0]


def test_group_name_resolutions_are_one_note_however_many_groups() -> None:
    """H11: a provider's 300 services in two scopes make one note, not 300."""
    groups = [f"svc{i}.aws{scope}.upbound.io" for i in range(300) for scope in ("", ".m")]
    names = naming.group_names(groups)
    assert names.names["svc7.aws.upbound.io"] == "svc7"
    assert names.names["svc7.aws.m.upbound.io"] == "svc7_m"
    assert len(set(names.names.values())) == 600
    assert len(names.collisions) == 1
    assert names.collisions[0].startswith("300 group(s) share their first label")


def test_names_that_would_still_clash_fall_back_to_lengthening_label_by_label() -> None:
    """`ec2-m.io` reads `ec2_m` too: the set-apart names would clash, so every clashing group
    is lengthened label by label instead (still unique, still order-independent)."""
    groups = ["ec2.aws.upbound.io", "ec2.aws.m.upbound.io", "ec2-m.io"]
    names = naming.group_names(groups).names
    assert len(set(names.values())) == 3
    assert names == naming.group_names(list(reversed(groups))).names


ISSUER = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: issuers.certs.example.com
spec:
  group: certs.example.com
  names: {kind: Issuer, plural: issuers, singular: issuer, listKind: IssuerList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              acme:
                type: object
                properties:
                  solvers:
                    type: array
                    items:
                      type: object
                      properties:
                        http01:
                          type: object
                          properties:
                            ingress:
                              type: object
                              properties:
                                podTemplate:
                                  type: object
                                  properties:
                                    spec:
                                      type: object
                                      properties:
                                        priorityClassName: {type: string}
                                        serviceAccountName: {type: string}
"""


def test_a_shortened_class_name_never_takes_another_objects_own_name(tmp_path: Path) -> None:
    """H11: the deep `...podTemplate.spec` (a 50-character path) is shortened, but not to
    `IssuerSpec`, the name of the kind's own `spec`, which would become `IssuerSpec2`."""
    (tmp_path / "issuers.yaml").write_text(ISSUER)
    result = cli.build(cli.collect(crds=[tmp_path]), "pkg", jobs=1)
    assert not result.errors
    code = result.files["certs/v1/issuer.py"]
    classes = re.findall(r"^class (\w+)\(", code, re.M)
    assert "IssuerSpec" in classes and not [c for c in classes if c.endswith("2")]
    assert "IssuerPodTemplateSpec" in classes
    assert re.search(r"^    spec: IssuerSpec \| None", code, re.M)


CLASHING_FIELDS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clashes.fieldnames.example.com}
spec:
  group: fieldnames.example.com
  names: {kind: Clash, plural: clashes}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              fooBar: {type: string}
              zed: {type: string}
              foo_bar: {type: string}
              foo-bar: {type: string}
"""


def test_the_note_of_clashing_fields_names_the_attribute_each_becomes(tmp_path: Path) -> None:
    """H11: fields that map to one Python name are numbered in schema order (`foo_bar`,
    `foo_bar_1`); the note says which attribute each later field becomes. With three fields
    it said `foo_bar_1 (and so on)` twice, while the third became `foo_bar_2`."""
    (tmp_path / "clashes.yaml").write_text(CLASHING_FIELDS)
    result = cli.build(cli.collect(crds=[tmp_path]), "pkg", jobs=1)
    assert not result.errors
    code = result.files["fieldnames/v1/clash.py"]
    numbered = re.findall(r"^    (foo_bar_\d): Annotated\[.*?alias=\"([^\"]+)\"", code, re.M | re.S)
    assert numbered == [("foo_bar_1", "foo_bar"), ("foo_bar_2", "foo-bar")]
    notes = [n for n in result.notes if "both read 'foo_bar'" in n]
    assert len(notes) == 2, result.notes
    assert notes[0].endswith("'foo_bar' becomes foo_bar_1"), notes
    assert notes[1].endswith("'foo-bar' becomes foo_bar_2"), notes
