"""A tiny protobuf encoder and a hand-written schema table, for the protobuf codec's tests.

The encoder writes what Go's generated marshalers write (tags, varints incl. 10-byte negatives,
length-delimited fields, fixed-width floats, packed varints on request) so tests can build any
message, including malformed ones. The table describes ObjectMeta, ConfigMap and a test kind
`Widget` whose fields cover every kind and flag of the schema contract.
"""

from __future__ import annotations

import struct

from kubeinformers.runtime.codec.protobuf.schema import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    FLOAT,
    INLINE,
    INT,
    INT_OR_STRING,
    ITEMS,
    MAP,
    MESSAGE,
    MICROTIME,
    OMITEMPTY,
    OMITZERO,
    POINTER,
    QUANTITY,
    RAW_JSON,
    REPEATED,
    STRING,
    TIME,
    UINT,
    Messages,
)

MAGIC = b"k8s\x00"


def varint(value: int) -> bytes:
    """A varint; negative values as Go writes int32/int64: 10-byte two's complement."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def vint(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def ld(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return tag(number, 2) + varint(len(data)) + data


def fixed64(number: int, value: float) -> bytes:
    return tag(number, 1) + struct.pack("<d", value)


def fixed32(number: int, value: float) -> bytes:
    return tag(number, 5) + struct.pack("<f", value)


def packed(number: int, values: list[int]) -> bytes:
    return ld(number, b"".join(varint(v) for v in values))


def entry(number: int, key: str, value: bytes | None) -> bytes:
    """One map entry {key=1, value=2}; `value` is the encoded field 2 (or None: absent)."""
    return ld(number, ld(1, key) + (value or b""))


def timestamp(seconds: int, nanos: int = 0) -> bytes:
    return (vint(1, seconds) if seconds else b"") + (vint(2, nanos) if nanos else b"")


def unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    """A magic-prefixed runtime.Unknown body, as kube-apiserver writes it."""
    return MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, "") + ld(4, "")


def list_body(
    api_version: str,
    kind: str,
    items: list[bytes],
    resource_version: str = "",
    continue_: str = "",
    remaining: int | None = None,
) -> bytes:
    meta = ld(1, "") + ld(2, resource_version) + ld(3, continue_)
    if remaining is not None:
        meta += vint(4, remaining)
    return unknown(api_version, kind, ld(1, meta) + b"".join(ld(2, item) for item in items))


def watch_frame(event_type: str, obj: bytes) -> bytes:
    """One WatchEvent message (without the stream's 4-byte length prefix)."""
    return ld(1, event_type) + ld(2, ld(1, obj))


def object_meta(
    name: str = "",
    namespace: str = "",
    uid: str = "",
    resource_version: str = "",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    creation: int | None = None,
) -> bytes:
    """ObjectMeta as Go marshals it: every non-pointer string written, even when empty."""
    out = ld(1, name) + ld(2, "") + ld(3, namespace) + ld(4, "") + ld(5, uid)
    out += ld(6, resource_version) + vint(7, 0)
    out += ld(8, timestamp(creation) if creation is not None else b"")
    for key, value in (labels or {}).items():
        out += entry(11, key, ld(2, value))
    for key, value in (annotations or {}).items():
        out += entry(12, key, ld(2, value))
    return out


META = "k8s.io.apimachinery.pkg.apis.meta.v1."
CORE = "k8s.io.api.core.v1."
TEST = "example.test.v1."

MESSAGES: Messages = {
    META + "ObjectMeta": (
        (1, "name", STRING, None, OMITEMPTY),
        (2, "generateName", STRING, None, OMITEMPTY),
        (3, "namespace", STRING, None, OMITEMPTY),
        (4, "selfLink", STRING, None, OMITEMPTY),
        (5, "uid", STRING, None, OMITEMPTY),
        (6, "resourceVersion", STRING, None, OMITEMPTY),
        (7, "generation", INT, None, OMITEMPTY),
        (8, "creationTimestamp", TIME, None, OMITEMPTY | OMITZERO),
        (9, "deletionTimestamp", TIME, None, POINTER | OMITEMPTY),
        (10, "deletionGracePeriodSeconds", INT, None, POINTER | OMITEMPTY),
        (11, "labels", STRING, None, MAP | OMITEMPTY),
        (12, "annotations", STRING, None, MAP | OMITEMPTY),
        (13, "ownerReferences", MESSAGE, META + "OwnerReference", REPEATED | OMITEMPTY),
        (14, "finalizers", STRING, None, REPEATED | OMITEMPTY),
        (17, "managedFields", MESSAGE, META + "ManagedFieldsEntry", REPEATED | OMITEMPTY),
    ),
    META + "OwnerReference": (
        (1, "kind", STRING, None, 0),
        (3, "name", STRING, None, 0),
        (4, "uid", STRING, None, 0),
        (5, "apiVersion", STRING, None, 0),
        (6, "controller", BOOL, None, POINTER | OMITEMPTY),
        (7, "blockOwnerDeletion", BOOL, None, POINTER | OMITEMPTY),
    ),
    META + "ManagedFieldsEntry": (
        (1, "manager", STRING, None, OMITEMPTY),
        (2, "operation", STRING, None, OMITEMPTY),
        (3, "apiVersion", STRING, None, OMITEMPTY),
        (4, "time", TIME, None, POINTER | OMITEMPTY),
        (6, "fieldsType", STRING, None, OMITEMPTY),
        (7, "fieldsV1", RAW_JSON, None, POINTER | OMITEMPTY),
        (8, "subresource", STRING, None, OMITEMPTY),
    ),
    CORE + "ConfigMap": (
        (1, "metadata", MESSAGE, META + "ObjectMeta", OMITEMPTY),
        (2, "data", STRING, None, MAP | OMITEMPTY),
        (3, "binaryData", BYTES, None, MAP | OMITEMPTY),
        (4, "immutable", BOOL, None, POINTER | OMITEMPTY),
    ),
    # A test kind with one field per kind and flag of the contract.
    TEST + "Widget": (
        (1, "metadata", MESSAGE, META + "ObjectMeta", OMITEMPTY),
        (2, "spec", MESSAGE, TEST + "WidgetSpec", OMITEMPTY),
        (3, "status", MESSAGE, TEST + "WidgetStatus", POINTER | OMITEMPTY),
    ),
    TEST + "WidgetSpec": (
        (1, "title", STRING, None, 0),
        (2, "note", STRING, None, OMITEMPTY),
        (3, "blob", BYTES, None, OMITEMPTY),
        (4, "plainBlob", BYTES, None, 0),
        (5, "count", INT, None, 0),
        (6, "offset", INT, None, OMITEMPTY),
        (7, "size", UINT, None, OMITEMPTY),
        (8, "enabled", BOOL, None, 0),
        (9, "paused", BOOL, None, POINTER | OMITEMPTY),
        (10, "ratio", DOUBLE, None, OMITEMPTY),
        (11, "weight", FLOAT, None, 0),
        (12, "started", TIME, None, 0),
        (13, "renewed", MICROTIME, None, POINTER | OMITEMPTY),
        (14, "period", DURATION, None, 0),
        (15, "limit", QUANTITY, None, 0),
        (16, "port", INT_OR_STRING, None, 0),
        (17, "surge", INT_OR_STRING, None, POINTER | OMITEMPTY),
        (18, "extension", RAW_JSON, None, 0),
        (19, "tags", STRING, None, REPEATED),
        (20, "ids", INT, None, REPEATED | OMITEMPTY),
        (21, "parts", MESSAGE, TEST + "Part", REPEATED | OMITEMPTY),
        (22, "limits", QUANTITY, None, MAP | OMITEMPTY),
        (23, "parts_by_name", MESSAGE, TEST + "Part", MAP | OMITEMPTY),
        (24, "extra", MESSAGE, TEST + "Strings", MAP | OMITEMPTY | ITEMS),
        (25, "verbs", MESSAGE, TEST + "Strings", ITEMS),
        (26, "source", MESSAGE, TEST + "Source", INLINE),
        (27, "template", MESSAGE, TEST + "Part", 0),
        (28, "optional", MESSAGE, TEST + "Part", POINTER | OMITEMPTY),
        (29, "zeroable", MESSAGE, TEST + "Part", OMITZERO),
        (30, "stopped", TIME, None, OMITEMPTY | OMITZERO),
        (31, "names", STRING, None, MAP),
    ),
    TEST + "Part": (
        (1, "name", STRING, None, 0),
        (2, "weight", INT, None, OMITEMPTY),
    ),
    TEST + "Strings": ((1, "items", STRING, None, REPEATED),),
    TEST + "Source": (
        (1, "origin", STRING, None, OMITEMPTY),
        (2, "mirror", STRING, None, 0),
    ),
    TEST + "WidgetStatus": ((1, "phase", STRING, None, OMITEMPTY),),
}
