"""The API server a bench run measures against: a real kube-apiserver (default) or LocalApiServer.

Both hold N realistic pods in one namespace, loaded once and shared by every contender, and
can buffer M updates for the watch replay. The real server is the reference (issue 13): it
encodes every response itself, as a user's cluster does. LocalApiServer serves pre-encoded
bytes from this process and is kept as an option for machines without the binaries.
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import orjson
import urllib3

from bench.pods import realistic_pod
from kubeinformers.runtime.client.auth import apply_auth

NAMESPACE = "perf"
# Requests in flight while loading the real server: enough to keep kube-apiserver and etcd
# busy on both cores, few enough that the loader's own threads do not starve them.
LOAD_CONCURRENCY = 32


class BenchServer(Protocol):
    """What the bench needs of a server, whichever it is."""

    label: str  # "real kube-apiserver ..." or "LocalApiServer (in-process fake)"
    kubeconfig: str
    probe: Path | None  # the client-go probe binary, when available

    def load_pods(self, n: int) -> None: ...

    def buffer_updates(self, m: int, n: int) -> str:
        """M updates spread over the pods; returns the resourceVersion from before them."""
        ...

    def server_cpu_seconds(self) -> float | None:
        """CPU time the server's processes used so far (None for an in-process server)."""
        ...

    def collect_garbage(self) -> None:
        """Collect the server's garbage now, before a timed contender starts: what the ones
        before it left is then not collected during its sync, at its cost."""
        ...

    def close(self) -> None: ...


def _probe_beside_real_binaries() -> Path | None:
    from kubeinformers.testing.real_apiserver import find_real_apiserver_assets

    assets = find_real_apiserver_assets()
    probe = assets / "client-go-informer" if assets is not None else None
    return probe if probe is not None and probe.exists() else None


def real_server_available() -> bool:
    from kubeinformers.testing.real_apiserver import find_real_apiserver_assets

    return find_real_apiserver_assets() is not None


