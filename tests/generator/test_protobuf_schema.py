"""The protobuf schema extractor (`tools/protobuf_schema.py`, a maintainers' tool outside the
package): Go declarations in, the contract's fields out (kubeinformers.runtime.codec.protobuf.
schema). The schema is what lets a protobuf object read as the JSON Go writes for it (K3,
docs/behaviour.md): its pointers, omitempty/omitzero, inlined structs, maps, times,
quantities. The committed JSON is checked against go-to-protobuf's own generated.proto files
of the same tag, recorded in tests/generator/fixtures/generated-proto
(`tools/record_generated_proto.py`), so the check runs in any clone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kubeinformers.runtime.codec.protobuf import schema as pb
from tests.generator.genutil import REPO
from tools import protobuf_schema as ps
from tools.record_generated_proto import SAMPLE, recorded_path

COMMITTED = REPO / "kubeinformers" / "generator" / "data" / "protobuf-k8s-1.36.json"

META_GO = """\
package v1

import "k8s.io/apimachinery/pkg/types"

type TypeMeta struct {
	Kind       string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,2,opt,name=apiVersion"`
}

type ObjectMeta struct {
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	UID types.UID `json:"uid,omitempty" protobuf:"bytes,5,opt,name=uid,casttype=k8s.io/kubernetes/pkg/types.UID"`
	CreationTimestamp Time `json:"creationTimestamp,omitempty,omitzero" protobuf:"bytes,8,opt,name=creationTimestamp"`
	DeletionTimestamp *Time `json:"deletionTimestamp,omitempty" protobuf:"bytes,9,opt,name=deletionTimestamp"`
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,11,rep,name=labels"`
}

type Time struct {
	time.Time `protobuf:"-"`
}

type MicroTime struct {
	time.Time `protobuf:"-"`
}

// Verbs masks the value so protobuf can generate
//
// +protobuf.nullable=true
type Verbs []string
"""

REGISTER_GO = 'package {pkg}\n\nconst GroupName = "{group}"\n'


def write_tree(tmp: Path, packages: dict[str, str]) -> tuple[Path, Path]:
    """A k8s.io/api and an apimachinery checkout holding `packages` ({api path: types.go})."""
    api, machinery = tmp / "api", tmp / "apimachinery"
    for rel in ps.APIMACHINERY_PACKAGES:
        (machinery / rel).mkdir(parents=True)
    (machinery / "pkg/apis/meta/v1/types.go").write_text(META_GO)
    (machinery / "pkg/types/uid.go").write_text("package types\n\ntype UID string\n")
    (machinery / "pkg/api/resource/quantity.go").write_text(
        "package resource\n\ntype Quantity struct {\n\ti int64\n}\n"
    )
    (machinery / "pkg/util/intstr/intstr.go").write_text(
        "package intstr\n\ntype IntOrString struct {\n\tType int64\n}\n"
    )
    for rel, source in packages.items():
        folder = api / rel
        folder.mkdir(parents=True)
        (folder / "generated.proto").write_text("")
        (folder / "types.go").write_text(source)
        group = "" if rel.startswith("core/") else rel.split("/")[0]
        (folder / "register.go").write_text(REGISTER_GO.format(pkg=folder.name, group=group))
    return api, machinery


def extract(
    tmp: Path, packages: dict[str, str]
) -> tuple[dict[str, dict[int, pb.Field]], list[list[str]]]:
    messages, kinds = ps.extract(ps.read_sources(*write_tree(tmp, packages)))
    return {name: {f[0]: f for f in fields} for name, fields in messages.items()}, kinds


CORE_GO = """\
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type ResourceName string

// ResourceList is a set of (resource name, quantity) pairs.
type ResourceList map[ResourceName]resource.Quantity

type Widget struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec WidgetSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

type WidgetSpec struct {
	// Comments, /* block comments */ and `tags` in comments are no fields.
	Name ResourceName `json:"name" protobuf:"bytes,1,opt,name=name,casttype=ResourceName"`
	Limits ResourceList `json:"limits,omitempty" protobuf:"bytes,2,rep,name=limits,casttype=ResourceList,castkey=ResourceName"`
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,3,opt,name=replicas"`
	Source `json:",inline" protobuf:"bytes,4,opt,name=source"`
	Port intstr.IntOrString `json:"port" protobuf:"bytes,5,opt,name=port"`
	Seen metav1.MicroTime `json:"seen,omitzero" protobuf:"bytes,6,opt,name=seen"`
	Data map[string][]byte `json:"data,omitempty" protobuf:"bytes,7,rep,name=data"`
	Ratio float64 `json:"ratio" protobuf:"fixed64,8,opt,name=ratio"`
	Internal string `json:"internal,omitempty"`
	Tags []string `json:"tags" protobuf:"bytes,9,rep,name=tags"`
	Verbs metav1.Verbs `json:"verbs" protobuf:"bytes,10,opt,name=verbs"`
}

