"""Worker processes of model generation and formatting, bound to the generator's life.

A spawn-pool worker does not notice its parent's death by itself: killed with SIGKILL (an
impatient Ctrl-\\, a CI timeout, the OOM killer), the generator used to leave its workers
burning CPU on the rest of their queue. Each worker therefore asks Linux to send it SIGKILL
when its parent dies (`prctl(PR_SET_PDEATHSIG)`), and, on every system, runs a watchdog
thread that exits the process once its parent pid changes (it was reparented). The worker
only reads input, generates models or formats source in memory, so exiting at any point
loses nothing.

When the generator stops on an exception (Ctrl-C's KeyboardInterrupt included), the pool's
queued work is cancelled rather than waited for, and its workers are terminated: a Ctrl-C
while 2,000 CRD files are being read ends the run at once, not after the last file.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCHDOG_INTERVAL = 1.0  # seconds between parent checks where PR_SET_PDEATHSIG is missing


@contextmanager
def bound_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A spawn pool of `jobs` workers that end when this process ends, however it ends; on an
    exception in the `with` block, at once (queued work cancelled, workers terminated)."""
    ctx = multiprocessing.get_context("spawn")
    earlier = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=bind_to_parent,
        initargs=(os.getpid(),),
    )
    try:
        yield pool
    except BaseException:
        # terminate_workers() is 3.14+. A worker being spawned when Ctrl-C came is not in
        # _processes yet, but is one of this process's children started since the pool was.
        processes = {*pool._processes.values(), *multiprocessing.active_children()} - earlier
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)
        raise
    pool.shutdown(wait=True)


def bind_to_parent(parent_pid: int) -> None:
    """Worker initializer: die with `parent_pid` (see the module docstring)."""
    # A terminal's Ctrl-C reaches the whole process group: the parent stops the workers, which
    # would otherwise each print a KeyboardInterrupt traceback of their own (H30).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
