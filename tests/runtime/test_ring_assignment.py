"""The shard ring's assignment (rule N20): rendezvous hashing over 1,024 buckets, a pure
function of the member names: deterministic, balanced, minimal movement on join and leave."""

from __future__ import annotations

import pytest

from kubeinformers.runtime.api.shard import HASH_SPACE, Shard, ShardRange
from kubeinformers.runtime.ring.assignment import (
    BUCKETS,
    assign,
    bucket_of,
    bucket_range,
    buckets_of_shard,
    format_buckets,
    parse_buckets,
    ranges_of,
    shard_of,
)

MEMBERS = [f"controller-{i}" for i in range(5)]


def test_n20_every_bucket_has_exactly_one_owner() -> None:
    for n in range(1, 6):
        owned = assign(MEMBERS[:n])
        assert set(owned) == set(MEMBERS[:n])
        all_buckets = [b for buckets in owned.values() for b in buckets]
        assert sorted(all_buckets) == list(range(BUCKETS))


def test_n20_assignment_is_deterministic_whatever_the_order() -> None:
    assert assign(MEMBERS) == assign(list(reversed(MEMBERS))) == assign(MEMBERS + MEMBERS[:2])


def test_n20_no_members_own_nothing() -> None:
    assert assign([]) == {}


@pytest.mark.parametrize("n", [2, 3, 4, 10])
def test_n20_shares_are_balanced(n: int) -> None:
    owned = assign([f"replica-{i}" for i in range(n)])
    for buckets in owned.values():
        # Binomial(1024, 1/n): within 4 standard deviations, and within 15 % for n <= 4.
        assert abs(len(buckets) - BUCKETS / n) <= 4 * (BUCKETS * (1 / n) * (1 - 1 / n)) ** 0.5
        if n <= 4:
            assert abs(len(buckets) / (BUCKETS / n) - 1) < 0.15


def test_n20_a_member_leaving_moves_only_its_own_buckets_spread_over_the_others() -> None:
    before = assign(MEMBERS)
    after = assign(MEMBERS[:-1])
    leaver = before[MEMBERS[-1]]
    for member in MEMBERS[:-1]:
        assert before[member] <= after[member]  # nothing taken from a staying member
        assert after[member] - before[member] <= leaver
        assert after[member] - before[member]  # each survivor takes a part
    assert sum(len(after[m] - before[m]) for m in MEMBERS[:-1]) == len(leaver)


def test_n20_a_member_joining_takes_a_part_from_each_and_nothing_else_moves() -> None:
    before = assign(MEMBERS[:3])
    after = assign(MEMBERS[:4])
    for member in MEMBERS[:3]:
        assert after[member] <= before[member]
        assert before[member] - after[member] <= after[MEMBERS[3]]
    assert abs(len(after[MEMBERS[3]]) / (BUCKETS / 4) - 1) < 0.15


def test_n20_a_buckets_range_is_a_2_54_wide_slice_with_hex_exact_bounds() -> None:
    assert bucket_range(0) == ShardRange(0, 2**54)
    assert bucket_range(BUCKETS - 1) == ShardRange(HASH_SPACE - 2**54, HASH_SPACE)
    assert bucket_of(2**54 - 1) == 0 and bucket_of(2**54) == 1
    with pytest.raises(ValueError, match="bucket"):
        bucket_range(BUCKETS)


def test_n20_ranges_merge_adjacent_buckets_and_cover_exactly_them() -> None:
    assert ranges_of({0, 1, 2, 5}) == [ShardRange(0, 3 * 2**54), ShardRange(5 * 2**54, 6 * 2**54)]
    assert ranges_of(set(range(BUCKETS))) == [ShardRange(0, HASH_SPACE)]
    assert ranges_of(()) == [] and shard_of(()) is None
    for buckets in assign(MEMBERS[:3]).values():
        shard = shard_of(buckets)
        assert shard is not None and buckets_of_shard(shard) == buckets
        assert Shard.parse(shard.selector()) == shard
        assert shard_of(buckets, "namespace") == Shard(shard.ranges, "namespace")


def test_n21_the_held_buckets_annotation_round_trips_compactly() -> None:
    assert format_buckets({0, 1, 2, 40, 52, 53}) == "0-2,40,52-53"
    assert format_buckets(()) == "" and parse_buckets("") == frozenset()
    for buckets in assign(MEMBERS).values():
        assert parse_buckets(format_buckets(buckets)) == buckets
    for bad in ("x", "3-1", "0-1024", "-1"):
        with pytest.raises(ValueError, match="bucket"):
            parse_buckets(bad)
