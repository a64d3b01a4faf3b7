"""Formatting the generated files: in worker processes when there is much to format, with the
same bytes as in one process, and a file that is not Python named in the error."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import AbstractContextManager

import pytest

from kubeinformers.generator import workers, write
from kubeinformers.generator.models import HEADER


def _sources(count: int) -> dict[str, str]:
    # Unformatted on purpose: black must change every one of them.
    return {
        f"pkg/m{i}.py": f"def f{i}( x ):\n    return {{ 'k{i}' :x,'n':{i} }}\n" * (1 + i % 3)
        for i in range(count)
    }


def test_worker_processes_format_exactly_as_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _sources(12)
    preformatted = frozenset({"pkg/m0.py"})
    alone = write.format_all(files, preformatted, jobs=1)
    monkeypatch.setattr(write, "PARALLEL_MIN_BYTES", 1)
    spawned: list[int] = []
    monkeypatch.setattr(workers, "bound_pool", _counted(workers.bound_pool, spawned))
    together = write.format_all(files, preformatted, jobs=2)
    assert spawned == [2]
    assert together == alone
    assert list(together) == sorted(files)
    assert together["pkg/m0.py"] == f"{HEADER}\n{files['pkg/m0.py']}"  # left as it came
    assert all(code.startswith(HEADER) for code in together.values())
    assert together["pkg/m1.py"] != files["pkg/m1.py"]


def test_a_file_that_is_not_python_is_named_from_a_worker_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = {**_sources(3), "pkg/broken.py": "def (:\n"}
    monkeypatch.setattr(write, "PARALLEL_MIN_BYTES", 1)
    with pytest.raises(ValueError, match=r"^generated pkg/broken\.py is not valid Python"):
        write.format_all(files, jobs=2)


def test_batches_are_balanced_and_hold_every_file_once() -> None:
    files = {f"f{i}.py": "x" * size for i, size in enumerate([900, 500, 400, 300, 200, 100])}
    batches = write._batches(files, 2)
    assert sorted(p for batch in batches for p in batch) == sorted(files)
    sizes = sorted(sum(map(len, batch.values())) for batch in batches)
    assert sizes == [1200, 1200]
    assert write._batches({"one.py": "x"}, 4) == [{"one.py": "x"}]


def _counted(
    pool_factory: Callable[[int], AbstractContextManager[ProcessPoolExecutor]], spawned: list[int]
) -> Callable[[int], AbstractContextManager[ProcessPoolExecutor]]:
    def pool(jobs: int) -> AbstractContextManager[ProcessPoolExecutor]:
        spawned.append(jobs)
        return pool_factory(jobs)

    return pool
