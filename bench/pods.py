"""Realistic pod objects for benchmarks: ≈2.5 KB of JSON each, shaped like a real cluster's.

Shaped after a pod recorded from a real kube-apiserver (labels, annotations, an owner,
managedFields, one container with probes and resources, tolerations, a running status with
conditions and a container status). Every pod differs in name, uid, labels and addresses so
nothing can be shared or interned by accident.
"""

from __future__ import annotations

import uuid
from typing import Any

NAMESPACES = 20
TIERS = ("fe", "be", "db", "cache")


def realistic_pod(i: int, namespace: str | None = None) -> dict[str, Any]:
    ns = namespace or f"team-{i % NAMESPACES}"
    app = f"svc-{i % 97}"
    name = f"{app}-{uuid.UUID(int=i * 7919 + 1).hex[:10]}-{i % 100000:05d}"
    ts = f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z"
    owner_uid = str(uuid.UUID(int=(i // 3) * 104729 + 17))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": str(uuid.UUID(int=i * 6700417 + 3)),
            "creationTimestamp": ts,
            "generateName": f"{app}-{uuid.UUID(int=i * 7919 + 1).hex[:10]}-",
            "labels": {
                "app": app,
                "tier": TIERS[i % len(TIERS)],
                "pod-template-hash": uuid.UUID(int=i * 7919 + 1).hex[:10],
                "shard": str(i % 16),
            },
            "annotations": {
                "prometheus.io/scrape": "true",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{uuid.UUID(int=i * 7919 + 1).hex[:10]}",
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": ts,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:generateName": {},
                            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, f'k:{{"uid":"{owner_uid}"}}': {}},
                        },
                        "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}}}},
                    },
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example.com/{app}:1.{i % 9}.{i % 31}",
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "env": [
                        {"name": "POD_INDEX", "value": str(i)},
                    ],
                    "resources": {
                        "limits": {"memory": "256Mi"},
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                    },
                    "readinessProbe": {
                        "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                        "timeoutSeconds": 1,
                        "periodSeconds": 10,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 50:03d}",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": ts}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i % 50}.{1 + i % 250}",
            "podIP": f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}",
            "startTime": ts,
            "containerStatuses": [
                {
                    "name": "app",
                    "ready": True,
                    "restartCount": i % 3,
                    "image": f"registry.example.com/{app}:1.{i % 9}.{i % 31}",
                    "imageID": f"registry.example.com/{app}@sha256:{uuid.UUID(int=i).hex}{uuid.UUID(int=i + 1).hex}",
                    "containerID": f"containerd://{uuid.UUID(int=i + 2).hex}{uuid.UUID(int=i + 3).hex}",
                    "started": True,
                    "state": {"running": {"startedAt": ts}},
                }
            ],
            "qosClass": "Burstable",
        },
    }
