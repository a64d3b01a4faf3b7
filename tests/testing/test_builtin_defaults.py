"""M20: LocalApiServer stores the built-in kinds a controller writes most with the server's
defaults (compared with a real kube-apiserver in tests/e2e/test_fake_matches_real.py,
`built_in_defaults`); these run without one."""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest

from kubeinformers.testing import LocalApiServer


@pytest.fixture
def server() -> Iterator[LocalApiServer]:
    with LocalApiServer() as srv:
        srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}})
        yield srv


def _template(image: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": image, "ports": [{"containerPort": 80}]}]},
    }


def test_m20_a_deployment_gets_the_servers_defaults_and_its_pod_templates(
    server: LocalApiServer,
) -> None:
    spec = {"selector": {"matchLabels": {"app": "x"}}, "template": _template("nginx")}
    made = server.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "d"},
            "spec": spec,
        }
    )
    assert made["spec"]["replicas"] == 1
    assert made["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (made["spec"]["revisionHistoryLimit"], made["spec"]["progressDeadlineSeconds"]) == (
        10,
        600,
    )
    pod_spec = made["spec"]["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    (container,) = pod_spec["containers"]
    assert container["imagePullPolicy"] == "Always"  # no tag: latest
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert made["status"] == {}
    # An update that leaves every default out changes nothing: no new version, no event.
    again = server.replace(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "d"},
            "spec": spec,
        }
    )
    assert again["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.example.com:5000/team/app", "Always"),
        ("registry.example.com:5000/team/app:2", "IfNotPresent"),
        ("app@sha256:" + "0" * 64, "IfNotPresent"),
    ],
)
def test_m20_a_containers_pull_policy_follows_its_images_tag(
    server: LocalApiServer, image: str, policy: str
) -> None:
    pod = server.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d"},
            "spec": _template(image)["spec"],
        }
    )
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_m20_a_pod_passes_admission_and_gets_its_qos_class(server: LocalApiServer) -> None:
    limits = {"cpu": "1", "memory": "64Mi"}
    spec = {"containers": [{"name": "c", "image": "a:1", "resources": {"limits": limits}}]}
    pod = server.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d"},
            "spec": spec,
        }
    )
    assert pod["spec"]["containers"][0]["resources"]["requests"] == limits  # from its limits
    assert pod["status"]["qosClass"] == "Guaranteed"
    assert (pod["spec"]["priority"], pod["spec"]["enableServiceLinks"]) == (0, True)
    assert {t["key"]: t["tolerationSeconds"] for t in pod["spec"]["tolerations"]} == {
        "node.kubernetes.io/not-ready": 300,
        "node.kubernetes.io/unreachable": 300,
    }


def test_m20_a_secrets_string_data_is_written_into_its_data(server: LocalApiServer) -> None:
    secret = server.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "d"},
            "data": {"a": base64.b64encode(b"1").decode()},
            "stringData": {"b": "2"},
        }
    )
    assert "stringData" not in secret and secret["type"] == "Opaque"
    assert {k: base64.b64decode(v) for k, v in secret["data"].items()} == {"a": b"1", "b": b"2"}


def test_m20_a_jobs_selector_is_its_uid_and_its_pods_carry_it(server: LocalApiServer) -> None:
    job = server.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "d"},
            "spec": {"template": {"spec": dict(_template("a:1")["spec"], restartPolicy="Never")}},
        }
    )
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "j" and labels["controller-uid"] == uid
    assert job["metadata"]["labels"] == labels  # it had none: its pods'
    assert (
        job["spec"]["completions"],
        job["spec"]["parallelism"],
        job["spec"]["backoffLimit"],
    ) == (1, 1, 6)


def test_m20_services_get_their_own_cluster_ips_and_node_ports(server: LocalApiServer) -> None:
    made = [
        server.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"s{i}", "namespace": "d"},
                "spec": {"type": "NodePort", "ports": [{"port": 80}]},
            }
        )["spec"]
        for i in range(20)
    ]
    ips = {spec["clusterIP"] for spec in made}
    assert len(ips) == 20
    assert all(ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/16") for ip in ips)
    ports = {spec["ports"][0]["nodePort"] for spec in made}
    assert len(ports) == 20 and all(30000 <= p <= 32767 for p in ports)
    first = made[0]
    assert (first["ports"][0]["targetPort"], first["ports"][0]["protocol"]) == (80, "TCP")
    assert (first["sessionAffinity"], first["externalTrafficPolicy"]) == ("None", "Cluster")
    assert first["clusterIPs"] == [first["clusterIP"]] and first["ipFamilies"] == ["IPv4"]
