"""Which objects a shard holds: a hash key and ranges of the 64-bit hash space (section N).

The selection is the API server's own (KEP-5866, ShardedListAndWatch, alpha in Kubernetes
1.36): an object belongs to a shard when the 64-bit FNV-1a hash of the UTF-8 bytes of its
`metadata.uid` (or `metadata.namespace`, "" for cluster-scoped objects) falls in one of the
shard's ranges, each `[start, end)` with `0 <= start < end <= 2**64`. `Shard.selector()` is
the `shardSelector` a list or watch sends (`shardRange(object.metadata.uid,
'0x0000000000000000', '0x8000000000000000')`, ranges joined with ` || `; bounds as the server
requires them: `0x` and 16 hex digits, the full end `0x10000000000000000`), and
`Shard.contains(obj)` makes the same choice on the client, for a server that does not filter.

`Shard.static(index, total)` is kube-state-metrics' `--shard=index --total-shards=total`:
`total` equal ranges, shard `index` (0-based) the `index`-th; the `total` shards of one total
partition every set of objects.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from kubeinformers.runtime.api.keys import object_namespace, object_uid

__all__ = [
    "HASH_SPACE",
    "SHARD_KEYS",
    "Shard",
    "ShardKey",
    "ShardRange",
    "fnv1a_64",
]

ShardKey = Literal["uid", "namespace"]
"""What an object is hashed by: `metadata.uid` (spreads evenly) or `metadata.namespace` (all
of a namespace in one shard; every cluster-scoped object in the shard of "")."""
SHARD_KEYS: tuple[ShardKey, ...] = get_args(ShardKey)

HASH_SPACE = 1 << 64  # the exclusive end of the last range
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = HASH_SPACE - 1
_FIELD_PATHS: dict[ShardKey, str] = {
    "uid": "object.metadata.uid",
    "namespace": "object.metadata.namespace",
}
_KEYS_BY_PATH = {path: key for key, path in _FIELD_PATHS.items()}
_RANGE = re.compile(
    r"\s*shardRange\(\s*(object\.metadata\.[a-z]+)\s*,\s*'([^']*)'\s*,\s*'([^']*)'\s*\)\s*"
)
_BOUND = re.compile(r"0x[0-9a-fA-F]{16}")
_SHORT_BOUND = re.compile(r"0x[0-9a-fA-F]{1,16}")
_END_OF_SPACE = "0x10000000000000000"


def fnv1a_64(text: str) -> int:
    """The 64-bit FNV-1a hash of `text`'s UTF-8 bytes: the API server's shard hash."""
    h = _FNV_OFFSET
    prime = _FNV_PRIME
    for byte in text.encode():
        h = (h ^ byte) * prime  # the low 64 bits never depend on the bits above them
    return h & _MASK


def _hex(bound: int) -> str:
    return f"0x{bound:016x}"


@dataclass(frozen=True, slots=True, order=True)
class ShardRange:
    """`[start, end)` of the 64-bit hash space."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not (0 <= self.start < self.end <= HASH_SPACE):
            raise ValueError(
                f"a shard range needs 0 <= start < end <= 2**64, got "
                f"[{_hex(self.start)}, {_hex(self.end)})"
            )

    def __contains__(self, hash_value: object) -> bool:
        return isinstance(hash_value, int) and self.start <= hash_value < self.end

    @property
    def fraction(self) -> float:
        """The share of the hash space this range covers."""
        return (self.end - self.start) / HASH_SPACE

    def __str__(self) -> str:
        return f"[{_hex(self.start)}, {_hex(self.end)})"


