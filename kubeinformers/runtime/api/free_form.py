"""A model with no declared fields keeps its content as JSON until it is read (K22).

Why: `FieldsV1`, the trie of field paths in each entry of an object's `managedFields`, is such
a model: all it holds is its unknown fields (pydantic's `__pydantic_extra__`), as nested dicts.
Built, a pod's entries are ~120 dicts and ~11 KB, over a third of a pod read whole, for data
almost no controller reads (client-go keeps it as its raw bytes, `FieldsV1.Raw`). Kept as
its JSON (one `bytes` of a few hundred bytes) and decoded the first time anything reads it,
the same model costs a twentieth of that until then, and nothing where another object's is
the same JSON (one `bytes` is kept for all: a workload's pods mostly share their tries).
`RawExtension`, `Patch` and other field-less models get the same.

Every read of the content goes through the slot's property (attribute access, `model_extra`,
equality, dumps, copies, pickles, repr), so nothing a user can observe changes: the first
read decodes the JSON, keeps the dicts it gives and hands out those from then on (changes to
them stay, as to any model's extras). A content that its JSON would not give back equal (a
tuple, a datetime, a non-str key: only a Python caller can give those) is kept as given.
"""

from __future__ import annotations

import threading
from typing import Any

import msgspec
from pydantic import BaseModel

__all__ = ["keep_content_as_json"]

_extra_slot = BaseModel.__dict__["__pydantic_extra__"]
_get_extra = _extra_slot.__get__
_set_extra = _extra_slot.__set__
_get_dict = BaseModel.__dict__["__dict__"].__get__
_encode = msgspec.json.encode
_decode = msgspec.json.decode
# The first reads of one object from several threads decode it once: every reader gets the
# same dicts, so a change made through one of them is never lost.
_LOCK = threading.Lock()
# Contents held, by their JSON (see _one_of); at most this many bytes of them.
_SHARED_BYTES = 4 << 20
_shared: dict[bytes, bytes] = {}
_shared_bytes = 0


def _content(model: BaseModel) -> dict[str, Any] | None:
    """The `__pydantic_extra__` getter: the content, decoded from its JSON on first read."""
    extra = _get_extra(model)
    if type(extra) is not bytes:
        return extra  # type: ignore[no-any-return]
    with _LOCK:
        extra = _get_extra(model)
        if type(extra) is bytes:
            extra = _decode(extra)
            _set_extra(model, extra)
    return extra  # type: ignore[no-any-return]


def _keep(model: BaseModel, extra: Any) -> None:
    """The `__pydantic_extra__` setter (validation, construction, copies, unpickling): a
    non-empty content is stored as its JSON when that decodes back to an equal value."""
    if type(extra) is dict and extra:
        try:
            raw = _encode(extra)
        except (msgspec.EncodeError, TypeError, ValueError, OverflowError):
            raw = None  # not JSON (a datetime, a set): kept as given
        if raw is not None and _decode(raw) == extra:
            extra = _one_of(raw)
    _set_extra(model, extra)


def _one_of(raw: bytes) -> bytes:
    """The one `bytes` kept for every content whose JSON is `raw`: the managed-fields tries of
    a workload's objects are mostly the same (the same manager, fields and owner), and bytes
    never change. Bounded: past _SHARED_BYTES the table starts again (what is already shared
    stays shared)."""
    global _shared_bytes
    one = _shared.get(raw)
    if one is not None:
        return one
    if _shared_bytes + len(raw) > _SHARED_BYTES:
        _shared.clear()
        _shared_bytes = 0
    _shared_bytes += len(raw)
    return _shared.setdefault(raw, raw)


def _equal(self: BaseModel, other: object) -> bool:
    """Equality that compares two contents still held as JSON without decoding them when
    their JSON is the same; otherwise pydantic's (which decodes them)."""
    if type(other) is type(self):
        mine = _get_extra(self)
        if type(mine) is bytes and mine == _get_extra(other):
            return bool(
                _get_dict(self) == _get_dict(other)
                and self.__pydantic_private__ == other.__pydantic_private__
            )
    return BaseModel.__eq__(self, other)


def keep_content_as_json(cls: type[BaseModel]) -> None:
    """Make the field-less model class `cls` keep its content as JSON until read (K22)."""
    type.__setattr__(cls, "__pydantic_extra__", property(_content, _keep))
    type.__setattr__(cls, "__eq__", _equal)
