"""The protobuf schema table's vocabulary: field kinds, flags and the table's types.

Why: the runtime reads Kubernetes' protobuf without generated classes, from a plain table of
each message's fields (generated from the Go sources into kubeinformers/generated). This module
is the contract between that generator and the codec; it holds only constants and types.
"""

from __future__ import annotations

from collections.abc import Mapping

# fmt: off
# kinds: what a field's wire value is and how it reads in JSON
STRING = 1  # length-delimited UTF-8 -> str   (Go string and named string types, types.UID)
BYTES = 2  # length-delimited -> base64 str (Go []byte; std base64 with padding, as encoding/json)
INT = 3  # varint -> int (int32/int64; negatives are 10-byte two's complement)
UINT = 4  # varint -> int (uint32/uint64)
BOOL = 5  # varint -> bool
DOUBLE = 6  # fixed64 little-endian -> float (float64)
FLOAT = 7  # fixed32 -> float (float32; proto "fixed32"/"float")
MESSAGE = 8  # length-delimited message named by `ref` -> dict
TIME = 9  # metav1.Time: Timestamp{seconds=1 int64, nanos=2 int32} -> "2006-01-02T15:04:05Z" (UTC, second precision,
#   nanos ignored as metav1 does); an EMPTY message (0 bytes) is Go's zero time -> JSON null
#   (or omitted when OMITZERO / absent pointer); see apimachinery meta/v1/time_proto.go
MICROTIME = 10  # metav1.MicroTime: same message -> "2006-01-02T15:04:05.000000Z"
DURATION = 11  # metav1.Duration: {duration=1 int64 ns} -> Go time.Duration.String() e.g. "1h0m0s", "1.5s", "0s"
QUANTITY = 12  # resource.Quantity: {string=1} -> str
INT_OR_STRING = 13  # intstr.IntOrString: {type=1 int64 (0 int, 1 string), intVal=2 int32, strVal=3 string} -> int | str
RAW_JSON = 14  # runtime.RawExtension {raw=1}, metav1.FieldsV1 {Raw=1}: embedded JSON bytes -> the parsed JSON value
# flags (bit set)
REPEATED = 1  # Go slice: each element is one occurrence of the field (packed varints must also be read)
MAP = 2  # Go map[string]V: repeated entry messages {key=1 string, value=2}; kind/ref describe V
POINTER = 4  # Go pointer: present on the wire iff non-nil; JSON writes it even when it points to a zero value
OMITEMPTY = 8  # json:",omitempty": JSON omits false, 0, "", and nil or empty slices/maps (structs never)
OMITZERO = 16  # json:",omitzero" (Go 1.24): JSON omits the zero value, structs included (Time's IsZero)
INLINE = 32  # Go embedded struct inlined in JSON (json:",inline" or no name): its fields go into the parent object
ITEMS = 64  # MESSAGE `ref` is go-to-protobuf's wrapper of a named slice (+protobuf.nullable=true: ExtraValue, Verbs): {items=1 repeated} -> JSON is the items list (null when absent), not an object
Field = tuple[int, str, int, str | None, int]  # (number, json_name, kind, ref, flags); ref only for MESSAGE
Messages = Mapping[str, tuple[Field, ...]]  # full proto message name -> its fields, by number
# fmt: on

__all__ = [
    "BOOL",
    "BYTES",
    "DOUBLE",
    "DURATION",
    "FLOAT",
    "INLINE",
    "INT",
    "INT_OR_STRING",
    "ITEMS",
    "MAP",
    "MESSAGE",
    "MICROTIME",
    "OMITEMPTY",
    "OMITZERO",
    "POINTER",
    "QUANTITY",
    "RAW_JSON",
    "REPEATED",
    "STRING",
    "TIME",
    "UINT",
    "Field",
    "Messages",
]
