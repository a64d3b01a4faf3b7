"""The protobuf codec against a real kube-apiserver: each built-in object read as protobuf
transcodes to exactly the JSON the server writes for it (K3), builds the same model lazily with
the same identity (K5), a real protobuf watch stream decodes frame by frame with its bookmarks
(K2), and real 404 and 410 answers decode into the Status the JSON carries (K4)."""

from __future__ import annotations

import itertools
import json
import struct
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
from pydantic import BaseModel

from kubeinformers.generated.protobuf_schema import KINDS, MESSAGES
from kubeinformers.generated.registry import RESOURCES, model_for
from kubeinformers.runtime.api.listwatch import INITIAL_EVENTS_END_ANNOTATION
from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.client.auth import apply_auth
from kubeinformers.runtime.codec.lazy import is_lazy
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.envelope import unwrap
from kubeinformers.runtime.codec.protobuf.transcode import to_json_object
from kubeinformers.testing.real_apiserver import RealApiServer
from tests.support.cluster import RealCluster

pytestmark = pytest.mark.real_apiserver

PROTOBUF = "application/vnd.kubernetes.protobuf"
_RUNS = itertools.count()


class Http:
    """GETs with a chosen Accept header, as the admin."""

    def __init__(self, server: RealApiServer, user: str = "admin") -> None:
        self.server = server
        self.api = server.api_client(user)

    def get(self, path: str, accept: str, **kwargs: Any) -> urllib3.BaseHTTPResponse:
        headers = {"Accept": accept}
        apply_auth(self.api, headers, [], path)
        response: urllib3.BaseHTTPResponse = self.api.rest_client.pool_manager.request(
            "GET",
            self.server.server + path,
            headers=headers,
            retries=False,
            timeout=urllib3.Timeout(connect=10.0, read=30.0),
            **kwargs,
        )
        return response


def _container(**extra: Any) -> dict[str, Any]:
    return {"name": "app", "image": "registry.example.com/app:1", **extra}


def _objects(ns: str, run: int) -> list[dict[str, Any]]:
    """A varied set of built-in objects: pointers to zero values, IntOrStrings, Quantities,
    MicroTimes, byte maps, defaulted fields, empty strings."""
    pod_template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [_container()], "restartPolicy": "Never"},
    }
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "full", "namespace": ns, "labels": {"app": "web", "tier": "fe"}},
            "spec": {
                "containers": [
                    _container(
                        ports=[{"name": "http", "containerPort": 8080}],
                        livenessProbe={
                            "httpGet": {"path": "/healthz", "port": "http"},
                            "periodSeconds": 5,
                        },
                        readinessProbe={"tcpSocket": {"port": 8080}, "initialDelaySeconds": 0},
                        resources={
                            "limits": {"cpu": "500m", "memory": "128Mi"},
                            "requests": {"cpu": "0.1", "memory": "100M"},
                        },
                        env=[
                            {"name": "PLAIN", "value": ""},
                            {
                                "name": "NODE",
                                "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                            },
                            {
                                "name": "CONF",
                                "valueFrom": {
                                    "configMapKeyRef": {
                                        "name": "cm",
                                        "key": "k",
                                        "optional": False,
                                    }
                                },
                            },
                        ],
                        volumeMounts=[{"name": "scratch", "mountPath": "/scratch"}],
                        securityContext={
                            "allowPrivilegeEscalation": False,
                            "privileged": False,
                            "runAsNonRoot": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                    )
                ],
                "volumes": [
                    {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
                    {"name": "secret", "secret": {"secretName": "s", "defaultMode": 0o600}},
                    {"name": "conf", "configMap": {"name": "cm", "optional": True}},
                ],
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/unreachable",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                ],
                "terminationGracePeriodSeconds": 0,
                "hostNetwork": False,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "zero", "namespace": ns, "labels": {"empty": ""}},
            "spec": {
                "automountServiceAccountToken": False,
                "containers": [_container(args=[""], workingDir="")],
                "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
                "enableServiceLinks": False,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc", "namespace": ns},
            "spec": {
                "selector": {"app": "web"},
                "ports": [
                    {"name": "http", "port": 80, "targetPort": "http"},
                    {"name": "metrics", "port": 9090, "targetPort": 9091, "protocol": "TCP"},
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": ns, "annotations": {"a": "b"}},
            "data": {"k": "v", "empty": ""},
            "binaryData": {"bin": "AAEC/w=="},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm-zero", "namespace": ns, "labels": {"e": ""}},
            "data": {},
            "immutable": False,
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": ns},
            "type": "Opaque",
            "data": {"password": "aHVudGVyMg==", "empty": ""},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1},
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [_container()]},
                },
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": ns},
            "spec": {
                "schedule": "0 3 * * *",
                "suspend": False,
                "jobTemplate": {"spec": {"template": pod_template}},
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "once", "namespace": ns},
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 60, "template": pod_template},
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np", "namespace": ns},
            "spec": {
                "podSelector": {},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {"ports": [{"port": "http"}, {"port": 8080, "endPort": 8090}]},
                ],
            },
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "ing", "namespace": ns},
            "spec": {
                "rules": [
                    {
                        "host": "example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "svc", "port": {"number": 80}}},
                                },
                                {
                                    "path": "/m",
                                    "pathType": "Exact",
                                    "backend": {
                                        "service": {"name": "svc", "port": {"name": "metrics"}}
                                    },
                                },
                            ]
                        },
                    }
                ]
            },
        },
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader", "namespace": ns},
            "spec": {
                "holderIdentity": "me",
                "leaseDurationSeconds": 15,
                "acquireTime": "2026-11-24T10:00:00.000000Z",
                "renewTime": "2026-11-24T10:00:05.123456Z",
                "leaseTransitions": 0,
            },
        },
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "ev", "namespace": ns},
            "eventTime": "2026-11-24T10:00:00.654321Z",
            "series": {"count": 3, "lastObservedTime": "2026-11-24T10:05:00.000001Z"},
            "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Sync",
            "reason": "Synced",
            "type": "Normal",
            "note": "",
            "regarding": {"kind": "Pod", "namespace": ns, "name": "full"},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": ns},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "",
            },
        },
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "hpa", "namespace": ns},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 80},
                        },
                    }
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"pb-codec-node-{run}", "labels": {"zone": ""}},
            "spec": {"unschedulable": False, "podCIDR": "10.1.0.0/24"},
            "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pb-codec-pv-{run}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/pv"},
                "persistentVolumeReclaimPolicy": "Retain",
            },
        },
    ]


