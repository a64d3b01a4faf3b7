"""The `protobuf_schema` module of a built-in tree: the protobuf schema of its kinds.

The runtime reads built-in objects from kube-apiserver's protobuf and needs each message's
fields (`kubeinformers.runtime.codec.protobuf.schema`). They come from the committed
generator input `data/protobuf-k8s-*.json` (extracted from the Go sources by the
maintainers' tool `tools/protobuf_schema.py`), cut down to the messages the generated kinds
reach, so the table is as small as the API it serves and imports fast: one constant tuple per
message, which Python loads without running code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubeinformers.runtime.codec.protobuf import schema as pb

MODULE = "protobuf_schema"  # the module of a built-in tree that holds the table
SCHEMA_FILE = Path(__file__).resolve().parent / "data" / "protobuf-k8s-1.36.json"

# The JSON file's contract, which tools/protobuf_schema.py (the extractor, a maintainers' tool
# kept out of the package) writes: its format number and the names of the kind and flag
# numbers of kubeinformers.runtime.codec.protobuf.schema, which the file records in its legend.
FORMAT = 1
KIND_NAMES = (
    "STRING",
    "BYTES",
    "INT",
    "UINT",
    "BOOL",
    "DOUBLE",
    "FLOAT",
    "MESSAGE",
    "TIME",
    "MICROTIME",
    "DURATION",
    "QUANTITY",
    "INT_OR_STRING",
    "RAW_JSON",
)
FLAG_NAMES = ("REPEATED", "MAP", "POINTER", "OMITEMPTY", "OMITZERO", "INLINE", "ITEMS")


@dataclass(frozen=True)
class ProtobufSchema:
    source: str  # e.g. "k8s.io/api v0.36.3"
    messages: Mapping[str, tuple[pb.Field, ...]]
    kinds: Mapping[tuple[str, str, str], str]


def load(path: Path = SCHEMA_FILE) -> ProtobufSchema:
    """Reads the JSON; raises ValueError when it is not this contract's (another format, or
    kind and flag numbers that differ from the runtime's)."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read the protobuf schema {path}: {e}") from e
    legend = {name: getattr(pb, name) for name in (*KIND_NAMES, *FLAG_NAMES)}
    written = {**data.get("legend", {}).get("kinds", {}), **data.get("legend", {}).get("flags", {})}
    if data.get("format") != FORMAT or written != legend:
        raise ValueError(
            f"{path} was written for another schema contract than "
            "kubeinformers.runtime.codec.protobuf.schema; regenerate it with "
            "tools/protobuf_schema.py in a clone of kubeinformers (docs/guide/crds.md)"
        )
    messages = {
        name: tuple((f[0], f[1], f[2], f[3], f[4]) for f in fields)
        for name, fields in data["messages"].items()
    }
    kinds = {(g, v, k): message for g, v, k, message in data["kinds"]}
    source = data["source"]["k8s.io/api"]
    return ProtobufSchema(f"k8s.io/api {source}", messages, kinds)


def reachable(messages: Mapping[str, tuple[pb.Field, ...]], roots: Iterable[str]) -> set[str]:
    """`roots` and every message their fields refer to, transitively."""
    seen: set[str] = set()
    todo = [r for r in roots if r in messages]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(f[3] for f in messages[name] if f[3] is not None and f[3] not in seen)
    return seen


def kubernetes_version(source: str) -> tuple[int, int] | None:
    """(1, 36) for "k8s.io/api v0.36.3": the Kubernetes release of a k8s.io/api module
    version (v0.N.x is Kubernetes 1.N); None for any other form."""
    found = re.fullmatch(r"k8s\.io/api v0\.(\d+)\.\d+(?:[-+].*)?", source)
    return (1, int(found.group(1))) if found else None


def _field(f: pb.Field) -> str:
    ref = json.dumps(f[3]) if f[3] is not None else "None"
    return f"({f[0]}, {json.dumps(f[1])}, {f[2]}, {ref}, {f[4]})"


def module_source(schema: ProtobufSchema, generated: Iterable[tuple[str, str, str]]) -> str:
    """The module for a tree whose informers serve `generated` (group, version, kind): the
    kinds among them the schema knows, and the messages they reach. (List metadata and
    Status are read by the runtime's own envelope and status modules, not from this table.)"""
    kinds = {gvk: schema.kinds[gvk] for gvk in sorted(set(generated)) if gvk in schema.kinds}
    names = sorted(reachable(schema.messages, kinds.values()))
    lines = [
        '"""The protobuf schema of the built-in kinds of this package, for reading them from',
        "kube-apiserver's protobuf (`kubeinformers.runtime.codec.protobuf`).",
        "",
        "Each field is (number, json_name, kind, ref, flags), kinds and flags as in",
        "`kubeinformers.runtime.codec.protobuf.schema`. Written from",
        f"kubeinformers/generator/data/{SCHEMA_FILE.name} ({schema.source}).",
        '"""',
        "",
        "from collections.abc import Mapping",
        "",
        "from kubeinformers.runtime.codec.protobuf.schema import Messages",
        "",
    ]
    version = kubernetes_version(schema.source)
    if version is not None:
        lines += [
            "# The Kubernetes release whose API this table describes: a newer API server may send",
            "# fields it lacks, so the runtime reads such a server's objects as JSON instead.",
            f"KUBERNETES_VERSION = {version!r}",
            "",
        ]
    lines += [
        "# One message per line (written as is, not formatted: a small diff when the API grows).",
        "MESSAGES: Messages = {",
    ]
    for name in names:
        fields = schema.messages[name]
        body = ", ".join(_field(f) for f in fields) + ("," if len(fields) == 1 else "")
        lines.append(f"    {json.dumps(name)}: ({body}),")
    lines += [
        "}",
        "",
        "# (group, version, kind) -> its message; group '' is the core group.",
        "KINDS: Mapping[tuple[str, str, str], str] = {",
        *(
            f"    ({json.dumps(g)}, {json.dumps(v)}, {json.dumps(k)}): {json.dumps(m)},"
            for (g, v, k), m in kinds.items()
        ),
        "}",
        "",
    ]
    return "\n".join(lines)
