"""Shared fixtures: where ../shared/data is, and a skip with a clear message when it is absent."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

# The fixtures a user's suite gets by opting in the same way (docs/guide/testing.md).
pytest_plugins = ["kubeinformers.testing.pytest_plugin"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the clone (CI has it; a user's fresh clone may not)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"needs the project's shared input data at {SHARED_DATA} "
            "(present in CI; absent in a plain clone)"
        )
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _nothing_stays_frozen() -> Iterator[None]:
    """Objects a test's big decode or read burst froze (K16) are handed back to the collector
    after it, so that a later test's garbage cycles among them are still found."""
    yield
    if gc.get_freeze_count():
        gc.unfreeze()
