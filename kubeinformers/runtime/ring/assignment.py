"""Who holds which part of the hash space in a shard ring: rendezvous hashing over buckets
(section N, rule N20).

The 64-bit hash space is cut into `BUCKETS` (1,024) equal buckets, bucket `b` being
`[b * 2**54, (b + 1) * 2**54)`: power-of-two bounds, exact in hex. Each bucket goes to the
member with the highest `weight(member, bucket)`, FNV-1a of `member:bucket` mixed by
MurmurHash3's finalizer (rendezvous, or highest random weight, hashing). Every replica computes the same assignment from the same member list, with
no coordinator; a member that leaves gives up only its own buckets, spread over the others,
and one that joins takes about 1/N of the space, a little from each. A member's buckets,
adjacent ones merged, are its ranges (`ranges_of`), sent as one selector.

Pure functions: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from kubeinformers.runtime.api.shard import HASH_SPACE, Shard, ShardKey, ShardRange, fnv1a_64

__all__ = [
    "BUCKETS",
    "assign",
    "bucket_of",
    "bucket_range",
    "buckets_of_shard",
    "format_buckets",
    "parse_buckets",
    "ranges_of",
    "shard_of",
    "weight",
]

BUCKETS = 1024
_WIDTH = HASH_SPACE // BUCKETS  # 2**54


def bucket_range(bucket: int) -> ShardRange:
    """`[bucket * 2**54, (bucket + 1) * 2**54)`."""
    if not 0 <= bucket < BUCKETS:
        raise ValueError(f"a bucket is in [0, {BUCKETS}), got {bucket}")
    return ShardRange(bucket * _WIDTH, (bucket + 1) * _WIDTH)


def bucket_of(hash_value: int) -> int:
    """The bucket a 64-bit hash falls in."""
    return hash_value // _WIDTH


_MASK = HASH_SPACE - 1


def weight(member: str, bucket: int) -> int:
    """`member`'s rendezvous weight for `bucket`: FNV-1a of `member:bucket`, then MurmurHash3's
    64-bit finalizer. The finalizer is needed: FNV-1a's top bits hardly depend on a string's
    last bytes, so without it one member would win most buckets (924 of 1,024 of three)."""
    h = fnv1a_64(f"{member}:{bucket}")
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    return h ^ (h >> 33)


def assign(members: Iterable[str]) -> dict[str, frozenset[int]]:
    """Each member's buckets: bucket `b` to the member with the highest `weight(member, b)`,
    ties to the smaller name. Every member is a key (a member may win no bucket); no members:
    an empty dict."""
    names = sorted(set(members))
    won: dict[str, set[int]] = {name: set() for name in names}
    if not names:
        return {}
    for bucket in range(BUCKETS):
        best, best_weight = names[0], weight(names[0], bucket)
        for name in names[1:]:  # sorted: a tie stays with the smaller name
            w = weight(name, bucket)
            if w > best_weight:
                best, best_weight = name, w
        won[best].add(bucket)
    return {name: frozenset(buckets) for name, buckets in won.items()}


def ranges_of(buckets: Collection[int]) -> list[ShardRange]:
    """The fewest ranges covering exactly `buckets` (adjacent buckets merged), sorted."""
    ranges: list[ShardRange] = []
    start = previous = None
    for bucket in sorted(buckets):
        bucket_range(bucket)  # validates
        if previous is not None and bucket == previous + 1:
            previous = bucket
            continue
        if start is not None and previous is not None:
            ranges.append(ShardRange(start * _WIDTH, (previous + 1) * _WIDTH))
        start = previous = bucket
    if start is not None and previous is not None:
        ranges.append(ShardRange(start * _WIDTH, (previous + 1) * _WIDTH))
    return ranges


def shard_of(buckets: Collection[int], key: ShardKey = "uid") -> Shard | None:
    """The shard of `buckets` (None when there are none: a shard needs a range)."""
    ranges = ranges_of(buckets)
    return Shard(ranges, key) if ranges else None


def buckets_of_shard(shard: Shard) -> frozenset[int]:
    """The buckets a shard covers whole (a ring's shards are made of whole buckets)."""
    out: set[int] = set()
    for r in shard.ranges:
        first = -(-r.start // _WIDTH)
        last = r.end // _WIDTH
        out.update(range(first, last))
    return frozenset(out)


def format_buckets(buckets: Collection[int]) -> str:
    """`"0-11,40,52-60"`: what a member Lease's annotation records (empty string: none)."""
    parts = []
    for r in ranges_of(buckets):
        first, last = r.start // _WIDTH, r.end // _WIDTH - 1
        parts.append(str(first) if first == last else f"{first}-{last}")
    return ",".join(parts)


def parse_buckets(text: str) -> frozenset[int]:
    """The inverse of `format_buckets`; ValueError naming the bad part."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        first, sep, last = part.partition("-")
        try:
            lo = int(first)
            hi = int(last) if sep else lo
        except ValueError:
            raise ValueError(f"not a bucket or bucket range: {part!r}") from None
        if not 0 <= lo <= hi < BUCKETS:
            raise ValueError(f"bucket range {part!r} is outside [0, {BUCKETS})")
        out.update(range(lo, hi + 1))
    return frozenset(out)
