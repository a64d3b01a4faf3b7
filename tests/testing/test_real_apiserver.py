"""RealApiServer itself: it starts a real etcd + kube-apiserver, serves the API with TLS and two
users, restarts the apiserver, compacts etcd, and leaves no process and no directory behind —
also when the test process is SIGKILLed (the processes die with it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubeinformers.testing import real_apiserver as real_apiserver_module
from kubeinformers.testing.real_apiserver import (
    RealApiServer,
    RealApiServerUnavailable,
    _sweep_orphaned_run_dirs,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    """True while pid exists and is not a zombie (PID 1 here may not reap re-parented children)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def _wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """The pids still alive after `timeout` seconds (an empty list once all have exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        threading.Event().wait(0.1)
    return [p for p in pids if _alive(p)]


def _configmap(name: str, ns: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


@pytest.mark.real_apiserver
def test_start_serve_restart_compact_stop_leaves_nothing(
    real_apiserver_factory: Callable[..., RealApiServer],
) -> None:
    srv = real_apiserver_factory()
    core = client.CoreV1Api(srv.api_client())
    core.create_namespace({"metadata": {"name": "t-lifecycle"}})
    first = core.create_namespaced_config_map("t-lifecycle", _configmap("a", "t-lifecycle"))
    old_rv = first.metadata.resource_version

    # admin is system:masters; noperms is authenticated (not 401) but has no RBAC binding (403)
    with pytest.raises(ApiException) as denied:
        client.CoreV1Api(srv.api_client(user="noperms")).list_namespaced_config_map("t-lifecycle")
    assert denied.value.status == 403

    # the kubeconfigs name the server, the CA file and a token, and work for a plain client
    for path, user in ((srv.kubeconfig, "admin"), (srv.kubeconfig_noperms, "noperms")):
        assert path.stat().st_mode & 0o077 == 0, f"{path} holds a token: must be private"
        loaded = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=loaded)
        api = client.ApiClient(loaded)
        assert loaded.host == srv.server
        if user == "admin":
            assert client.CoreV1Api(api).read_namespace("t-lifecycle").metadata.name
        else:
            with pytest.raises(ApiException) as as_noperms:
                client.CoreV1Api(api).read_namespace("t-lifecycle")
            assert as_noperms.value.status == 403

    # a restart from a short-lived thread: the new apiserver must outlive that thread
    # (PR_SET_PDEATHSIG is tied to the forking thread, so RealApiServer forks from its own)
    old_pid = srv.apiserver_pid
    restarter = threading.Thread(target=srv.restart_apiserver, kwargs={"kill": True})
    restarter.start()
    restarter.join(timeout=120)
    assert not restarter.is_alive()
    assert srv.apiserver_pid != old_pid and not _wait_gone([old_pid])
    threading.Event().wait(0.5)
    assert _alive(srv.apiserver_pid), "the restarted apiserver died with the thread that asked"
    names = [cm.metadata.name for cm in core.list_namespaced_config_map("t-lifecycle").items]
    assert names == ["a"], "etcd kept the data across the apiserver restart"

    # compaction: etcd's revision moves past the first object's, and etcd refuses to read at
    # the older revision (the apiserver's 410 Gone for old RVs follows from this: C1.3)
    core.create_namespaced_config_map("t-lifecycle", _configmap("b", "t-lifecycle"))
    revision = srv.compact_etcd()
    assert revision > int(old_rv)
    read_old = urllib.request.Request(
        srv.etcd_url + "/v3/kv/range",
        data=json.dumps({"key": "Lw==", "range_end": "MA==", "revision": int(old_rv)}).encode(),
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as compacted:
        urllib.request.urlopen(read_old, timeout=30)
    assert "compacted" in compacted.value.read().decode()

    pids, run_dir = [srv.apiserver_pid, srv.etcd_pid], srv.dir
    srv.stop()
    assert _wait_gone(pids, timeout=1) == [], "stop() waits for both processes"
    assert not run_dir.exists(), "stop() removes the run directory (keys, tokens, etcd data)"
    srv.stop()  # idempotent


_CHILD = """
import json, sys, threading
from kubeinformers.testing.real_apiserver import RealApiServer
srv = RealApiServer(sys.argv[1]).start()
print(json.dumps({"pids": [srv.apiserver_pid, srv.etcd_pid], "dir": str(srv.dir)}), flush=True)
threading.Event().wait()
"""


@pytest.mark.real_apiserver
def test_servers_die_with_a_sigkilled_test_process(real_apiserver_assets: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(real_apiserver_assets)],
        stdout=subprocess.PIPE,
        cwd=REPO_ROOT,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, f"the child did not start a server (exit code {child.wait(60)})"
        started = json.loads(line)
        pids, run_dir = started["pids"], Path(started["dir"])
        assert all(_alive(p) for p in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert _wait_gone(pids) == [], "kube-apiserver and etcd die with a SIGKILLed parent"
    # only the directory was left; the next start removes it (its owner is dead)
    assert run_dir.exists()
    _sweep_orphaned_run_dirs()
    assert not run_dir.exists()


def test_a_directory_without_binaries_is_reported_as_unavailable(tmp_path: Path) -> None:
    with pytest.raises(RealApiServerUnavailable, match="no executable kube-apiserver and etcd"):
        RealApiServer(tmp_path).start()
    assert not list(tmp_path.iterdir())


def _no_assets_anywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(real_apiserver_module.ASSETS_ENV, raising=False)
    monkeypatch.delenv(real_apiserver_module.KUBEBUILDER_ASSETS_ENV, raising=False)
    monkeypatch.setattr(real_apiserver_module, "ENVTEST_DEFAULT_ASSETS", tmp_path / "none")


def test_installed_package_skip_message_names_the_env_vars_not_site_packages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Installed from a wheel, the message says how a user provides binaries; the project's
    ../shared folder (a path computed from site-packages) is neither searched nor named."""
    _no_assets_anywhere(monkeypatch, tmp_path)
    site = tmp_path / "venv/lib/python3.11/site-packages/kubeinformers/testing"
    site.mkdir(parents=True)
    monkeypatch.setattr(real_apiserver_module, "__file__", str(site / "real_apiserver.py"))
    message = real_apiserver_module.missing_assets_message()
    assert "$KUBEBUILDER_ASSETS" in message and "$KUBEINFORMERS_APISERVER_ASSETS" in message
    assert "setup-envtest use -p path" in message and "/none" in message
    assert "shared" not in message and "site-packages" not in message
    assert real_apiserver_module.find_real_apiserver_assets() is None
    assert "\n" not in message


