"""The generated protobuf table (`kubeinformers.generated.protobuf_schema`): a message for
every built-in kind the informers serve, closed under references, with the contract's
fields (kubeinformers.runtime.codec.protobuf.schema), so that every served built-in kind
can be read from protobuf as the JSON Go writes for it (K1, K3 in docs/behaviour.md).
`make verify` checks the module is what the generator writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubeinformers.generated import protobuf_schema as table
from kubeinformers.generated.registry import RESOURCES
from kubeinformers.generator import protobuf_table
from kubeinformers.runtime.codec.protobuf import schema as pb

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
# Served by the generated informers, but not in k8s.io/api v0.36.3: their group lives in
# apiextensions-apiserver / kube-aggregator, or the OpenAPI input (Kubernetes 1.35) has a
# version 1.36 dropped. They stay JSON.
NOT_IN_K8S_API = {
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "v1", "APIService"),
    ("scheduling.k8s.io", "v1alpha1", "Workload"),
}


def test_every_served_builtin_kind_has_its_message() -> None:
    served = {(r.group, r.version, r.kind) for r in RESOURCES if {"list", "watch"} <= r.verbs}
    assert served - set(table.KINDS) == NOT_IN_K8S_API
    assert set(table.KINDS) <= served
    for gvk, message in table.KINDS.items():
        assert message in table.MESSAGES, gvk
        assert table.MESSAGES[message][0][:4] == (1, "metadata", pb.MESSAGE, f"{META}.ObjectMeta")


def test_the_table_is_closed_under_references_and_holds_only_reachable_messages() -> None:
    refs = {f[3] for fields in table.MESSAGES.values() for f in fields if f[3] is not None}
    assert refs <= set(table.MESSAGES)
    roots = list(table.KINDS.values())
    assert protobuf_table.reachable(table.MESSAGES, roots) == set(table.MESSAGES)
    for name, fields in table.MESSAGES.items():
        numbers = [f[0] for f in fields]
        assert numbers == sorted(set(numbers)), name
        for _, _, kind, ref, _ in fields:
            assert (ref is not None) == (kind == pb.MESSAGE), name


def test_pod_and_object_meta_fields() -> None:
    """A Pod is metadata, spec, status; ObjectMeta's fields with their JSON names and the
    contract's kinds and flags (creationTimestamp: TIME, omitempty+omitzero)."""
    pod = {f[0]: f for f in table.MESSAGES[table.KINDS[("", "v1", "Pod")]]}
    assert pod == {
        1: (1, "metadata", pb.MESSAGE, f"{META}.ObjectMeta", pb.OMITEMPTY),
        2: (2, "spec", pb.MESSAGE, "k8s.io.api.core.v1.PodSpec", pb.OMITEMPTY),
        3: (3, "status", pb.MESSAGE, "k8s.io.api.core.v1.PodStatus", pb.OMITEMPTY),
    }
    meta = {f[1]: f for f in table.MESSAGES[f"{META}.ObjectMeta"]}
    assert set(meta) == {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
    assert meta["resourceVersion"] == (6, "resourceVersion", pb.STRING, None, pb.OMITEMPTY)
    assert meta["creationTimestamp"] == (
        8,
        "creationTimestamp",
        pb.TIME,
        None,
        pb.OMITEMPTY | pb.OMITZERO,
    )
    assert meta["deletionTimestamp"][2:] == (pb.TIME, None, pb.POINTER | pb.OMITEMPTY)
    assert meta["labels"][2:] == (pb.STRING, None, pb.MAP | pb.OMITEMPTY)
    assert meta["managedFields"][3] == f"{META}.ManagedFieldsEntry"
    fields_v1 = {f[1]: f for f in table.MESSAGES[f"{META}.ManagedFieldsEntry"]}["fieldsV1"]
    assert fields_v1[2:] == (pb.RAW_JSON, None, pb.POINTER | pb.OMITEMPTY)


def test_tricky_shapes_of_the_real_api() -> None:
    """Volume inlines its VolumeSource, resources are maps of Quantity, Secret data is a map
    of bytes, a Service's targetPort is an IntOrString, a Lease's times are MicroTime, and a
    CSR's `extra` is a map of go-to-protobuf's ExtraValue wrapper (ITEMS)."""
    by_name = {name: {f[1]: f[2:] for f in fields} for name, fields in table.MESSAGES.items()}
    core = "k8s.io.api.core.v1"
    assert by_name[f"{core}.Volume"][""] == (pb.MESSAGE, f"{core}.VolumeSource", pb.INLINE)
    assert by_name[f"{core}.ResourceRequirements"]["limits"] == (
        pb.QUANTITY,
        None,
        pb.MAP | pb.OMITEMPTY,
    )
    assert by_name[f"{core}.Secret"]["data"] == (pb.BYTES, None, pb.MAP | pb.OMITEMPTY)
    assert by_name[f"{core}.ServicePort"]["targetPort"] == (pb.INT_OR_STRING, None, pb.OMITEMPTY)
    lease = by_name["k8s.io.api.coordination.v1.LeaseSpec"]
    assert lease["renewTime"] == (pb.MICROTIME, None, pb.POINTER | pb.OMITEMPTY)
    extra = "k8s.io.api.certificates.v1.ExtraValue"
    csr = by_name["k8s.io.api.certificates.v1.CertificateSigningRequestSpec"]
    assert csr["extra"] == (pb.MESSAGE, extra, pb.MAP | pb.OMITEMPTY | pb.ITEMS)
    assert table.MESSAGES[extra] == ((1, "items", pb.STRING, None, pb.REPEATED),)
    hpa = by_name["k8s.io.api.autoscaling.v2.MetricTarget"]
    assert hpa["averageValue"] == (pb.QUANTITY, None, pb.POINTER | pb.OMITEMPTY)


def test_a_schema_written_for_another_contract_is_refused(tmp_path: Path) -> None:
    """Kind or flag numbers that differ from the runtime's would misread every object."""
    data = json.loads(protobuf_table.SCHEMA_FILE.read_text())
    data["legend"]["kinds"]["STRING"] = 99
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="another schema contract"):
        protobuf_table.load(path)


def test_d25_the_table_says_the_kubernetes_release_it_describes() -> None:
    """The runtime reads a server newer than this release as JSON (D25)."""
    assert table.KUBERNETES_VERSION == (1, 36)
    assert protobuf_table.kubernetes_version("k8s.io/api v0.36.3") == (1, 36)
    assert protobuf_table.kubernetes_version("k8s.io/api v0.37.0-alpha.1") == (1, 37)
    assert protobuf_table.kubernetes_version("somewhere else") is None
