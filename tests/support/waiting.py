"""Waiting in tests for a condition another thread makes true: re-checked on a short period
until it holds or the timeout passes (never a bare sleep to let things settle)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def eventually(condition: Callable[[], bool], timeout: float = 30.0, period: float = 0.02) -> bool:
    """Whether `condition()` held within `timeout` seconds, checked every `period` seconds."""
    waiter = threading.Event()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        waiter.wait(period)
    return condition()
