"""The defaults kube-apiserver fills into the built-in kinds a controller writes most.

Why: a controller that creates a Deployment and compares it with what it wants must see what
the real server stores (`replicas: 1`, a rolling-update strategy, each container's
`imagePullPolicy`, `terminationMessagePath`, a probe's thresholds...), or its test passes on
LocalApiServer and it updates the object for ever on a cluster. Each default is the one of
Kubernetes 1.36's `SetDefaults_*` functions (pkg/apis/*/v1/defaults.go), of the admission a
default server runs (Priority, DefaultTolerationSeconds) and of the registries' create
strategies (a Job's selector, a Service's cluster IP, a pod's QoS class, the empty `status`
Go's JSON writes), for pods, pod templates (Deployments, ReplicaSets, StatefulSets,
DaemonSets, Jobs, CronJobs), Services and Secrets; compared with a real server's answers in
tests/e2e/test_fake_matches_real.py (`built_in_defaults`). Other kinds are stored as sent.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import random
import threading
from typing import Any

import msgspec

ObjDict = dict[str, Any]

__all__ = ["created_defaults", "with_written_defaults", "written_defaults"]

_TERMINATION_MESSAGE_PATH = "/dev/termination-log"
_DEFAULT_MODE = 420  # 0644, a volume's files
_WORKLOADS = frozenset(
    {
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
    }
)


_DEFAULTED = _WORKLOADS | {("", "pods"), ("", "services"), ("", "secrets"), ("batch", "cronjobs")}


def with_written_defaults(group: str, resource: str, obj: ObjDict) -> ObjDict:
    """`obj` with `written_defaults` filled in: a copy when its kind has defaults (through
    JSON: a fifth of `copy.deepcopy`'s time for a pod), `obj` itself when it has none."""
    if (group, resource) not in _DEFAULTED:
        return obj
    try:
        copied = msgspec.json.decode(msgspec.json.encode(obj))
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):  # not JSON: as it is
        copied = copy.deepcopy(obj)
    written_defaults(group, resource, copied)
    return copied  # type: ignore[no-any-return]


def written_defaults(group: str, resource: str, obj: ObjDict) -> None:
    """Fill in the defaults the server applies to every write of `obj` (a create, an update
    or a patch's result, as Go's decoding of the body does), in place."""
    spec = obj.get("spec")
    key = (group, resource)
    if key == ("", "secrets"):
        _secret(obj)
        return
    if not isinstance(spec, dict):
        return
    if key == ("", "pods"):
        _pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        _requests_from_limits(spec)
    elif key == ("", "services"):
        _service_spec(spec)
    elif key in _WORKLOADS:
        _workload_spec(key, spec)
    elif key == ("batch", "cronjobs"):
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        job_template = spec.get("jobTemplate")
        if isinstance(job_template, dict):
            job_template.setdefault("metadata", {})
            job_spec = job_template.get("spec")
            if isinstance(job_spec, dict):
                _pod_template(job_spec)


def created_defaults(group: str, resource: str, obj: ObjDict) -> None:
    """What the server adds to a new object beyond `written_defaults` (its admission and its
    registry's create strategy: a namespace's label, finalizer and phase, a CRD's first
    status, a pod's phase too), in place; `obj` has its metadata (uid, name) already."""
    key = (group, resource)
    meta = obj.setdefault("metadata", {})
    if key == ("", "namespaces"):
        meta["labels"] = dict(
            meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]}
        )
        obj["spec"] = dict(obj.get("spec") or {}, finalizers=["kubernetes"])
        obj["status"] = {"phase": "Active"}
        return
    if key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        versions = (obj.get("spec") or {}).get("versions", [])
        obj["status"] = {
            "conditions": None,
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": [v["name"] for v in versions if v.get("storage")],
        }
        return
    spec = obj.get("spec")
    if key == ("", "pods"):
        status = obj.get("status")
        status = dict(status) if isinstance(status, dict) else {}
        status.setdefault("phase", "Pending")
        obj["status"] = status
        if isinstance(spec, dict):
            spec.setdefault("priority", 0)  # Priority admission, no default PriorityClass
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
            _default_tolerations(spec)  # DefaultTolerationSeconds admission
            status["qosClass"] = _qos_class(spec)
        return
    if not isinstance(spec, dict):
        return
    if key == ("", "services"):
        _SERVICE_ADDRESSES.allocate(spec)
        obj.setdefault("status", {"loadBalancer": {}})
    elif key == ("apps", "deployments") or key == ("batch", "cronjobs"):
        obj.setdefault("status", {})
    elif key == ("apps", "replicasets"):
        obj.setdefault("status", {"replicas": 0})
    elif key == ("apps", "statefulsets"):
        obj.setdefault("status", {"replicas": 0, "availableReplicas": 0})
    elif key == ("apps", "daemonsets"):
        annotations = dict(meta.get("annotations") or {})
        annotations.setdefault("deprecated.daemonset.template.generation", "1")
        meta["annotations"] = annotations
        obj.setdefault(
            "status",
            {
                "currentNumberScheduled": 0,
                "numberMisscheduled": 0,
                "desiredNumberScheduled": 0,
                "numberReady": 0,
            },
        )
    elif key == ("batch", "jobs"):
        _job_selector(meta, spec)
        obj.setdefault("status", {})