type Source struct {
	Path *string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
}
"""


def test_field_kinds_flags_and_refs_follow_the_go_types_and_tags(tmp_path: Path) -> None:
    """Contract kinds: named string → STRING, map of Quantity → QUANTITY|MAP, *int32 →
    INT|POINTER, embedded `json:",inline"` struct → MESSAGE|INLINE with no JSON name, omitzero
    → OMITZERO, []byte values → BYTES, metav1.Verbs (+protobuf.nullable) → ITEMS; a field
    without a protobuf tag is not listed."""
    messages, kinds = extract(tmp_path, {"core/v1": CORE_GO})
    spec = messages["k8s.io.api.core.v1.WidgetSpec"]
    assert spec[1] == (1, "name", pb.STRING, None, 0)
    assert spec[2] == (2, "limits", pb.QUANTITY, None, pb.MAP | pb.OMITEMPTY)
    assert spec[3] == (3, "replicas", pb.INT, None, pb.POINTER | pb.OMITEMPTY)
    assert spec[4] == (4, "", pb.MESSAGE, "k8s.io.api.core.v1.Source", pb.INLINE)
    assert spec[5] == (5, "port", pb.INT_OR_STRING, None, 0)
    assert spec[6] == (6, "seen", pb.MICROTIME, None, pb.OMITZERO)
    assert spec[7] == (7, "data", pb.BYTES, None, pb.MAP | pb.OMITEMPTY)
    assert spec[8] == (8, "ratio", pb.DOUBLE, None, 0)
    assert spec[9] == (9, "tags", pb.STRING, None, pb.REPEATED)
    verbs = "k8s.io.apimachinery.pkg.apis.meta.v1.Verbs"
    assert spec[10] == (10, "verbs", pb.MESSAGE, verbs, pb.ITEMS)
    assert messages[verbs] == {1: (1, "items", pb.STRING, None, pb.REPEATED)}
    assert set(spec) == set(range(1, 11))  # `Internal` has no protobuf tag
    assert messages["k8s.io.api.core.v1.Source"][1] == (
        1,
        "path",
        pb.STRING,
        None,
        pb.POINTER | pb.OMITEMPTY,
    )
    meta = messages["k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    assert meta[5] == (5, "uid", pb.STRING, None, pb.OMITEMPTY)  # types.UID
    assert meta[8] == (8, "creationTimestamp", pb.TIME, None, pb.OMITEMPTY | pb.OMITZERO)
    assert meta[9] == (9, "deletionTimestamp", pb.TIME, None, pb.POINTER | pb.OMITEMPTY)
    # Leaf kinds' messages are not in the table.
    assert "k8s.io.apimachinery.pkg.apis.meta.v1.Time" not in messages
    assert kinds == [["", "v1", "Widget", "k8s.io.api.core.v1.Widget"]]
    widget = messages["k8s.io.api.core.v1.Widget"]
    assert list(widget) == [1, 2]  # TypeMeta has no protobuf tag


APPS_GO = """\
package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Gadget struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Template corev1.Template `json:"template" protobuf:"bytes,2,opt,name=template"`
	Rule Rule `json:"rule" protobuf:"bytes,3,opt,name=rule"`
	Copy Copied `json:"copy" protobuf:"bytes,4,opt,name=copy"`
}

type Rule = corev1.Template

type Copied corev1.Template
"""

TEMPLATE_GO = """\
package v1

type Template struct {
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
}
"""


def test_cross_package_references_aliases_and_named_structs(tmp_path: Path) -> None:
    """An import alias (`corev1.Template`) names the other package's message; a Go alias
    (`type Rule = corev1.Template`) is that message; a named struct type (`type Copied
    corev1.Template`) is a message of its own with the same fields, as go-to-protobuf
    writes it; the kind's group comes from register.go."""
    messages, kinds = extract(tmp_path, {"core/v1": TEMPLATE_GO, "apps/v1": APPS_GO})
    gadget = messages["k8s.io.api.apps.v1.Gadget"]
    assert gadget[2][3] == "k8s.io.api.core.v1.Template"
    assert gadget[3][3] == "k8s.io.api.core.v1.Template"
    assert gadget[4][3] == "k8s.io.api.apps.v1.Copied"
    assert messages["k8s.io.api.apps.v1.Copied"] == messages["k8s.io.api.core.v1.Template"]
    assert kinds == [["apps", "v1", "Gadget", "k8s.io.api.apps.v1.Gadget"]]


@pytest.mark.parametrize(
    ("declaration", "what"),
    [
        ('Matrix [][]string `json:"matrix" protobuf:"bytes,1,rep,name=matrix"`', "slice of"),
        ('ByPort map[int32]string `json:"byPort" protobuf:"bytes,1,rep,name=byPort"`', "key"),
        ('Groups map[string][]string `json:"groups" protobuf:"bytes,1,rep,name=groups"`', "map of"),
        ('Handler func() `json:"handler" protobuf:"bytes,1,opt,name=handler"`', "func"),
    ],
)
def test_an_unmappable_shape_fails_naming_the_type_and_field(
    tmp_path: Path, declaration: str, what: str
) -> None:
    """A shape the contract has no kind for stops the extraction: a silently wrong table
    would transcode objects wrongly."""
    source = f"package v1\n\ntype Odd struct {{\n\t{declaration}\n}}\n"
    with pytest.raises(ps.ExtractError) as caught:
        extract(tmp_path, {"core/v1": source})
    message = str(caught.value)
    assert "k8s.io/api/core/v1.Odd field" in message
    assert what in message


