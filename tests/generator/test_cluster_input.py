"""`--cluster` input, read from what a real kube-apiserver 1.36 serves (recorded in
fixtures/realk8s-1.36, see fixtures/README.md): each /openapi/v3 group-version document
lists only its own group in the shared types' `x-kubernetes-group-version-kind`, so the
copies are merged; a copy that really differs is an error naming both documents that
leaves only that document out; without any cluster configuration the error says so.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kubeinformers.generator import cluster, naming, schema
from kubeinformers.generator.load import APIModel
from tests.generator.genutil import FIXTURES, run_generator

RECORDED = FIXTURES / "realk8s-1.36"
HOST = "https://127.0.0.1:6443"
DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
EXIT_FATAL = 2


class RecordedServer:
    """Answers GETs from the recording; remembers what was asked; unrecorded paths fail."""

    def __init__(self, edit: dict[str, Any] | None = None) -> None:
        self.asked: list[str] = []
        self.edit = edit or {}

    def get_json(self, url: str) -> Any:
        path = url.split("?")[0]
        self.asked.append(path)
        if path in self.edit:
            return self.edit[path]
        return read_recorded(path)


def read_recorded(path: str) -> Any:
    plain = RECORDED / f"{path.lstrip('/')}.json"
    if plain.is_file():
        return json.loads(plain.read_text())
    packed = RECORDED / f"{path.lstrip('/')}.json.gz"
    if packed.is_file():
        return json.loads(gzip.decompress(packed.read_bytes()))
    raise OSError(f"HTTP 404 (not recorded: {path})")


def _prepare(model: APIModel) -> schema.Prepared:
    groups = {r.group for r in model.resources}
    return schema.prepare(model, naming.group_names(groups).names)


def test_the_real_servers_documents_merge_into_one_model() -> None:
    server = RecordedServer()
    model = cluster.cluster_model(server.get_json, HOST)
    assert model.errors == []
    # the CRD's group-version is read from the CRD, never from /openapi/v3
    assert "/openapi/v3/apis/infra.example.com/v1" not in server.asked
    assert {c.resource.kind for c in model.crds} == {"Realm"}
    assert [d.source.file for d in model.documents] == [
        f"{HOST}/openapi/v3/api/v1",
        f"{HOST}/openapi/v3/apis/apps/v1",
        f"{HOST}/openapi/v3/apis/coordination.k8s.io/v1",
    ]
    # what made every real cluster fail: the same schema, a different list per document
    lists = [d.schemas[DELETE_OPTIONS]["x-kubernetes-group-version-kind"] for d in model.documents]
    assert len({json.dumps(x) for x in lists}) == 3
    prep = _prepare(model)
    assert prep.errors == [], prep.errors[:3]
    assert prep.left_out == set()
    assert {
        "core.v1.models.Pod",
        "apps.v1.models.Deployment",
        "coordination.v1.models.Lease",
    } <= set(prep.schemas)


def test_the_merged_schema_unites_the_per_document_lists() -> None:
    model = cluster.cluster_model(RecordedServer().get_json, HOST)
    prep = schema.Prepared()
    merged = schema.merge_documents(model.documents, prep)
    groups = {g["group"] for g in merged[DELETE_OPTIONS][0]["x-kubernetes-group-version-kind"]}
    assert groups == {"", "apps", "coordination.k8s.io"}
    assert prep.errors == []


def test_a_real_difference_names_both_documents_and_leaves_only_that_one_out() -> None:
    apps_path = "/openapi/v3/apis/apps/v1"
    apps = copy.deepcopy(read_recorded(apps_path))
    props = apps["components"]["schemas"][DELETE_OPTIONS]["properties"]
    props["gracePeriodSeconds"]["type"] = "string"  # was integer
    model = cluster.cluster_model(RecordedServer({apps_path: apps}).get_json, HOST)
    prep = _prepare(model)
    (error,) = prep.errors
    assert str(error) == (
        f"{HOST}{apps_path} (document 0) at components.schemas.{DELETE_OPTIONS}: differs from "
        f"the schema of the same name in {HOST}/openapi/v3/api/v1 (at "
        f"properties.gracePeriodSeconds.type: 'integer' in {HOST}/openapi/v3/api/v1, "
        "'string' in this document); this document is left out — generate the rest with "
        "--keep-going, or choose groups with --group"
    )
    assert {s.file for s in prep.left_out} == {f"{HOST}{apps_path}"}
    # the other group-versions are still prepared
    assert {"core.v1.models.Pod", "coordination.v1.models.Lease"} <= set(prep.schemas)
    assert "apps.v1.models.Deployment" not in prep.schemas


def test_group_selection_fetches_only_the_chosen_documents() -> None:
    server = RecordedServer()
    model = cluster.cluster_model(server.get_json, HOST, groups=["coordination.k8s.io"])
    assert model.errors == []
    assert [p for p in server.asked if p.startswith("/openapi/v3/")] == [
        "/openapi/v3/apis/coordination.k8s.io/v1"
    ]
    assert {(r.group, r.kind) for r in model.resources} == {("coordination.k8s.io", "Lease")}
    assert model.crds == []


def test_an_unknown_group_is_an_error_listing_the_served_ones() -> None:
    model = cluster.cluster_model(RecordedServer().get_json, HOST, groups=["core", "nope.io"])
    assert [str(e) for e in model.errors] == [
        f"{HOST}/openapi/v3: --group nope.io: the cluster serves no such API group; it serves "
        "apps, coordination.k8s.io, core, infra.example.com"
    ]
    assert {r.group for r in model.resources} == {""}


def test_a_document_that_cannot_be_fetched_does_not_stop_the_others() -> None:
    server = RecordedServer()
    missing = "/openapi/v3/apis/apps/v1"
    real = server.get_json

    def failing(url: str) -> Any:
        if url.split("?")[0] == missing:
            raise OSError("HTTP 503")
        return real(url)

    model = cluster.cluster_model(failing, HOST)
    assert [str(e) for e in model.errors] == [
        f"{HOST}{missing} (document 0): cannot fetch: HTTP 503; the other group-versions were read"
    ]
    assert {r.group for r in model.resources} == {"", "coordination.k8s.io", "infra.example.com"}


@pytest.fixture
def no_cluster_env(tmp_path: Path) -> dict[str, str]:
    """A HOME without ~/.kube/config, no KUBECONFIG, not inside a pod."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    env["HOME"] = str(tmp_path / "home")
    return env


