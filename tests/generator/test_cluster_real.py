"""`kubeinformers generate --cluster` against a real kube-apiserver 1.36 (marker
`real_apiserver`): the package it writes imports, its informers sync from that server
(H1 factory, H3 start, H5 wait_for_cache_sync; listers read the synced cache), and a file
using it passes mypy --strict.

Only two groups are generated (`--group`): the built-in coordination.k8s.io (Lease) and a
CRD installed for this test (infra.example.com Realm, cluster-scoped), so --cluster's two
sources, /openapi/v3 and the CRD list, are both used while the run stays short.
"""

from __future__ import annotations

import importlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from kubeinformers.testing.real_apiserver import RealApiServer
from tests.generator.genutil import GOLDEN, generate_ok, importable, run_mypy

pytestmark = pytest.mark.real_apiserver

REALMS_CRD = GOLDEN / "infra.example.com_realms.yaml"
PKG = "h15_live"
SYNC_TIMEOUT = 60.0  # seconds; the server is local, the machine may be loaded
ESTABLISHED_TIMEOUT = 60.0
USAGE = f"""\
from {PKG}.informers import SharedInformerFactory
from {PKG}.coordination.v1 import Lease
from {PKG}.infra.v1.realm import Realm


def holder(factory: SharedInformerFactory, namespace: str, name: str) -> str | None:
    lease: Lease = factory.coordination().v1().leases().lister().leases(namespace).get(name)
    return lease.spec.holder_identity if lease.spec is not None else None


def realm_names(factory: SharedInformerFactory) -> list[str]:
    realms: list[Realm] = factory.infra().v1().realms().lister().list()
    return sorted(r.metadata.name for r in realms if r.metadata and r.metadata.name)
"""


@pytest.fixture
def realms_crd(real_apiserver: RealApiServer) -> Iterator[dict[str, Any]]:
    """The golden Realm CRD installed (and established) in the shared server."""
    crd = yaml.safe_load(REALMS_CRD.read_text())
    api = real_apiserver.api_client()
    ext = kubernetes.client.ApiextensionsV1Api(api)
    name = crd["metadata"]["name"]
    try:
        ext.create_custom_resource_definition(crd)
    except kubernetes.client.ApiException as e:
        if e.status != 409:  # another test of the session may have installed it
            raise
    deadline = time.monotonic() + ESTABLISHED_TIMEOUT
    while not _established(ext.read_custom_resource_definition(name)):
        assert time.monotonic() < deadline, f"CRD {name} not established"
        time.sleep(0.1)
    try:
        yield crd
    finally:
        api.close()


def _established(crd: Any) -> bool:
    conditions = (crd.status and crd.status.conditions) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


@pytest.fixture
def namespace(real_apiserver: RealApiServer) -> Iterator[str]:
    """A namespace of this test's own (the server is shared by the session)."""
    api = real_apiserver.api_client()
    core = kubernetes.client.CoreV1Api(api)
    name = f"gen-cluster-{uuid.uuid4().hex[:8]}"
    core.create_namespace(
        kubernetes.client.V1Namespace(metadata=kubernetes.client.V1ObjectMeta(name=name))
    )
    try:
        yield name
    finally:
        core.delete_namespace(name)
        api.close()


def test_generate_cluster_writes_a_package_that_syncs_from_the_server_and_type_checks(
    real_apiserver: RealApiServer,
    realms_crd: dict[str, Any],
    namespace: str,
    tmp_path: Path,
) -> None:
    api = real_apiserver.api_client()
    realm_name = f"realm-{uuid.uuid4().hex[:8]}"
    kubernetes.client.CoordinationV1Api(api).create_namespaced_lease(
        namespace,
        kubernetes.client.V1Lease(
            metadata=kubernetes.client.V1ObjectMeta(name="leader"),
            spec=kubernetes.client.V1LeaseSpec(holder_identity="pod-a"),
        ),
    )
    custom = kubernetes.client.CustomObjectsApi(api)
    custom.create_cluster_custom_object(
        "infra.example.com",
        "v1",
        "realms",
        {"apiVersion": "infra.example.com/v1", "kind": "Realm", "metadata": {"name": realm_name}},
    )
    try:
        run = generate_ok(
            tmp_path,
            PKG,
            "--cluster",
            "--group",
            "coordination.k8s.io",
            "--group",
            "infra.example.com",
            env={"KUBECONFIG": str(real_apiserver.kubeconfig)},
        )
        assert "error" not in run.stderr.lower(), run.stderr
        usage = tmp_path / "usage.py"
        usage.write_text(USAGE)
        with importable(tmp_path, PKG):
            top = importlib.import_module(f"{PKG}.informers")
            use = _import_file(usage)
            factory = top.SharedInformerFactory(api)
            factory.coordination().v1().leases().informer()
            factory.infra().v1().realms().informer()
            factory.start()
            try:
                synced = factory.wait_for_cache_sync(timeout=SYNC_TIMEOUT)
                assert synced and all(synced.values()), synced
                assert use.holder(factory, namespace, "leader") == "pod-a"
                assert realm_name in use.realm_names(factory)
            finally:
                factory.shutdown(timeout=SYNC_TIMEOUT)
        checked = run_mypy([usage], cwd=tmp_path, mypy_path=[tmp_path])
        assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        custom.delete_cluster_custom_object("infra.example.com", "v1", "realms", realm_name)
        api.close()


def _import_file(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"{PKG}_usage", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