@dataclass(frozen=True, slots=True)
class Shard:
    """The objects whose `key` hashes into one of `ranges` (section N).

    `Shard(ranges=[ShardRange(0, 2**63)])`: the lower half by uid; `Shard.static(2, 5)`: the
    third of five equal shards; `Shard.parse(selector)`: from a `shardSelector` string.
    Ranges are kept sorted with touching and overlapping ones merged, so equal selections
    compare equal and render the same selector.
    """

    ranges: tuple[ShardRange, ...]
    key: ShardKey = "uid"
    _starts: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def __init__(self, ranges: Iterable[ShardRange], key: ShardKey = "uid") -> None:
        if key not in SHARD_KEYS:
            raise ValueError(f'a shard key is "uid" or "namespace", not {key!r}')
        merged: list[ShardRange] = []
        for r in sorted(ranges):
            if not isinstance(r, ShardRange):
                raise TypeError(f"shard ranges are ShardRange values, not {type(r).__name__}")
            if merged and r.start <= merged[-1].end:
                last = merged.pop()
                r = ShardRange(last.start, max(last.end, r.end))
            merged.append(r)
        if not merged:
            raise ValueError("a shard needs at least one range")
        object.__setattr__(self, "ranges", tuple(merged))
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "_starts", tuple(r.start for r in merged))

    @classmethod
    def static(cls, index: int, total: int, key: ShardKey = "uid") -> Shard:
        """Shard `index` (0-based) of `total` equal shards, as kube-state-metrics'
        `--shard`/`--total-shards`: range `[index * 2**64 // total, (index+1) * 2**64 // total)`.
        The `total` shards partition every set of objects: each is in exactly one."""
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise ValueError(f"total shards must be an integer >= 1, got {total!r}")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < total:
            raise ValueError(f"the shard index must be an integer in [0, {total}), got {index!r}")
        return cls(
            [ShardRange(index * HASH_SPACE // total, (index + 1) * HASH_SPACE // total)], key
        )

    @classmethod
    def parse(cls, selector: str) -> Shard:
        """A shard from a `shardSelector` string (`shardRange(...) || shardRange(...)`, one
        field path throughout, bounds as `0x` and 16 hex digits, the end of the space
        `0x10000000000000000`): what the API server accepts; ValueError naming what is wrong
        otherwise."""
        key: ShardKey | None = None
        ranges = []
        for part in selector.split("||"):
            m = _RANGE.fullmatch(part)
            if m is None:
                raise ValueError(
                    f"not a shard selector: {part.strip()!r} (expected shardRange("
                    "object.metadata.uid|namespace, '0x<start>', '0x<end>'))"
                )
            path, start, end = m.groups()
            for name, bound in (("hexStart", start), ("hexEnd", end)):
                if _BOUND.fullmatch(bound) or (name == "hexEnd" and bound == _END_OF_SPACE):
                    continue
                hint = ""
                if _SHORT_BOUND.fullmatch(bound) and int(bound, 16) < HASH_SPACE:
                    hint = f" (did you mean {_hex(int(bound, 16))!r}?)"
                raise ValueError(
                    f"{name} must be a 0x-prefixed 16-digit hex value, got {bound!r}{hint}"
                )
            this = _KEYS_BY_PATH.get(path)
            if this is None:
                raise ValueError(
                    f"unsupported shard field path {path!r}: object.metadata.uid or "
                    "object.metadata.namespace"
                )
            if key is not None and this != key:
                raise ValueError("a shard selector hashes one field path throughout")
            key = this
            ranges.append(ShardRange(int(start, 16), int(end, 16)))
        assert key is not None
        return cls(ranges, key)

    def selector(self) -> str:
        """The `shardSelector` of this shard, as the API server accepts it."""
        path = _FIELD_PATHS[self.key]
        return " || ".join(
            f"shardRange({path}, '{_hex(r.start)}', '{_hex(r.end)}')" for r in self.ranges
        )

    def hash_of(self, obj: object) -> int:
        """The hash of `obj`'s shard key (FNV-1a of its uid, or namespace)."""
        value = object_uid(obj) if self.key == "uid" else object_namespace(obj)
        return fnv1a_64(value)

    def contains_hash(self, hash_value: int) -> bool:
        """Whether `hash_value` lies in one of the ranges (a binary search: a ring's shard
        may have hundreds)."""
        i = bisect_right(self._starts, hash_value) - 1
        return i >= 0 and hash_value < self.ranges[i].end

    def contains(self, obj: object) -> bool:
        """Whether `obj` belongs to this shard: the server's choice, made on the client."""
        return self.contains_hash(self.hash_of(obj))

    @property
    def fraction(self) -> float:
        """The share of the hash space this shard covers (1.0: everything)."""
        return sum(r.end - r.start for r in self.ranges) / HASH_SPACE

    def describe(self) -> str:
        """`uid in [0x0000000000000000, 0x8000000000000000)`: for logs and health."""
        return f"{self.key} in " + " or ".join(str(r) for r in self.ranges)

    def __str__(self) -> str:
        return self.describe()