def test_without_any_cluster_configuration_the_error_says_so(
    tmp_path: Path, no_cluster_env: dict[str, str]
) -> None:
    run = run_generator(
        "--cluster", "--out", tmp_path / "o", "--package", "o", base_env=no_cluster_env
    )
    assert run.returncode == EXIT_FATAL, run.output
    home = tmp_path / "home"
    assert run.stderr.strip().splitlines()[-1] == (
        "kubeinformers generate: --cluster: no cluster to read: KUBECONFIG is not set, "
        f"{home / '.kube' / 'config'} does not exist, and this is not a pod "
        "(KUBERNETES_SERVICE_HOST is not set); set KUBECONFIG to your cluster's kubeconfig, "
        "or generate from files with --openapi/--crd"
    )
    assert "Service host/port" not in run.stderr


def test_a_kubeconfig_that_does_not_exist_is_named(
    tmp_path: Path, no_cluster_env: dict[str, str]
) -> None:
    missing = tmp_path / "nope.kubeconfig"
    env = dict(no_cluster_env, KUBECONFIG=str(missing))
    run = run_generator("--cluster", "--out", tmp_path / "o", "--package", "o", base_env=env)
    assert run.returncode == EXIT_FATAL, run.output
    assert (
        f"kubeinformers generate: --cluster: KUBECONFIG={missing} names no existing file; "
        "point KUBECONFIG at your cluster's kubeconfig"
    ) in run.stderr


def test_keep_going_generates_every_group_but_the_conflicting_document(tmp_path: Path) -> None:
    """The same two recorded documents as files (--openapi folder): apps/v1's DeleteOptions
    made to differ, so apps/v1 is left out while coordination.k8s.io is generated."""
    folder = tmp_path / "v3"
    folder.mkdir()
    lease_doc = read_recorded("/openapi/v3/apis/coordination.k8s.io/v1")
    apps_doc = read_recorded("/openapi/v3/apis/apps/v1")
    apps_doc["components"]["schemas"][DELETE_OPTIONS]["properties"]["dryRun"]["type"] = "string"
    (folder / "a_coordination.json").write_text(json.dumps(lease_doc))
    (folder / "b_apps.json").write_text(json.dumps(apps_doc))
    out = tmp_path / "kg"
    run = run_generator("--openapi", folder, "--keep-going", "--out", out, "--package", "kg")
    assert run.returncode == 1, run.output
    (error,) = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert error.startswith(
        f"error: {folder / 'b_apps.json'} (document 0) at components.schemas.{DELETE_OPTIONS}: "
        f"differs from the schema of the same name in {folder / 'a_coordination.json'} (at "
        "properties.dryRun.type: 'array' in"
    ), error
    assert (out / "coordination" / "v1" / "informers.py").is_file()
    assert not (out / "apps").exists()


