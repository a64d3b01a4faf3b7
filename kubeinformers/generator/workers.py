"""Worker processes of model generation and formatting, bound to the generator's life.

A spawn-pool worker does not notice its parent's death by itself: killed with SIGKILL (an
impatient Ctrl-\\, a CI timeout, the OOM killer), the generator used to leave its workers
burning CPU on the rest of their queue. Each worker therefore asks Linux to send it SIGKILL
when its parent dies (`prctl(PR_SET_PDEATHSIG)`), and, on every system, runs a watchdog
thread that exits the process once its parent pid changes (it was reparented). The worker
only generates models or formats source in memory, so exiting at any point loses nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCHDOG_INTERVAL = 1.0  # seconds between parent checks where PR_SET_PDEATHSIG is missing


def bound_pool(jobs: int) -> ProcessPoolExecutor:
    """A spawn pool of `jobs` workers that end when this process ends, however it ends."""
    ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=bind_to_parent,
        initargs=(os.getpid(),),
    )


def bind_to_parent(parent_pid: int) -> None:
    """Worker initializer: die with `parent_pid` (see the module docstring)."""
    if sys.platform.startswith("linux"):
        _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    stop = threading.Event()
    threading.Thread(
        target=_watch_parent,
        args=(parent_pid, stop),
        name="kubeinformers-parent-watchdog",
        daemon=True,
    ).start()


def _set_parent_death_signal(sig: int) -> None:
    libc_name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watchdog below still ends the worker


def _watch_parent(parent_pid: int, stop: threading.Event) -> None:
    while not stop.wait(WATCHDOG_INTERVAL):
        if os.getppid() != parent_pid:
            os._exit(1)