def _resource_of(api_version: str, kind: str) -> Any:
    group, _, version = api_version.rpartition("/")
    for res in RESOURCES:
        if (res.group, res.version, res.kind) == (group, version, kind):
            return res
    raise LookupError(f"{api_version} {kind}")


@pytest.fixture(scope="module")
def server_objects(real_apiserver: RealApiServer) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    run = next(_RUNS)
    cluster = RealCluster(real_apiserver)
    ns = cluster.namespace(f"pb-codec-{run}")
    objects = _objects(ns, run)
    created: list[dict[str, Any]] = []
    try:
        for obj in objects:
            created.append(cluster.create(obj))
        created.append(cluster.get("v1", "Namespace", ns))
        yield ns, created
    finally:
        for obj in created:
            if not obj["metadata"].get("namespace"):
                cluster.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
        cluster.close()


def test_k3_k5_every_object_reads_from_protobuf_as_the_servers_json(
    real_apiserver: RealApiServer, server_objects: tuple[str, list[dict[str, Any]]]
) -> None:
    _, objects = server_objects
    http = Http(real_apiserver)
    lists_seen: set[str] = set()
    nested = 0  # nested lazy objects read field by field (K19)
    for obj in objects:
        res = _resource_of(obj["apiVersion"], obj["kind"])
        message = KINDS[(res.group, res.version, res.kind)]
        meta = obj["metadata"]
        what = f"{obj['kind']} {meta['name']}"
        path = res.object_path(meta["name"], meta.get("namespace"))
        as_json = json.loads(http.get(path, "application/json").data)
        answer = http.get(path, PROTOBUF)
        assert answer.headers["Content-Type"] == PROTOBUF, what
        api_version, kind, raw = unwrap(answer.data)
        assert (api_version, kind) == (obj["apiVersion"], obj["kind"]), what
        expected = {k: v for k, v in as_json.items() if k not in ("apiVersion", "kind")}
        assert to_json_object(MESSAGES, message, raw) == expected, what

        collection = res.collection_path(meta.get("namespace"))
        if collection in lists_seen:
            continue
        lists_seen.add(collection)
        json_list = json.loads(http.get(collection, "application/json").data)
        model = model_for(res.gvr)
        decoder = ProtobufLazyDecoder(model, message=message, messages=MESSAGES, describe=what)
        # The same list: at the JSON list's resourceVersion exactly (the server's own writes,
        # its lease every 10 s, move the latest one between two GETs).
        list_rv = json_list["metadata"]["resourceVersion"]
        at_rv = {"resourceVersion": list_rv, "resourceVersionMatch": "Exact"}
        page = decoder.decode_list(http.get(collection, PROTOBUF, fields=at_rv).data)
        assert page.resource_version == list_rv, what
        assert len(page.items) == len(json_list["items"]), what
        for lazy, item in zip(page.items, json_list["items"], strict=True):
            assert is_lazy(lazy)
            item_meta = item["metadata"]
            assert lazy.metadata.name == item_meta["name"]
            assert lazy.metadata.namespace == item_meta.get("namespace")
            assert lazy.metadata.uid == item_meta["uid"]
            assert lazy.metadata.resource_version == item_meta["resourceVersion"]
            assert lazy.metadata.labels == item_meta.get("labels"), what
            assert lazy == model.model_validate(item), f"{what}: lazy model from protobuf"
        # K19: every field of every nested lazy object (spec, status...) read alone first,
        # then the whole object: the same model, fields sets and dump as the server's JSON.
        again = decoder.decode_list(http.get(collection, PROTOBUF, fields=at_rv).data)
        for lazy, item in zip(again.items, json_list["items"], strict=True):
            eager = model.model_validate(item)
            for name in type(eager).model_fields:
                whole = getattr(eager, name)
                if name == "metadata" or not isinstance(whole, BaseModel):
                    continue  # (apiVersion and kind are not built alone: read, they build all)
                part = getattr(lazy, name)
                nested += is_lazy(part)
                for field in type(part).model_fields:  # each of its fields built alone
                    assert getattr(part, field) == getattr(whole, field), (
                        f"{what}: {name}.{field} read alone from protobuf"
                    )
            assert lazy == eager, f"{what}: read field by field, then whole"
            assert lazy.model_fields_set == eager.model_fields_set, what
            assert lazy.model_dump_json() == eager.model_dump_json(), what
    assert len(objects) == 18 and len(lists_seen) == 16  # every kind's list was compared too
    assert nested >= 16  # a spec or status of each kind came nested