@pytest.mark.parametrize(("flags", "keep_going"), [((), True), (("--keep-going",), True)])
def test_cluster_input_never_lets_one_document_stop_the_other_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], keep_going: bool
) -> None:
    """A live cluster's documents cannot be edited by the user: `--cluster` implies
    `--keep-going`, so a conflicting document (above) is left out and the rest is written."""
    from kubeinformers.generator import cli

    seen: dict[str, Any] = {}

    def fake_run(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(cli, "run", fake_run)
    assert cli.main(["generate", "--cluster", *flags, "--out", str(tmp_path / "o")]) == 0
    assert seen["cluster"] is True
    assert seen["keep_going"] is keep_going
    assert cli.main(["generate", "--openapi", str(tmp_path), "--out", str(tmp_path / "o")]) == 0
    assert seen["keep_going"] is False  # files can be fixed: no implied --keep-going


def _crd_list_with_a_refused_copy(conditions: list[dict[str, str]]) -> dict[str, Any]:
    """The recorded CRD list plus `ds.infra.example.com`: Realm's kind again, in the state
    `conditions` say (a real server refuses the second CRD of a kind: NamesAccepted=False)."""
    crds: dict[str, Any] = copy.deepcopy(read_recorded(cluster.CRD_PATH))
    refused = copy.deepcopy(crds["items"][0])
    refused["metadata"]["name"] = "ds.infra.example.com"
    refused["spec"]["names"] = {**refused["spec"]["names"], "plural": "ds", "singular": "d"}
    refused["status"]["conditions"] = conditions
    crds["items"].append(refused)
    return crds


@pytest.mark.parametrize(
    ("conditions", "why"),
    [
        (
            [
                {
                    "type": "NamesAccepted",
                    "status": "False",
                    "reason": "KindConflict",
                    "message": '"Realm" is already in use',
                },
                {"type": "Established", "status": "False", "reason": "NotAccepted"},
            ],
            'the server did not accept its names (NamesAccepted=False: "Realm" is already in '
            "use), so it serves nothing",
        ),
        (
            [
                {"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": "False", "reason": "Installing"},
            ],
            "the server has not established it (Established=False: Installing), so it serves "
            "nothing",
        ),
    ],
)
def test_h23_a_crd_the_server_does_not_serve_is_skipped_with_a_note(
    conditions: list[dict[str, str]], why: str
) -> None:
    edit = {cluster.CRD_PATH: _crd_list_with_a_refused_copy(conditions)}
    model = cluster.cluster_model(RecordedServer(edit).get_json, HOST)
    assert model.errors == []
    assert [d.name for d in model.definitions] == ["realms.infra.example.com"]
    assert [(r.kind, r.plural) for r in model.resources if r.from_crd] == [("Realm", "realms")]
    assert (
        f"CRD ds.infra.example.com ({HOST}{cluster.CRD_PATH}/ds.infra.example.com): skipped, {why}"
    ) in model.notes


def test_an_error_in_a_clusters_crd_names_that_crds_own_url() -> None:
    crds: dict[str, Any] = copy.deepcopy(read_recorded(cluster.CRD_PATH))
    broken = copy.deepcopy(crds["items"][0])
    broken["metadata"]["name"] = "gizmos.infra.example.com"
    broken["spec"]["names"] = {**broken["spec"]["names"], "kind": "Gizmo", "plural": "gizmos"}
    broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = ["not", "a", "schema"]
    crds["items"].append(broken)
    model = cluster.cluster_model(RecordedServer({cluster.CRD_PATH: crds}).get_json, HOST)
    where = [e.file for e in model.errors]
    assert where == [f"{HOST}{cluster.CRD_PATH}/gizmos.infra.example.com"], model.errors
    assert "(document" not in str(model.errors[0])


def _refused_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: a connection is refused
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_h29_an_unreachable_server_is_one_error_that_says_so_without_retry_noise(
    tmp_path: Path, no_cluster_env: dict[str, str]
) -> None:
    server = f"https://127.0.0.1:{_refused_port()}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    env = dict(no_cluster_env, KUBECONFIG=str(kubeconfig))
    run = run_generator("--cluster", "--out", tmp_path / "o", "--package", "o", "-q", base_env=env)
    assert run.returncode == 1, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, run.stderr
    assert errors[0].startswith(f"error: {server}{cluster.CRD_PATH}: cannot reach the API server ")
    assert "Connection refused" in errors[0]
    assert errors[0].endswith(
        "check that the cluster is running and that the kubeconfig's server address is right"
    )
    assert "needs `list`" not in run.stderr and "needs `get`" not in run.stderr
    assert "Retrying" not in run.stderr


def test_h29_only_a_403_names_a_permission_and_a_401_names_the_credentials() -> None:
    def answering(status: int) -> Any:
        def get_json(url: str) -> Any:
            raise cluster.HTTPStatusError(status)

        return get_json

    forbidden = [str(e) for e in cluster.cluster_model(answering(403), HOST).errors]
    assert forbidden == [
        f"{HOST}{cluster.CRD_PATH}: cannot list CRDs: HTTP 403 Forbidden; the kubeconfig's "
        "user needs `list` on customresourcedefinitions (or generate from CRD files with --crd)",
        f"{HOST}/openapi/v3: cannot read: HTTP 403 Forbidden; the kubeconfig's user needs "
        "`get` on the non-resource URLs /openapi/v3 and /openapi/v3/*",
    ]
    unauthorized = [str(e) for e in cluster.cluster_model(answering(401), HOST).errors]
    assert unauthorized == [
        f"{HOST}{cluster.CRD_PATH}: cannot list CRDs: HTTP 401 Unauthorized; the server did "
        "not accept the kubeconfig's credentials (an expired token or certificate?): renew "
        "them or point KUBECONFIG at another kubeconfig"
    ]
    failing = [str(e) for e in cluster.cluster_model(answering(500), HOST).errors]
    assert failing[0] == f"{HOST}{cluster.CRD_PATH}: cannot list CRDs: HTTP 500"
    assert "needs" not in " ".join(failing)