class RealBenchServer:
    """kube-apiserver + etcd via kubeinformers.testing.RealApiServer; pods loaded over HTTP."""

    def __init__(self, extra_apiserver_args: tuple[str, ...] = ()) -> None:
        from kubeinformers.testing.real_apiserver import RealApiServer

        self._srv = RealApiServer(extra_apiserver_args=extra_apiserver_args)
        self._gc_refused = False
        self._srv.start()
        try:
            self.kubeconfig = str(self._srv.kubeconfig)
            probe = Path(self._srv.assets) / "client-go-informer"
            self.probe = probe if probe.exists() else None
            self._api = self._srv.api_client()
            self._pool = self._api.rest_client.pool_manager
            self._pool.connection_pool_kw["maxsize"] = LOAD_CONCURRENCY * 2
            self.label = f"real kube-apiserver + etcd ({self._version()})"
            self._post("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        except BaseException:
            self._srv.stop()
            raise

    def _headers(self, content_type: str = "application/json") -> dict[str, str]:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        apply_auth(self._api, headers, [], "")
        return headers

    def _request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Any:
        # Transient refusals under load (429, a dropped connection) are retried: the load
        # must end with every pod present, or the contenders would wait for missing ones.
        for attempt in range(20):
            try:
                resp = self._pool.request(
                    method,
                    self._srv.server + path,
                    body=None if body is None else orjson.dumps(body),
                    headers=self._headers(content_type),
                    retries=False,
                    timeout=60.0,
                )
            except (OSError, urllib3.exceptions.HTTPError):
                if attempt == 19:
                    raise
                time.sleep(0.1 * (attempt + 1))
                continue
            if resp.status in (429, 500, 503, 504):
                time.sleep(0.1 * (attempt + 1))
                continue
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: HTTP {resp.status}: {resp.data[:300]!r}")
            return orjson.loads(resp.data)
        raise RuntimeError(f"{method} {path}: still failing after 20 attempts")

    def _post(self, path: str, body: Any) -> Any:
        return self._request("POST", path, body)

    def _version(self) -> str:
        v = self._request("GET", "/version")
        return f"Kubernetes {v.get('major', '?')}.{v.get('minor', '?')}"

    def _create(self, i: int) -> None:
        pod = realistic_pod(i, NAMESPACE)
        status = pod.pop("status")
        name = pod["metadata"]["name"]
        self._post(f"/api/v1/namespaces/{NAMESPACE}/pods", pod)
        # A create resets the status (pod strategy): a running pod's status is a second write,
        # as the kubelet's would be.
        self._request(
            "PATCH",
            f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/status",
            {"status": status},
            "application/merge-patch+json",
        )

    def _modify(self, j: int, n: int) -> None:
        name = realistic_pod(j % n, NAMESPACE)["metadata"]["name"]
        self._request(
            "PATCH",
            f"/api/v1/namespaces/{NAMESPACE}/pods/{name}",
            {"metadata": {"labels": {"revision": str(j)}}},
            "application/merge-patch+json",
        )

    def _concurrently(self, fn: Any, count: int) -> None:
        pool = ThreadPoolExecutor(LOAD_CONCURRENCY)
        try:
            for _ in pool.map(fn, range(count)):
                pass
        except BaseException:
            # A request that failed for good, or Ctrl-C: the requests not yet begun are
            # dropped (leaving the pool would otherwise send every one of 100,000 first).
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()

    def load_pods(self, n: int) -> None:
        self._concurrently(self._create, n)
        listed = self._request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods?limit=1")
        remaining = listed["metadata"].get("remainingItemCount", 0) + len(listed["items"])
        if remaining != n:
            raise RuntimeError(f"loaded {remaining} pods into the real server, expected {n}")

    def buffer_updates(self, m: int, n: int) -> str:
        rv = self._request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods?limit=1")["metadata"][
            "resourceVersion"
        ]
        self._concurrently(lambda j: self._modify(j, n), m)
        return str(rv)

    def server_cpu_seconds(self) -> float | None:
        """kube-apiserver's and etcd's CPU time so far (user + system, from /proc)."""
        total = 0.0
        for pid in (self._srv.apiserver_pid, self._srv.etcd_pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def collect_garbage(self) -> None:
        """kube-apiserver's Go collector, run now (`/debug/pprof/heap?gc=1` collects before it
        profiles; kube-apiserver serves it, --profiling being on by default). Why: serving a
        watch-list of 10,000 pods allocates ~100 MB in the server, so every few syncs one
        starts a collection that costs 0.35-0.5 s of its CPU on the machine's two cores, and
        the contender syncing then waits ~0.2 s longer (measured: 0.50 s instead of 0.30,
        client-go's 0.6 instead of 0.4, server CPU 0.7 s instead of 0.25). Collected before
        each, every contender starts against the same server (at 10,000 pods a sync's own
        garbage is too little to start one: two syncs in a row after a collection ran
        without; at 100,000 it is not). A server that refuses (profiling off) is left as it
        is, said once."""
        if self._gc_refused:
            return
        try:
            resp = self._pool.request(
                "GET",
                self._srv.server + "/debug/pprof/heap?gc=1",
                headers=self._headers(),
                retries=False,
                timeout=60.0,
            )
            refused = resp.status >= 300 and f"HTTP {resp.status}"
        except (OSError, urllib3.exceptions.HTTPError) as e:
            refused = str(e)
        if refused:
            self._gc_refused = True
            print(f"  (the server's collector cannot be run before each contender: {refused})")

    def close(self) -> None:
        try:
            self._pool.clear()
        finally:
            self._srv.stop()


class LocalBenchServer:
    """LocalApiServer in this process: pods created in it directly (no HTTP)."""

    label = "LocalApiServer (in-process fake serving pre-encoded bytes, not a real server)"

    def __init__(self, history_size: int) -> None:
        from kubeinformers.testing import LocalApiServer

        self._tmp = tempfile.TemporaryDirectory()
        self._srv = LocalApiServer(history_size=history_size)
        self._srv.__enter__()
        self.kubeconfig = str(Path(self._tmp.name) / "kubeconfig")
        self._srv.write_kubeconfig(self.kubeconfig)
        self.probe = _probe_beside_real_binaries()
        self._srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})

    def load_pods(self, n: int) -> None:
        for i in range(n):
            self._srv.create(realistic_pod(i, NAMESPACE))
        # The server shares this process: its loaded objects are moved out of the cyclic
        # collector's reach, or a full collection (~0.2 s here) stalls a random contender.
        gc.collect()
        gc.freeze()

    def buffer_updates(self, m: int, n: int) -> str:
        from_rv = str(self._srv.resource_version)
        for j in range(m):
            pod = realistic_pod(j % n, NAMESPACE)
            current = self._srv.get("v1", "Pod", pod["metadata"]["name"], NAMESPACE)
            current["metadata"]["labels"]["revision"] = str(j)
            self._srv.replace(current)
        # The updates and their cached encodings too (a full collection in the server would
        # stall a random replay round).
        gc.collect()
        gc.freeze()
        return from_rv

    def server_cpu_seconds(self) -> float | None:
        return None  # it shares the bench's process

    def collect_garbage(self) -> None:
        pass  # its objects are frozen out of this process's collector (load_pods)

    def close(self) -> None:
        try:
            self._srv.__exit__(None, None, None)
        finally:
            self._tmp.cleanup()


def open_server(kind: str, history_size: int) -> BenchServer:
    if kind == "real":
        return RealBenchServer()
    return LocalBenchServer(history_size)


__all__ = [
    "NAMESPACE",
    "BenchServer",
    "LocalBenchServer",
    "RealBenchServer",
    "open_server",
    "real_server_available",
]
