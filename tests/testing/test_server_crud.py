"""LocalApiServer CRUD through the real `kubernetes` client: create/get/update/patch/delete,
optimistic concurrency, finalizers, namespaces, CRDs, kubeconfig and the pytest fixtures."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kubeinformers.testing.local_api_server import LocalApiServer
from tests.support.crds import structural_crd, widget_crd
from tests.support.field_validation import patch_under_each_mode, said
from tests.testing.conftest import BASIC, configmap, pod, request, watch

WIDGET_CRD: dict[str, Any] = widget_crd(with_v1beta1=True)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Any:
    with LocalApiServer(resources=BASIC) as s:
        yield s


@pytest.fixture
def core(server: LocalApiServer) -> client.CoreV1Api:
    return client.CoreV1Api(server.api_client())


def test_create_assigns_uid_timestamp_and_increasing_resource_versions(
    core: client.CoreV1Api,
) -> None:
    a = core.create_namespaced_config_map("default", configmap("a"))
    b = core.create_namespaced_config_map("default", configmap("b"))
    assert a.metadata.uid and a.metadata.uid != b.metadata.uid
    assert a.metadata.creation_timestamp is not None
    assert int(b.metadata.resource_version) == int(a.metadata.resource_version) + 1
    assert a.metadata.managed_fields and a.metadata.managed_fields[0].manager


def test_generate_name_makes_a_unique_name(core: client.CoreV1Api) -> None:
    body = {"metadata": {"generateName": "job-"}, "data": {}}
    names = {core.create_namespaced_config_map("default", body).metadata.name for _ in range(5)}
    assert len(names) == 5 and all(n.startswith("job-") and len(n) == 9 for n in names)


def test_create_existing_is_409_already_exists(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("a"))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", configmap("a"))
    assert err.value.status == 409 and '"reason":"AlreadyExists"' in err.value.body


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("nowhere", configmap("a", "nowhere"))
    assert err.value.status == 404 and 'namespaces \\"nowhere\\" not found' in err.value.body


def test_update_with_stale_resource_version_is_409_conflict(core: client.CoreV1Api) -> None:
    first = core.create_namespaced_config_map("default", configmap("a"))
    first.data = {"k": "v2"}
    core.replace_namespaced_config_map("a", "default", first)
    first.data = {"k": "v3"}
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("a", "default", first)  # carries the old RV
    assert err.value.status == 409 and "the object has been modified" in err.value.body


def test_update_without_change_keeps_resource_version(core: client.CoreV1Api) -> None:
    obj = core.create_namespaced_config_map("default", configmap("a"))
    again = core.replace_namespaced_config_map("a", "default", obj)
    assert again.metadata.resource_version == obj.metadata.resource_version


def test_merge_patch_and_json_patch(server: LocalApiServer, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("a", app="x"))
    patched = core.patch_namespaced_config_map(
        "a", "default", {"metadata": {"labels": {"tier": "fe", "app": None}}}
    )
    assert patched.metadata.labels == {"tier": "fe"}
    code, _, body = request(
        server,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        [{"op": "replace", "path": "/data/k", "value": "j"}],
        {"Content-Type": "application/json-patch+json"},
    )
    assert code == 200 and body["data"] == {"k": "j"}


def test_delete_returns_status_or_object_as_the_real_server(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("a"))
    status = core.delete_namespaced_config_map("a", "default")  # this client gives a dict
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"]["name"] == "a" and status["details"]["kind"] == "configmaps"
    core.create_namespaced_pod("default", pod("p"))
    deleted = core.delete_namespaced_pod("p", "default")
    assert deleted.kind == "Pod" and deleted.metadata.deletion_timestamp is not None
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("p", "default")
    assert err.value.status == 404


def test_finalizer_keeps_object_until_removed(
    server: LocalApiServer, core: client.CoreV1Api
) -> None:
    cm = configmap("held")
    cm["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map("default", cm)
    stream = watch(
        server,
        f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={server.resource_version}",
    )
    code, _, body = request(server, "DELETE", "/api/v1/namespaces/default/configmaps/held")
    assert code == 202 and body["metadata"]["deletionTimestamp"]
    core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    events = stream.wait_lines(2)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    server.drop_watches()


def test_namespace_delete_removes_its_content(
    server: LocalApiServer, core: client.CoreV1Api
) -> None:
    core.create_namespace({"metadata": {"name": "doomed"}})
    core.create_namespaced_config_map("doomed", configmap("a", "doomed"))
    ns = core.delete_namespace("doomed")
    assert ns["status"]["phase"] == "Terminating"
    assert core.list_namespaced_config_map("doomed").items == []
    assert "doomed" not in [n.metadata.name for n in core.list_namespace().items]


def test_default_namespaces_exist_with_their_label(core: client.CoreV1Api) -> None:
    names = {n.metadata.name: n for n in core.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= set(names)
    assert names["default"].metadata.labels["kubernetes.io/metadata.name"] == "default"


def test_invalid_name_is_422(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", configmap("Bad_Name"))
    assert err.value.status == 422 and "RFC 1123" in err.value.body


def test_crd_serves_its_versions_validates_and_has_status_subresource(
    server: LocalApiServer,
) -> None:
    api = server.api_client()
    client.ApiextensionsV1Api(api).create_custom_resource_definition(WIDGET_CRD)
    crd = client.ApiextensionsV1Api(api).read_custom_resource_definition("widgets.example.com")
    assert [c.type for c in crd.status.conditions] == ["NamesAccepted", "Established"]
    custom = client.CustomObjectsApi(api)
    w = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 2, "color": "red"},
    }
    created = custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", w)
    assert list(created) == sorted(created)  # the unstructured encoder sorts keys
    with pytest.raises(ApiException) as err:
        bad = dict(w, metadata={"name": "bad"}, spec={"size": 0, "color": "green"})
        custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", bad)
    assert err.value.status == 422
    assert (
        "should be greater than or equal to 1" in err.value.body
        and 'Unsupported value: \\"green\\"' in err.value.body
    )
    # status only changes through /status
    created["status"] = {"phase": "Ready"}
    updated = custom.replace_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", "w", created
    )
    assert "status" not in updated
    updated["status"] = {"phase": "Ready"}
    with_status = custom.replace_namespaced_custom_object_status(
        "example.com", "v1", "default", "widgets", "w", updated
    )
    assert with_status["status"] == {"phase": "Ready"}
    # the same object through the other served version
    beta = custom.get_namespaced_custom_object("example.com", "v1beta1", "default", "widgets", "w")
    assert (
        beta["apiVersion"] == "example.com/v1beta1"
        and beta["metadata"]["uid"] == created["metadata"]["uid"]
    )


def test_crd_delete_stops_serving_and_ends_watches(server: LocalApiServer) -> None:
    api = server.api_client()
    client.ApiextensionsV1Api(api).create_custom_resource_definition(WIDGET_CRD)
    server.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 1},
        }
    )
    stream = watch(
        server,
        f"/apis/example.com/v1/namespaces/default/widgets?watch=1&resourceVersion={server.resource_version}",
    )
    client.ApiextensionsV1Api(api).delete_custom_resource_definition("widgets.example.com")
    assert stream.done.wait(5)
    assert [e["type"] for e in stream.events()] == ["DELETED"] and stream.ended == "clean"
    code, _, body = request(server, "GET", "/apis/example.com/v1/namespaces/default/widgets")
    assert code == 404 and body == b"404 page not found\n"


def test_discovery_lists_builtin_and_crd_resources(server: LocalApiServer) -> None:
    api = server.api_client()
    names = [r.name for r in client.CoreV1Api(api).get_api_resources().resources]
    assert {"pods", "pods/status", "configmaps", "namespaces"} <= set(names)
    client.ApiextensionsV1Api(api).create_custom_resource_definition(WIDGET_CRD)
    groups = [g.name for g in client.ApisApi(api).get_api_versions().groups]
    assert "example.com" in groups and "apiextensions.k8s.io" in groups


def test_tls_token_kubeconfig_round_trip(tmp_path: Path) -> None:
    with LocalApiServer(tls=True, token="s3cret", resources=BASIC) as server:
        path = server.write_kubeconfig(tmp_path / "kubeconfig")
        api = config.new_client_from_config(config_file=str(path))
        assert api.configuration.verify_ssl
        core = client.CoreV1Api(api)
        core.create_namespaced_config_map("default", configmap("a"))
        assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["a"]


def test_pytest_plugin_fixtures(
    local_api_server: LocalApiServer, local_api_server_tls: LocalApiServer
) -> None:
    assert local_api_server.url.startswith("http://127.0.0.1:")
    assert local_api_server_tls.url.startswith("https://127.0.0.1:") and local_api_server_tls.token
    for s in (local_api_server, local_api_server_tls):
        ns = client.CoreV1Api(s.api_client()).read_namespace("default")
        assert ns.status.phase == "Active"


def test_server_side_apply_patch_creates_then_updates(server: LocalApiServer) -> None:
    path = "/api/v1/namespaces/default/configmaps/applied?fieldManager=me"
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: one\n"
    headers = {"Content-Type": "application/apply-patch+yaml"}
    code, _, created = request(server, "PATCH", path, yaml_body, headers)
    assert code in (200, 201)
    assert (
        created["data"] == {"k": "one"}
        and created["metadata"]["managedFields"][0]["manager"] == "me"
    )
    code, _, updated = request(server, "PATCH", path, yaml_body.replace(b"one", b"two"), headers)
    assert code == 200 and updated["data"] == {"k": "two"}


def test_keep_alive_requests_are_not_held_back_by_nagle(server: LocalApiServer) -> None:
    """100 sequential writes on one keep-alive connection: ~4 s if every response waited for
    a delayed ACK (no TCP_NODELAY), a small fraction of that otherwise."""
    rest = server.api_client().rest_client
    url = f"{server.url}/api/v1/namespaces/default/configmaps"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    start = time.perf_counter()
    for i in range(100):
        response = rest.request("POST", url, headers=headers, body=configmap(f"c{i}"))
        assert response.status == 201
        response.read()
    assert time.perf_counter() - start < 2.0


USER_TEST = (
    "def test_user(local_api_server, local_api_server_factory):\n"
    "    other = local_api_server_factory(namespaces=('team-a',))\n"
    "    assert other.get('v1', 'Namespace', 'team-a')['metadata']['name'] == 'team-a'\n"
    "    assert local_api_server.get('v1', 'Namespace', 'default')\n"
)


def _run_user_suite(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_user.py"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_pytest_plugin_is_opt_in_not_loaded_into_every_session(tmp_path: Path) -> None:
    """Installing kubeinformers adds no plugin to a user's sessions (as envtest, opt-in)."""
    (tmp_path / "test_user.py").write_text(USER_TEST)
    proc = _run_user_suite(tmp_path)
    assert proc.returncode != 0
    assert "fixture 'local_api_server' not found" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("how", ["conftest", "-p"])