# --- pods and pod templates ----------------------------------------------------------------------


def _workload_spec(key: tuple[str, str], spec: ObjDict) -> None:
    group, resource = key
    _pod_template(spec)
    if resource == "deployments":
        spec.setdefault("replicas", 1)
        _rolling_update(spec, "strategy", maxUnavailable="25%", maxSurge="25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif resource == "replicasets":
        spec.setdefault("replicas", 1)
    elif resource == "statefulsets":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        _rolling_update(spec, "updateStrategy", partition=0)
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(policy, dict):
            policy.setdefault("whenDeleted", "Retain")
            policy.setdefault("whenScaled", "Retain")
    elif resource == "daemonsets":
        _rolling_update(spec, "updateStrategy", maxUnavailable=1, maxSurge=0)
        spec.setdefault("revisionHistoryLimit", 10)
    elif (group, resource) == ("batch", "jobs"):
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
            spec["parallelism"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault(
            "podReplacementPolicy",
            "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed",
        )


def _rolling_update(spec: ObjDict, field: str, **rolling_defaults: Any) -> None:
    """A workload's strategy `field`: RollingUpdate unless set, and then its parameters'
    defaults (which differ by kind)."""
    strategy = spec.setdefault(field, {})
    if not isinstance(strategy, dict):
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            for name, value in rolling_defaults.items():
                rolling.setdefault(name, value)


def _pod_template(spec: ObjDict) -> None:
    """A PodTemplateSpec under `spec["template"]`: its metadata (a struct: `{}` in Go's JSON)
    and its pod spec's defaults."""
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    template.setdefault("metadata", {})
    pod_spec = template.get("spec")
    if isinstance(pod_spec, dict):
        _pod_spec(pod_spec)


def _pod_spec(spec: ObjDict) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or ():
            if isinstance(container, dict):
                _container(container)
    for volume in spec.get("volumes") or ():
        if isinstance(volume, dict):
            for source in ("secret", "configMap", "downwardAPI", "projected"):
                found = volume.get(source)
                if isinstance(found, dict):
                    found.setdefault("defaultMode", _DEFAULT_MODE)


def _container(container: ObjDict) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = (
            "Always" if _image_tag(container.get("image") or "") == "latest" else "IfNotPresent"
        )
    container.setdefault("terminationMessagePath", _TERMINATION_MESSAGE_PATH)
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})  # a struct: `{}` in Go's JSON
    for port in container.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        found = container.get(probe)
        if isinstance(found, dict):
            found.setdefault("timeoutSeconds", 1)
            found.setdefault("periodSeconds", 10)
            found.setdefault("successThreshold", 1)
            found.setdefault("failureThreshold", 3)
            _http_get(found.get("httpGet"))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if isinstance(handler, dict):
                _http_get(handler.get("httpGet"))
    for env in container.get("env") or ():
        field_ref = ((env or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def _http_get(action: Any) -> None:
    if isinstance(action, dict):
        action.setdefault("path", "/")
        action.setdefault("scheme", "HTTP")


def _image_tag(image: str) -> str:
    """The tag of an image reference as the server's image-name parser reads it: "latest"
    when it names neither a tag nor a digest."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _requests_from_limits(spec: ObjDict) -> None:
    """A container with limits and no request of a resource requests its limit (SetDefaults_Pod)."""
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            resources = (container or {}).get("resources")
            if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
                continue
            requests = dict(resources.get("requests") or {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)
            resources["requests"] = requests


_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"


def _default_tolerations(spec: ObjDict) -> None:
    tolerations = list(spec.get("tolerations") or ())
    for taint in (_NOT_READY, _UNREACHABLE):
        if not any(
            isinstance(t, dict)
            and t.get("effect") in ("NoExecute", None, "")
            and (t.get("key") == taint or (not t.get("key") and t.get("operator") == "Exists"))
            for t in tolerations
        ):
            tolerations.append(
                {
                    "key": taint,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            )
    spec["tolerations"] = tolerations


def _qos_class(spec: ObjDict) -> str:
    """The pod's QoS class from its containers' cpu and memory requests and limits."""
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or () if c]
    requested = limited = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        requests = {k: v for k, v in (resources.get("requests") or {}).items() if str(v) != "0"}
        limits = {k: v for k, v in (resources.get("limits") or {}).items() if str(v) != "0"}
        requested = requested or any(k in requests for k in ("cpu", "memory"))
        limited = limited or any(k in limits for k in ("cpu", "memory"))
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not requested and not limited:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _job_selector(meta: ObjDict, spec: ObjDict) -> None:
    """A Job's generated selector and its pods' labels (its create strategy), and its own
    labels, when it has none, taken from its pods' (SetDefaults_Job)."""
    uid, name = meta.get("uid", ""), meta.get("name", "")
    template = spec.get("template")
    if not spec.get("manualSelector"):
        spec["manualSelector"] = False
        if isinstance(template, dict):
            template_meta = template.setdefault("metadata", {})
            labels = dict(template_meta.get("labels") or {})
            labels.update(
                {
                    "batch.kubernetes.io/controller-uid": uid,
                    "batch.kubernetes.io/job-name": name,
                    "controller-uid": uid,
                    "job-name": name,
                }
            )
            template_meta["labels"] = labels
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    if not meta.get("labels") and isinstance(template, dict):
        pods_labels = (template.get("metadata") or {}).get("labels")
        if pods_labels:
            meta["labels"] = dict(pods_labels)


# --- services and secrets ------------------------------------------------------------------------


def _service_spec(spec: ObjDict) -> None:
    kind = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for port in spec.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    if kind in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if kind != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")


def _secret(obj: ObjDict) -> None:
    """`stringData` is written into `data` (base64) and never stored; the type is Opaque."""
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = dict(obj.get("data") or {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
    if not obj.get("type"):
        obj["type"] = "Opaque"


class _ServiceAddresses:
    """The cluster IPs and node ports a server hands out to Services (10.96.0.0/16, as
    RealApiServer's `--service-cluster-ip-range`; 30000-32767), each once."""

    def __init__(self, cidr: str = "10.96.0.0/16") -> None:
        self._network = ipaddress.ip_network(cidr)
        self._lock = threading.Lock()
        self._ips: set[str] = {str(self._network.network_address + 1)}  # `kubernetes`
        self._ports: set[int] = set()
        self._random = random.Random()

    def allocate(self, spec: ObjDict) -> None:
        kind = spec.get("type")
        if kind == "ExternalName":
            return
        with self._lock:
            ip = spec.get("clusterIP")
            if not ip:
                ip = self._free_ip()
                spec["clusterIP"] = ip
            if ip != "None":
                self._ips.add(ip)
            spec.setdefault("clusterIPs", [ip])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            if kind in ("NodePort", "LoadBalancer"):
                for port in spec.get("ports") or ():
                    if isinstance(port, dict) and not port.get("nodePort"):
                        port["nodePort"] = self._free_port()

    def _free_ip(self) -> str:
        size = self._network.num_addresses
        while True:
            ip = str(self._network.network_address + self._random.randrange(2, size - 1))
            if ip not in self._ips:
                return ip

    def _free_port(self) -> int:
        while True:
            port = self._random.randrange(30000, 32768)
            if port not in self._ports:
                self._ports.add(port)
                return port


# One for the process: every LocalApiServer's Services get addresses no other one has.
_SERVICE_ADDRESSES = _ServiceAddresses()