def test_clone_skip_message_also_names_the_shared_folder_beside_the_clone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_assets_anywhere(monkeypatch, tmp_path)
    message = real_apiserver_module.missing_assets_message()
    assert "$KUBEBUILDER_ASSETS" in message
    assert f"realk8s at {REPO_ROOT.parent / 'shared' / 'realk8s' / 'bin'}" in message


@pytest.mark.real_apiserver
def test_unknown_user_is_refused(real_apiserver: RealApiServer) -> None:
    with pytest.raises(ValueError, match="admin"):
        real_apiserver.api_client(user="root")
    assert os.path.exists(real_apiserver.kubeconfig)


_USER_TESTS = """
import json, os

def test_session_server(real_apiserver):
    record(real_apiserver)

def test_private_server(real_apiserver_factory):
    record(real_apiserver_factory())

def record(srv):
    with open(os.environ["RECORD"], "a") as f:
        f.write(json.dumps({"pids": [srv.apiserver_pid, srv.etcd_pid], "dir": str(srv.dir)}) + "\\n")
"""


@pytest.mark.real_apiserver
def test_the_fixtures_leave_no_process_and_no_directory(
    real_apiserver_assets: Path, tmp_path: Path
) -> None:
    """A user's test session (the plugin's fixtures, opted in with -p): once it ends, both
    the session server and a private one are gone, processes and run directories."""
    (tmp_path / "test_user.py").write_text(_USER_TESTS)
    record = tmp_path / "record.jsonl"
    env = {
        **os.environ,
        "RECORD": str(record),
        "KUBEINFORMERS_APISERVER_ASSETS": str(real_apiserver_assets),
    }
    plugin = ("-p", "kubeinformers.testing.pytest_plugin")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, "test_user.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    servers = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(servers) == 2
    assert _wait_gone([pid for s in servers for pid in s["pids"]], timeout=5) == []
    assert not any(Path(s["dir"]).exists() for s in servers)