def test_pytest_plugin_fixtures_once_a_suite_opts_in(tmp_path: Path, how: str) -> None:
    (tmp_path / "test_user.py").write_text(USER_TEST)
    args: tuple[str, ...] = ()
    if how == "conftest":
        (tmp_path / "conftest.py").write_text(
            'pytest_plugins = ["kubeinformers.testing.pytest_plugin"]\n'
        )
    else:
        args = ("-p", "kubeinformers.testing.pytest_plugin")
    proc = _run_user_suite(tmp_path, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_m15_a_certificate_request_is_approved_as_on_the_real_server(
    local_api_server: LocalApiServer,
) -> None:
    """M15: LocalApiServer takes a CSR's conditions alone through `approval` and stamps their
    times as kube-apiserver does (the flow tests/e2e/test_client_real.py runs on the real
    server)."""
    from kubeinformers.runtime.client.typed import Client
    from tests.support.csr import approve_and_deny

    approve_and_deny(Client(local_api_server.api_client()), "local")


def test_m17_a_custom_resource_is_stored_pruned_and_defaulted_as_the_real_server_does(
    server: LocalApiServer,
) -> None:
    """As kube-apiserver (tests/e2e/test_fake_matches_real.py compares the two): the fields
    the schema does not specify are dropped unless it preserves them (each told in a
    Warning header; fieldValidation=Strict refuses them), a null it does not allow is dropped
    or defaulted, defaults are filled in, and status is not taken on create."""
    api = server.api_client()
    client.ApiextensionsV1Api(api).create_custom_resource_definition(structural_crd())
    things = client.CustomObjectsApi(api)
    args = ("structural.example.com", "v1", "default", "things")
    sent = {
        "apiVersion": "structural.example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "unknownMeta": 1},
        "unknownTop": 1,
        "spec": {
            "mode": None,
            "nullable": None,
            "plain": None,
            "unknown": 2,
            "items": [{"name": "a", "unknown": 3}],
            "byName": {"k": {}},
            "free": {"anything": {"deep": 1}},
            "embedded": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "e", "unknownMeta": 4},
            },
        },
        "status": {"phase": "Sent", "unknown": 0},
    }
    with pytest.raises(ApiException) as strict:  # nothing written
        things.create_namespaced_custom_object(*args, sent, field_validation="Strict")
    assert strict.value.status == 400
    message = json.loads(strict.value.body)["message"]
    assert 'strict decoding error: unknown field "metadata.unknownMeta"' in message
    created, code, headers = things.create_namespaced_custom_object_with_http_info(*args, sent)
    unknown = [
        "metadata.unknownMeta",
        "spec.items[0].unknown",
        "spec.unknown",
        "status.unknown",
        "unknownTop",
        "spec.embedded.metadata.unknownMeta",  # an embedded resource's metadata: told last
    ]
    assert code == 201
    assert headers.getlist("Warning") == [f'299 - "unknown field \\"{path}\\""' for path in unknown]
    assert "unknownMeta" not in created["metadata"] and "unknownTop" not in created
    assert "status" not in created
    assert created["spec"] == {
        "mode": "fast",
        "nullable": None,
        "replicas": 1,
        "nested": {"inner": "x"},
        "items": [{"name": "a", "weight": 5}],
        "byName": {"k": {"v": "dv"}},
        "free": {"anything": {"deep": 1}},
        "embedded": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}},
    }
    created["status"] = {"unknown": 5}
    status = things.replace_namespaced_custom_object_status(*args, "t", created)
    assert status["status"] == {"phase": "New"}
    patched = things.patch_namespaced_custom_object(*args, "t", {"spec": {"replicas": None}})
    assert patched["spec"]["replicas"] == 1
    seeded = {
        "apiVersion": "structural.example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "seeded", "namespace": "default"},
        "spec": {"unknown": 1},
    }
    assert server.create(seeded)["spec"] == {
        "mode": "fast",
        "nullable": "n",
        "replicas": 1,
        "nested": {"inner": "x"},
    }
    assert seeded["spec"] == {"unknown": 1}  # what the caller passed is left as it was


