"""`make demo` (python -m examples.demo) runs against the embedded server and exits cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run_demo(env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -m examples.demo` (what `make demo` runs) from the repository."""
    return subprocess.run(
        [sys.executable, "-m", "examples.demo"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_issue5_demo_runs_and_exits_cleanly_within_60_seconds() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = _run_demo(env, 60)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "started an embedded API server at https://" in out
    assert "caches synced: configmaps, deployments, gadgets, pods, widgets" in out
    assert "  pods with app=web:            ['db-1', 'web-1', 'web-2']" in out
    assert "  widgets:                      [('w-small', 'medium')]" in out
    assert "pod-summary ConfigMap:        {'web': '3'}" in out
    assert 'NotFoundError: pod "nginx" not found in namespace "kubeinformers-demo"' in out
    assert "every informer stopped" in out
    # issue 17: the asyncio operator runs after the threaded demo
    assert "async operator: retried, widget-w-blue -> {'color': 'blue', 'size': 'large'}" in out
    assert "async operator: stopped (lease released, informers shut down)" in out
    assert "Traceback" not in done.stderr


def test_demo_against_a_cluster_first_deletes_what_an_interrupted_run_left(
    tmp_path: Path,
) -> None:
    """`make demo` with KUBECONFIG, after a run stopped half-way (Ctrl-C, a kill) left some
    of its objects: it deletes them and runs, where it failed with AlreadyExists on every
    later run (found on a real kube-apiserver)."""
    from examples.demo import install, new_pod
    from kubeinformers import Client
    from kubeinformers.testing import LocalApiServer

    with LocalApiServer() as server:
        api = server.api_client()
        install(api, time.monotonic() + 60.0)
        Client(api).create(new_pod("web-1", "web"))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        done = _run_demo(dict(os.environ, KUBECONFIG=str(kubeconfig)), 120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "deleting what an interrupted earlier run left: web-1" in done.stdout
    assert "every informer stopped" in done.stdout


def test_demo_with_a_cluster_it_cannot_use_says_so_in_one_line(tmp_path: Path) -> None:
    """`make demo` with KUBECONFIG naming a file that is not there, or a cluster that refuses
    connections, ended in a traceback; it says what is wrong in one line and exits 1."""
    unreachable = tmp_path / "kubeconfig"
    unreachable.write_text(
        "apiVersion: v1\nkind: Config\n"
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n'
        "users: [{name: u, user: {token: not-for-logs}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    for kubeconfig, said in (
        (tmp_path / "missing", "cannot read the kubeconfig of KUBECONFIG="),
        (unreachable, "https://127.0.0.1:1 unreachable"),
    ):
        done = _run_demo({**os.environ, "KUBECONFIG": str(kubeconfig)}, 120)
        assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("demo: ") and said in lines[0], lines
        assert "not-for-logs" not in done.stdout + done.stderr
