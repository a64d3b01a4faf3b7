"""K23: the C heap's free pages go back to the OS after an informer's initial list and after a
big burst of first reads, and never otherwise."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubeinformers import release_freed_memory
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.codec import gc_pause, heap_trim
from kubeinformers.runtime.codec.gc_pause import end_read_burst
from kubeinformers.runtime.codec.heap_trim import trim_heap
from kubeinformers.runtime.codec.lazy import LazyModelBuilder
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.runtime.test_lazy import Pod, pod_json
from tests.runtime.test_read_burst import eventually

TIMEOUT = 30.0


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every call trim_heap makes to the C library's malloc_trim (its pad argument)."""
    calls: list[int] = []

    def malloc_trim(pad: int) -> int:
        calls.append(pad)
        return 1

    end_read_burst()
    monkeypatch.setattr(heap_trim, "_malloc_trim", malloc_trim)
    yield calls
    end_read_burst()
    gc.enable()
    release_freed_memory(True)


def test_k23_an_informers_initial_list_ends_with_one_trim(
    trims: list[int], local_api_server: LocalApiServer
) -> None:
    for i in range(3):
        local_api_server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"c{i}", "namespace": "default"},
            }
        )
    factory = SharedInformerFactory(local_api_server.api_client())
    informer = factory.core().v1().config_maps().informer()
    factory.start()
    try:
        assert factory.wait_for_cache_sync(TIMEOUT)
        assert eventually(lambda: trims == [0])  # pad 0: every whole free page
        local_api_server.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c9", "namespace": "default"},
            }
        )
        assert eventually(lambda: len(informer.get_store().list_keys()) == 4)
        assert trims == [0]  # a watch event is no burst
    finally:
        factory.shutdown()


def test_k23_a_big_burst_of_first_reads_ends_with_a_trim_a_small_one_without(
    trims: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    builder = LazyModelBuilder(Pod)
    few = [builder.build(pod_json(f"f{i}")) for i in range(3)]
    assert all(p.spec is not None for p in few)
    end_read_burst()
    assert trims == []  # a handful of reads (a trickle of events): nothing to give back
    monkeypatch.setattr(gc_pause, "_COLLECT_AFTER_YOUNG", 500)
    many = [builder.build(pod_json(f"p{i}")) for i in range(300)]
    assert all(p.spec is not None for p in many)
    end_read_burst()
    assert trims == [0]


def test_k23_turned_off_nothing_is_trimmed(trims: list[int]) -> None:
    release_freed_memory(False)
    assert trim_heap() is False and trims == []
    release_freed_memory(True)
    assert trim_heap() is True and trims == [0]


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


def test_k23_on_glibc_a_trim_gives_freed_heap_pages_back() -> None:
    if heap_trim._malloc_trim is None:
        pytest.skip("this C library has no malloc_trim (not glibc): trim_heap does nothing here")
    # 4 KB buffers from the middle of the heap, one in eight kept: what a list's response
    # chunks or a built object's raw bytes leave behind. glibc keeps such holes resident.
    buffers = [bytes(4000 + i % 7) for i in range(16_000)]
    kept = buffers[::8]
    del buffers
    gc.collect()
    before = _rss()
    assert trim_heap()
    freed = before - _rss()
    assert freed > 30_000_000, f"RSS went down by {freed} bytes only"
    assert len(kept) == 2_000