def test_m16_field_validation_strict_refuses_unknown_fields_warn_logs_them_ignore_drops_them(
    server: LocalApiServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M16: the typed client's `field_validation=` reaches the server as `fieldValidation`, on
    both faces: Strict refuses a misspelt field and writes nothing (a create: BadRequest),
    Warn and None (the server's default) drop it and the server's warning is logged once,
    Ignore drops it and nothing is said; a value that is none of the three is refused before
    any request (the server would answer BadRequest). tests/e2e/test_client_real.py runs the
    same on kube-apiserver."""
    from examples.informers.demo.v1.widget import Widget, WidgetSpec
    from kubeinformers.generated.meta.v1 import ObjectMeta
    from kubeinformers.runtime.api.errors import BadRequest, NotFound
    from kubeinformers.runtime.client import server_warnings
    from kubeinformers.runtime.client.typed import AsyncClient, Client, FieldValidation

    crd = REPO / "crds" / "demo.kubeinformers.io_widgets.yaml"
    server.create(yaml.safe_load(crd.read_text()))
    monkeypatch.setattr(server_warnings, "_said", OrderedDict())  # nothing said before here
    typed = Client(server.api_client())
    meta = ObjectMeta(name="w", namespace="default")
    created = typed.create(Widget(metadata=meta, spec=WidgetSpec(size="small")))
    assert created.metadata is not None and created.metadata.resource_version

    def patch(field: str, mode: FieldValidation | None) -> Widget:
        spec = {"spec": {field: 3}}
        return typed.patch(Widget, "w", spec, namespace="default", field_validation=mode)

    with caplog.at_level(logging.DEBUG, logger="kubeinformers.client"):
        patch_under_each_mode(typed, created, caplog)

        with pytest.raises(ValueError, match='"Ignore", "Warn", "Strict" or None, not \'Bogus\''):
            patch("sizee", cast(Any, "Bogus"))
        bogus = Widget.model_validate(
            {"metadata": {"name": "v", "namespace": "default"}, "spec": {"size": "large", "x": 1}}
        )
        with pytest.raises(BadRequest) as refused:
            typed.create(bogus, field_validation="Strict")
        assert (
            'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'unknown field "spec.x"'
        ) in str(refused.value)

        async def on_the_async_face() -> Widget:
            ours = AsyncClient(server.api_client())
            with pytest.raises(BadRequest, match=r'unknown field "spec\.x"'):
                await ours.create(bogus, field_validation="Strict")
            with pytest.raises(ValueError, match="field_validation must be"):
                await ours.create(bogus, field_validation=cast(Any, "strict"))
            return await ours.patch(
                Widget, "w", {"spec": {"colour": 5}}, namespace="default", field_validation="Warn"
            )

        assert asyncio.run(on_the_async_face()).spec is not None
        (record,) = said(caplog, "spec.colour")
        assert record.levelno == logging.WARNING
    with pytest.raises(NotFound):
        typed.get(Widget, "v", namespace="default")
    assert typed.get(Widget, "w", namespace="default").spec == created.spec  # as Strict left it


def test_m18_server_side_apply_owns_fields_conflicts_unless_forced_and_removes_what_it_drops(
    server: LocalApiServer,
) -> None:
    """As kube-apiserver (tests/e2e/test_fake_matches_real.py, server_side_apply): an apply
    owns what it sets; another manager changing such a field is a 409 naming the owner unless
    forced; an equal value is shared; what an apply no longer sets is removed unless another
    manager owns it."""
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.core.v1.apply import ConfigMapApply
    from kubeinformers.runtime.api.errors import Conflict
    from kubeinformers.runtime.client.typed import Client

    typed = Client(server.api_client())
    meta = {"name": "c", "namespace": "default"}

    def apply(manager: str, force: bool = False, **fields: Any) -> ConfigMap:
        config = ConfigMapApply(metadata=meta, **fields)
        return typed.apply(config, field_manager=manager, force=force)

    def owners(obj: ConfigMap) -> list[tuple[str | None, str | None]]:
        assert obj.metadata is not None
        return [(m.manager, m.operation) for m in obj.metadata.managed_fields or []]

    first = apply("m1", data={"k": "1", "a": "x"})
    assert owners(first) == [("m1", "Apply")]
    with pytest.raises(
        Conflict, match=r'Apply failed with 1 conflict: conflict with "m1": \.data\.k'
    ):
        apply("m2", data={"k": "2"})
    assert apply("m2", force=True, data={"k": "2"}).data == {"k": "2", "a": "x"}
    assert apply("m3", data={"a": "x"}).data == {"k": "2", "a": "x"}  # equal: shared
    dropped = apply("m1", data={})  # a: still m3's; k: m2's
    assert dropped.data == {"k": "2", "a": "x"}
    assert apply("m3").data == {"k": "2"}  # m3 drops a, nobody else owns it: removed
    assert sorted(owners(typed.get(ConfigMap, "c", namespace="default"))) == [
        ("m1", "Apply"),
        ("m2", "Apply"),
    ]


def test_m18_h36_a_built_in_kinds_keyed_lists_merge_by_key_in_apply_and_strategic_patch(
    local_api_server: LocalApiServer,
) -> None:
    """As kube-apiserver (tests/e2e/test_fake_matches_real.py, built_in_lists_merged_by_key):
    a pod template's containers merge by name, so two managers' containers stand side by
    side, one container's image is its manager's (409 to another), and a strategic merge
    patch naming one container changes only the fields it names."""
    from kubeinformers.generated.apps.v1 import Deployment
    from kubeinformers.runtime.client.typed import Client

    server = local_api_server
    typed = Client(server.api_client())
    path = "/apis/apps/v1/namespaces/default/deployments/d"

    def deployment(*containers: dict[str, Any]) -> dict[str, Any]:
        labels = {"app": "d"}
        template = {"metadata": {"labels": labels}, "spec": {"containers": list(containers)}}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": template},
        }

    def apply(manager: str, *containers: dict[str, Any]) -> tuple[int, Any]:
        status, _, body = request(
            server,
            "PATCH",
            f"{path}?fieldManager={manager}",
            deployment(*containers),
            {"Content-Type": "application/apply-patch+yaml"},
        )
        return status, body

    app = {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]}
    assert apply("a", app)[0] == 201
    assert apply("b", {"name": "sidecar", "image": "side:1"})[0] == 200
    status, body = apply("b", {"name": "app", "image": "app:2"})
    assert status == 409 and 'containers[name="app"].image' in body["message"]
    patched = typed.patch(
        Deployment,
        "d",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:3"}]}}}},
        namespace="default",
        patch_type="strategic",
    )
    assert patched.spec is not None and patched.spec.template.spec is not None
    containers = patched.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [("app", "app:3"), ("sidecar", "side:1")]
    assert [e.name for e in containers[0].env or []] == ["A"]  # kept: the patch did not name it
