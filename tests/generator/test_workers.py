"""A killed generator leaves no worker process behind: the spawn pool's workers die with
their parent (PR_SET_PDEATHSIG on Linux, a parent watchdog everywhere), also on SIGKILL,
where the parent has no chance to stop them; stopped by Ctrl-C or SIGTERM while its workers
read a big folder of CRDs, it ends at once and they with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubeinformers.generator import load
from kubeinformers.generator.models import PARALLEL_MIN_SCHEMAS
from tests.generator.genutil import REPO

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the process table from /proc"
)

GROUPS = 4
NESTED = PARALLEL_MIN_SCHEMAS // GROUPS + 50  # hoisted classes per CRD: enough for the pool
STARTUP_TIMEOUT = 180.0  # seconds until the pool's workers exist (loaded CI machine)
EXIT_TIMEOUT = 60.0  # seconds for orphaned workers to notice (the watchdog checks every 1 s)


def _crd(group: str) -> dict[str, object]:
    nested: dict[str, object] = {
        # each part its own shape: the generator shares one class among equal shapes
        f"part{i}": {"type": "object", "properties": {f"value{i}": {"type": "string"}}}
        for i in range(NESTED)
    }
    # A field named `list` (a type the module uses): the CRD model writer leaves the module to
    # datamodel-code-generator, whose runs over these big modules go to the worker pool.
    nested["list"] = {"type": "array", "items": {"type": "string"}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"blocks.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Block", "plural": "blocks"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": nested}},
                        }
                    },
                }
            ],
        },
    }


def _children(pid: int) -> set[int]:
    """Live processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == pid and stat[0] != "Z":
                found.add(int(entry.name))
    return found


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _alive(pids: set[int]) -> set[int]:
    return {p for p in pids if (s := _stat(p)) is not None and s[0] != "Z"}


