"""An object's identity read straight from its protobuf bytes, skipping everything else.

Why: an informer keys, indexes and selects by name, namespace, uid, resourceVersion and
labels; those sit in ObjectMeta (field 1 of every top-level kind) as fields 1, 3, 5, 6 and 11.
Reading just them, stepping over the others by length and stopping after the labels (the
server writes fields in number order, K26: annotations, owner references and managed fields
follow), is what makes a protobuf list cheap.
Values read as the JSON path reads them: an empty string or map (omitted by Go's JSON) is None.
"""

from __future__ import annotations

import sys

from kubeinformers.runtime.codec.protobuf.reader import (
    ProtobufDecodeError,
    read_length,
    read_varint,
    skip_field,
)

__all__ = ["Identity", "read_identity"]

# (name, namespace, uid, resourceVersion, labels)
Identity = tuple[str | None, str | None, str | None, str | None, dict[str, str] | None]

_intern = sys.intern

# A label's map entry bytes -> its key and value, interned: the pods of one workload share
# their labels, so each entry is decoded once (K5). Up to this many, then it starts again.
_LABELS_KEPT = 4096
_labels_seen: dict[bytes, tuple[str, str]] = {}


def read_identity(data: bytes) -> Identity | None:
    """The identity of the object message `data`, or None when it has no metadata.

    Namespace and label values are interned (one copy among all cached objects, as the JSON
    path does); label keys are interned too, like msgspec's.
    """
    end = len(data)
    pos = 0
    meta_start = meta_end = -1
    try:
        while pos < end:
            key = data[pos]
            if key == 0x0A:  # 1: metadata
                meta_start, meta_end = read_length(data, pos + 1, end)
                break
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(data, pos, end)
            pos = skip_field(data, pos, key & 7, end)
        if meta_start < 0:
            return None
        return _object_meta(data, meta_start, meta_end)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"malformed object metadata: {exc}") from None


def _object_meta(data: bytes, pos: int, end: int) -> Identity:
    name = namespace = uid = resource_version = None
    labels: dict[str, str] | None = None
    labels_seen = _labels_seen
    while pos < end:
        key = data[pos]
        if key >= 0x60:
            break  # field 12 (annotations) or later: identity is read (K26's order)
        pos += 1
        if key & 7 != 2:
            pos = skip_field(data, pos, key & 7, end)
            continue
        b = data[pos] if pos < end else -1
        if 0 <= b < 0x80:
            start = pos + 1
            pos = start + b
            if pos > end:
                raise ProtobufDecodeError(f"field at byte {start} runs past ObjectMeta's end")
        else:
            start, pos = read_length(data, pos, end)
        if pos == start:
            continue  # an empty string: Go's JSON omits it
        if key == 0x5A:  # 11: labels, one map entry {key=1, value=2}
            entry = data[start:pos]
            label = labels_seen.get(entry)
            if label is None:
                label = _label(entry)
            if labels is None:
                labels = {label[0]: label[1]}
            else:
                labels[label[0]] = label[1]
        elif key == 0x0A:  # 1: name
            name = data[start:pos].decode()
        elif key == 0x1A:  # 3: namespace
            namespace = _intern(data[start:pos].decode())
        elif key == 0x2A:  # 5: uid
            uid = data[start:pos].decode()
        elif key == 0x32:  # 6: resourceVersion
            resource_version = data[start:pos].decode()
    return name, namespace, uid, resource_version, labels


def _label(entry: bytes) -> tuple[str, str]:
    label, value = _entry(entry, 0, len(entry))
    found = (_intern(label), _intern(value))
    if len(_labels_seen) >= _LABELS_KEPT:
        _labels_seen.clear()
    _labels_seen[entry] = found
    return found


def _entry(data: bytes, pos: int, end: int) -> tuple[str, str]:
    key_text = value_text = ""
    while pos < end:
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = read_varint(data, pos, end)
        if key == 0x0A or key == 0x12:
            b = data[pos] if pos < end else -1
            if 0 <= b < 0x80:
                start = pos + 1
                pos = start + b
                if pos > end:
                    raise ProtobufDecodeError(f"map entry at byte {start} runs past its end")
            else:
                start, pos = read_length(data, pos, end)
            if key == 0x0A:
                key_text = data[start:pos].decode()
            else:
                value_text = data[start:pos].decode()
        else:
            pos = skip_field(data, pos, key & 7, end)
    return key_text, value_text