def _frames(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    while True:
        head = response.read(4)
        if len(head) < 4:
            return
        (length,) = struct.unpack(">I", head)
        frame = response.read(length)
        assert len(frame) == length
        yield frame


def test_k2_a_real_protobuf_watch_list_decodes_with_its_bookmark(
    real_apiserver: RealApiServer, server_objects: tuple[str, list[dict[str, Any]]]
) -> None:
    ns, objects = server_objects
    res = _resource_of("v1", "ConfigMap")
    model = model_for(res.gvr)
    decoder = ProtobufLazyDecoder(
        model, message=KINDS[("", "v1", "ConfigMap")], messages=MESSAGES, describe="configmaps"
    )
    query = (
        "?watch=1&allowWatchBookmarks=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=20"
    )
    response = Http(real_apiserver).get(
        res.collection_path(ns) + query, PROTOBUF, preload_content=False
    )
    try:
        assert response.headers["Content-Type"] == PROTOBUF + ";stream=watch"
        added: dict[str, Any] = {}
        for frame in _frames(response):
            event = decoder.decode_event(frame)
            obj: Any = event.object
            if event.type == "BOOKMARK":
                annotations = obj.metadata.annotations or {}
                if annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true":
                    assert obj.metadata.resource_version
                    break
                continue
            assert event.type == "ADDED"
            added[obj.metadata.name] = obj
    finally:
        response.release_conn()
    servers = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    assert set(added) == set(servers)
    for name, obj in added.items():
        assert obj == model.model_validate(servers[name])  # with apiVersion and kind


def test_k4_real_404_and_403_answers_decode_into_the_status_the_json_carries(
    real_apiserver: RealApiServer, server_objects: tuple[str, list[dict[str, Any]]]
) -> None:
    """A 410 is not cheap to provoke here (the watch cache serves every old resourceVersion
    until an apiserver restart); ERROR events are covered by the unit tests' frames."""
    ns, _ = server_objects
    res = _resource_of("v1", "ConfigMap")
    decoder = ProtobufLazyDecoder(
        model_for(res.gvr), message=KINDS[("", "v1", "ConfigMap")], messages=MESSAGES
    )
    for user, path, code in [
        ("admin", res.object_path("missing", ns), 404),
        ("noperms", res.collection_path(ns), 403),
    ]:
        http = Http(real_apiserver, user)
        answer = http.get(path, PROTOBUF)
        assert answer.status == code and answer.headers["Content-Type"] == PROTOBUF
        status = decoder.decode_status(answer.data)
        assert status == Status.model_validate_json(http.get(path, "application/json").data)
        assert status.code == code and status.details is not None