def test_the_command_writes_a_deterministic_sorted_file(tmp_path: Path) -> None:
    api, machinery = write_tree(tmp_path, {"core/v1": CORE_GO})
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        code = ps.main(
            [
                "--api",
                str(api),
                "--apimachinery",
                str(machinery),
                "--tag",
                "v9.9.9",
                "--out",
                str(out),
            ]
        )
        assert code == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    data = json.loads(outs[0])
    assert data["source"] == {"k8s.io/api": "v9.9.9", "k8s.io/apimachinery": "v9.9.9"}
    assert list(data["messages"]) == sorted(data["messages"])


# --- the committed JSON against go-to-protobuf's generated.proto --------------------------

_PROTO_FIELD = re.compile(
    r"^\s*(optional|repeated)?\s*(map<\s*\w+\s*,\s*([\w.]+)\s*>|[\w.]+)\s+\w+\s*=\s*(\d+)\s*;"
)
_SCALARS = {
    pb.STRING: "string",
    pb.BYTES: "bytes",
    pb.BOOL: "bool",
    pb.DOUBLE: "double",
    pb.FLOAT: "float",
}
_LEAF_MESSAGES = {
    pb.TIME: {"k8s.io.apimachinery.pkg.apis.meta.v1.Time"},
    pb.MICROTIME: {"k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"},
    pb.DURATION: {"k8s.io.apimachinery.pkg.apis.meta.v1.Duration"},
    pb.QUANTITY: {"k8s.io.apimachinery.pkg.api.resource.Quantity"},
    pb.INT_OR_STRING: {"k8s.io.apimachinery.pkg.util.intstr.IntOrString"},
    pb.RAW_JSON: {
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    },
}


def proto_messages(text: str) -> dict[str, dict[int, tuple[str, str]]]:
    """`message X {` and its `optional|repeated|map<..> type name = N;` lines: full message
    name → {number: (label, proto type)}; a map's label is "map", its type the value's."""
    package = re.search(r"^package\s+([\w.]+);", text, re.MULTILINE)
    assert package is not None
    out: dict[str, dict[int, tuple[str, str]]] = {}
    current: dict[int, tuple[str, str]] | None = None
    for line in text.splitlines():
        if m := re.match(r"^message\s+(\w+)\s*\{", line):
            current = out.setdefault(f"{package.group(1)}.{m.group(1)}", {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _PROTO_FIELD.match(line)):
            label, typ, map_value, number = m.groups()
            if map_value:
                label, typ = "map", map_value
            qualified = typ.lstrip(".") if "." in typ else typ
            if qualified == typ and typ not in _SCALARS.values() and typ[0].isupper():
                qualified = f"{package.group(1)}.{typ}"
            current[int(number)] = (label or "optional", qualified)
    return out


def test_committed_schema_agrees_with_generated_proto() -> None:
    """Every message of a sample of packages has go-to-protobuf's field numbers, labels
    (repeated, map) and types: scalars by kind, messages by `ref`, leaf kinds by their
    apimachinery message. The one intended difference: runtime.Unknown's `raw` (json:"-")."""
    data = json.loads(COMMITTED.read_text())
    tag = data["source"]["k8s.io/api"]
    messages: dict[str, list[list[object]]] = data["messages"]
    checked = 0
    for module, folder in SAMPLE:
        recorded = recorded_path(module, folder)
        text = recorded.read_text()
        assert text.startswith(f"// k8s.io/{module} {tag} {folder}/generated.proto\n"), (
            f"{recorded} was recorded at another tag than the committed schema's ({tag}): "
            "rerun tools/record_generated_proto.py"
        )
        for name, proto in proto_messages(text).items():
            ours = {int(str(f[0])): f for f in messages.get(name, [])}
            if not ours and all(name not in refs for refs in _LEAF_MESSAGES.values()):
                assert name.endswith(("meta.v1.Patch",)), f"{name} missing from the schema"
            if not ours:
                continue
            assert set(ours) == set(proto), name
            for number, (label, typ) in proto.items():
                _, json_name, kind, ref, flags = ours[number]
                assert isinstance(flags, int) and isinstance(kind, int)
                where = f"{name} field {number} ({json_name})"
                assert (label == "map") == bool(flags & pb.MAP), where
                assert (label == "repeated") == bool(flags & pb.REPEATED), where
                if kind == pb.MESSAGE:
                    assert typ == ref, where
                elif kind in _LEAF_MESSAGES:
                    assert typ in _LEAF_MESSAGES[kind], where
                elif kind == pb.INT:
                    assert typ in ("int32", "int64"), where
                else:
                    assert typ == _SCALARS[kind], where
            checked += 1
    assert checked > 400  # 470 messages in v0.36.3
