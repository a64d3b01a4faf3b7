"""examples/async_operator (issue 17's done-when): the asyncio-only operator keeps one
ConfigMap per Widget, retries a blocked one (I8), serves /healthz, and stops cleanly — on the
embedded server under asyncio debug mode, and on a real kube-apiserver."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from examples import async_operator
from examples.demo import NAMESPACE, install
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.runtime.test_async_api import run_debug


def run_demo(api: Any, caplog: pytest.LogCaptureFixture, namespace: str) -> list[str]:
    lines: list[str] = []
    before = {t.name for t in threading.enumerate()}

    async def main() -> None:
        await async_operator.demo(api, namespace, say=lines.append, timeout=60.0)

    run_debug(main, caplog)
    left = [t.name for t in threading.enumerate() if t.name not in before and t.is_alive()]
    assert not [n for n in left if n.startswith(("informer-", "kubeinformers-handler-"))], left
    return lines


def test_async_operator_on_the_embedded_server(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubeinformers.reconcile")
    with LocalApiServer() as server:
        api = server.api_client()
        install(api, time.monotonic() + 60.0)
        lines = run_demo(api, caplog, NAMESPACE)
    assert "  async operator: leading, /healthz answers 200" in lines
    assert "  async operator: retried, widget-w-blue -> {'color': 'blue', 'size': 'large'}" in lines
    assert lines[-1] == "  async operator: stopped (lease released, informers shut down)"
    requeues = [r for r in caplog.records if "is not ours" in r.getMessage()]
    assert requeues and all(r.levelname == "INFO" for r in requeues)  # calm retries


def test_health_is_503_material_before_the_informers_sync(caplog: pytest.LogCaptureFixture) -> None:
    """A readiness probe must not pass before the caches have synced."""
    with LocalApiServer() as server:
        api = server.api_client()

        async def main() -> None:
            operator = async_operator.WidgetOperator(api, "default", identity="probe")
            operator.factory.start()  # started, but the Widget CRD is not installed: no sync
            try:
                await asyncio.sleep(0.3)
                healthy, detail = operator.health()
                assert not healthy
                assert "widgets.demo.kubeinformers.io: NOT OK synced=False" in detail
            finally:
                await operator.factory.shutdown_async()

        run_debug(main, caplog)


@pytest.mark.real_apiserver
def test_async_operator_on_a_real_apiserver(
    real_apiserver: Any, caplog: pytest.LogCaptureFixture
) -> None:
    api = real_apiserver.api_client()
    install(api, time.monotonic() + 60.0)
    lines = run_demo(api, caplog, NAMESPACE)
    assert "  async operator: retried, widget-w-blue -> {'color': 'blue', 'size': 'large'}" in lines
    assert lines[-1] == "  async operator: stopped (lease released, informers shut down)"


def test_async_operator_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    """A Pod is stopped with SIGTERM, which asyncio.run does not handle: the operator died at
    once, its Lease held until it expired (the other replicas waited lease_duration) and its
    reconciles cut. Now SIGTERM ends it as Ctrl-C does: the loop drains, the Lease is
    released, the process exits 0."""
    with LocalApiServer() as server:
        install(server.api_client(), time.monotonic() + 60.0)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        command = [sys.executable, "-m", "examples.async_operator", "--namespace", NAMESPACE]
        proc = subprocess.Popen(
            [*command, "--health-port", "0"],
            cwd=Path(__file__).resolve().parents[2],
            env={**os.environ, "KUBECONFIG": str(kubeconfig)},
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stderr is not None

        def read() -> None:
            for line in proc.stderr or ():
                lines.put(line)

        reader = threading.Thread(target=read)
        reader.start()
        seen: list[str] = []
        try:
            while not any("successfully acquired lease" in line for line in seen):
                seen.append(lines.get(timeout=60))
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(10)
        while not lines.empty():
            seen.append(lines.get())
        assert code == 0, "".join(seen)
        assert any("released lease" in line for line in seen), "".join(seen)
        lease = server.get("coordination.k8s.io/v1", "Lease", async_operator.LEASE_NAME, NAMESPACE)
        assert not lease["spec"].get("holderIdentity")