@pytest.fixture
def generator(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """The generator on a corpus big enough for its worker pool, started with -j 2."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(GROUPS):
        (corpus / f"g{i}.json").write_text(json.dumps(_crd(f"g{i}.example.com")))
    args = ["--crd", str(corpus), "--out", str(tmp_path / "out"), "--package", "out", "-j", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubeinformers.generator", "generate", *args],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        assert proc.stderr is not None
        proc.stderr.close()


def test_workers_exit_when_the_generator_is_killed(
    generator: subprocess.Popen[str],
) -> None:
    assert generator.stderr is not None
    for line in generator.stderr:  # blocks until the generator says it starts the models
        if "generating models" in line:
            break
    else:
        pytest.fail(f"the generator ended early (exit {generator.wait()})")
    deadline = time.monotonic() + STARTUP_TIMEOUT
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline:
        workers |= _children(generator.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, f"no worker pool started within {STARTUP_TIMEOUT:.0f}s"
    generator.send_signal(signal.SIGKILL)
    generator.wait(timeout=30)
    deadline = time.monotonic() + EXIT_TIMEOUT
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _alive(workers)
    for pid in survivors:  # leave nothing behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert survivors == set(), f"workers outlived the killed generator: {sorted(survivors)}"


# Loaded by every process of the stopped generator (spawned workers too, through PYTHONPATH):
# each file a worker reads blocks forever. The parent hands every file to the pool, so only
# workers call it; the function is pickled by reference to this module, which they also load.
BLOCKING_READER = """
import os
import threading

import kubeinformers.generator.load as load


def read_forever(f):
    # Say this worker reads (a file named by its pid), then block until stopped.
    open(os.path.join(os.environ["KUBEINFORMERS_TEST_READING"], str(os.getpid())), "w").close()
    threading.Event().wait()


read_forever.__module__ = "sitecustomize"
load._load_file = read_forever
"""


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _big_crd(index: int) -> dict[str, object]:
    """A CRD of ~600 KB (long descriptions): a folder of them is read by worker processes."""
    crd = _crd(f"big{index}.example.com")
    text = "lorem ipsum dolor sit amet " * 800
    spec = crd["spec"]
    assert isinstance(spec, dict)
    props = {f"field{i}": {"type": "string", "description": text} for i in range(30)}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}
    spec["versions"][0]["schema"] = {"openAPIV3Schema": schema}
    return crd


def _big_corpus(tmp_path: Path) -> Path:
    """A folder of big CRDs, twice what the generator reads in one process."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2 * load.PARALLEL_MIN_BYTES // 500_000):
        (corpus / f"c{i}.json").write_text(json.dumps(_big_crd(i)))
    return corpus


def _blocking_hook(tmp_path: Path) -> tuple[Path, Path]:
    """(a folder for PYTHONPATH whose sitecustomize makes the reading workers block, the
    folder where each of them says it reads); set KUBEINFORMERS_TEST_READING to the latter."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(BLOCKING_READER)
    reading = tmp_path / "reading"
    reading.mkdir()
    return hook, reading


def _children_once_reading(proc: subprocess.Popen[str], reading: Path) -> set[int]:
    """The generator's child processes once two of its workers read (blocked in the hook)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while len(list(reading.iterdir())) < 2 and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    assert len(list(reading.iterdir())) >= 2, (
        "the generator read the folder without worker processes"
    )
    return _children(proc.pid)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_reading_workers_end_with_the_generator_on_ctrl_c_and_sigterm(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """A generator stopped while its workers read a big folder of CRDs ends, and so do they."""
    corpus = _big_corpus(tmp_path)
    args = ["--crd", str(corpus), "--out", str(tmp_path / "out"), "--package", "out", "-j", "2"]
    # The reading workers block until stopped, so the signal always lands while they read (a
    # fast machine once finished the whole folder between seeing the workers and the signal).
    hook, reading = _blocking_hook(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubeinformers.generator", "generate", *args],
        cwd=REPO,
        env=dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(hook), str(REPO)]),
            KUBEINFORMERS_TEST_READING=str(reading),
            PYTHONFAULTHANDLER="1",  # SIGABRT dumps every thread: see where a stop hangs
        ),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        # A shell without job control starts background jobs with SIGINT ignored, and Python
        # then keeps ignoring it: give the generator the terminal's Ctrl-C, as a user has it.
        preexec_fn=_default_sigint,
    )
    try:
        workers = _children_once_reading(proc, reading)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, stderr = proc.communicate(timeout=30)
            pytest.fail(f"the generator did not end on {sig.name}; its threads:\n{stderr}")
        assert proc.returncode != 0
        deadline = time.monotonic() + EXIT_TIMEOUT
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = _alive(workers)
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        assert survivors == set(), f"workers outlived the stopped generator: {sorted(survivors)}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        assert proc.stderr is not None
        proc.stderr.close()


def test_h30_ctrl_c_of_the_terminal_ends_the_run_with_one_line_and_no_traceback(
    tmp_path: Path,
) -> None:
    """A terminal's Ctrl-C reaches the generator and its workers (one process group): the run
    ends with exit 130 and one line saying what the output folder holds, no traceback of the
    generator or of any worker."""
    corpus = _big_corpus(tmp_path)
    out = tmp_path / "out"
    args = ["--crd", str(corpus), "--out", str(out), "--package", "out", "-j", "2"]
    hook, reading = _blocking_hook(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubeinformers.generator", "generate", *args],
        cwd=REPO,
        env=dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(hook), str(REPO)]),
            KUBEINFORMERS_TEST_READING=str(reading),
        ),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=_default_sigint,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        _children_once_reading(proc, reading)  # the workers are past their initializer
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=EXIT_TIMEOUT)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
        assert "SpawnProcess" not in stderr, stderr  # a worker's "Process SpawnProcess-1:"
        assert stderr.strip().splitlines()[-1] == (
            f"kubeinformers generate: interrupted; every file in {out} is as it was or as "
            "generated, none partly written; run again to finish"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
