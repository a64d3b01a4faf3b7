"""D23 without a server: the `kubernetes` loaders' refresh hook wrapped so a token file is read
again when it changes and after a 401, the user's host kept, refusals said once, tokens never
logged. (tests/e2e/test_real_resilience.py does the same against a real kube-apiserver.)"""

from __future__ import annotations

import copy
import logging
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.config.incluster_config import InClusterConfigLoader

from kubeinformers.runtime.client.credentials import credentials_for

LOG = "kubeinformers.credentials"


def write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)  # a new inode, as the kubelet's rename does


def kubeconfig_client(tmp_path: Path, user: dict[str, Any]) -> Any:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return config.new_client_from_config(config_file=str(path))  # type: ignore[no-untyped-call]


def header(cfg: Any) -> str:
    """The Authorization value a request would carry (runs the refresh hook, as requests do)."""
    value = cfg.auth_settings()["BearerToken"]["value"]
    assert isinstance(value, str)
    return value


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    write(path, "first-token\n")
    return path


def test_d23_kubeconfig_token_file_is_read_again_when_it_changes(
    tmp_path: Path, token_file: Path
) -> None:
    api = kubeconfig_client(tmp_path, {"tokenFile": str(token_file)})
    credentials = credentials_for(api.configuration)
    assert credentials_for(api.configuration) is credentials
    assert str(token_file) in credentials.source
    assert header(api.configuration) == "Bearer first-token"  # trimmed: no "\n" in a header
    write(token_file, "second-token\n")
    assert credentials.changed()
    assert header(api.configuration) == "Bearer second-token"
    assert header(api.configuration) == "Bearer second-token"  # the hook stays wrapped
    assert not credentials.changed()


def test_d23_in_cluster_token_is_read_again_when_it_changes(
    tmp_path: Path, token_file: Path
) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("not checked here\n")
    cfg = client.Configuration()
    loader = InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=str(token_file),
        cert_filename=str(ca),
        environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
    )
    loader.load_and_set(cfg)  # type: ignore[no-untyped-call]
    credentials_for(cfg)
    assert header(cfg) == "bearer first-token"
    write(token_file, "rotated\n")  # well within the loader's own 60 s
    assert header(cfg) == "bearer rotated"


def test_d23_after_a_401_the_file_is_read_at_once_and_the_refusal_said_once(
    tmp_path: Path, token_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOG)
    api = kubeconfig_client(tmp_path, {"tokenFile": str(token_file)})
    credentials = credentials_for(api.configuration)
    header(api.configuration)
    assert not credentials.refused("list pods")  # the file has not changed: no retry
    assert not credentials.refused("watch pods")
    token_file.write_text("renewed")
    assert credentials.refused("list pods")  # changed: retry at once
    assert header(api.configuration) == "Bearer renewed"
    credentials.accepted("list pods")
    credentials.accepted("list pods")  # said once
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOG]
    assert [level for level, _ in records] == [
        logging.WARNING,
        logging.DEBUG,
        logging.DEBUG,
        logging.INFO,
    ]
    assert records[0][1] == (
        f"credentials refused (401): cannot list pods; re-reading the token from {token_file}: "
        "unchanged, retrying with backoff until they change"
    )
    assert records[-1][1].startswith(
        f"credentials accepted again: list pods (the kubeconfig's token file {token_file})"
        ", after 3 refused requests over "
    )
    assert not any("token" in m and ("first-token" in m or "renewed" in m) for _, m in records)


def test_d23_wait_for_change_ends_when_the_file_changes(tmp_path: Path, token_file: Path) -> None:
    api = kubeconfig_client(tmp_path, {"tokenFile": str(token_file)})
    credentials = credentials_for(api.configuration)
    stop = threading.Event()
    assert not credentials.wait_for_change(stop, 0.05)
    timer = threading.Timer(0.1, write, (token_file, "later"))
    timer.start()
    try:
        assert credentials.wait_for_change(stop, 10.0)
    finally:
        timer.join()


def test_d23_static_credentials_have_nothing_to_refresh(caplog: pytest.LogCaptureFixture) -> None:
    cfg = client.Configuration()
    cfg.api_key = {"BearerToken": "Bearer fixed"}
    credentials = credentials_for(cfg)
    assert not credentials.refreshable() and not credentials.refused("list pods")
    record = caplog.records[-1]
    assert record.levelno == logging.ERROR  # nothing will heal it by itself
    assert "nothing to re-read" in record.getMessage()


def test_d23_the_host_the_user_sets_is_kept(tmp_path: Path, token_file: Path) -> None:
    """The kubeconfig loader's hook writes the kubeconfig's host back on every request."""
    api = kubeconfig_client(tmp_path, {"tokenFile": str(token_file)})
    cfg = api.configuration
    header(cfg)
    assert cfg.host == "https://127.0.0.1:6443"  # without the wrapper: reverted on every call
    credentials_for(cfg)
    cfg.host = "https://elsewhere:6443"
    cfg.verify_ssl = False
    header(cfg)
    assert (cfg.host, cfg.verify_ssl) == ("https://elsewhere:6443", False)


def test_d23_a_copied_configuration_shares_the_credentials(
    tmp_path: Path, token_file: Path
) -> None:
    api = kubeconfig_client(tmp_path, {"tokenFile": str(token_file)})
    credentials = credentials_for(api.configuration)
    twin = copy.deepcopy(api.configuration)
    assert credentials_for(twin) is credentials
    write(token_file, "for-both")
    assert header(twin) == "Bearer for-both"


def test_d23_an_exec_plugin_is_run_again_after_a_401(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The plugin prints an ExecCredential with the token of a file; after a 401 it runs again
    and its new token is used."""
    caplog.set_level(logging.INFO, logger=LOG)
    source = tmp_path / "issued"
    source.write_text("exec-one")
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib, sys\n"
        "token = pathlib.Path(sys.argv[1]).read_text()\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1',\n"
        "    'kind': 'ExecCredential', 'status': {'token': token}}))\n"
    )
    api = kubeconfig_client(
        tmp_path,
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": sys.executable,
                "args": [str(plugin), str(source)],
                "interactiveMode": "Never",
            }
        },
    )
    credentials = credentials_for(api.configuration)
    assert "exec plugin" in credentials.source and credentials.refreshable()
    assert header(api.configuration) == "Bearer exec-one"
    assert not credentials.refused("list pods")  # ran again: the same token
    source.write_text("exec-two")
    assert credentials.refused("list pods")
    assert header(api.configuration) == "Bearer exec-two"
    assert "running the kubeconfig's exec plugin" in caplog.records[0].getMessage()


def test_d23_the_typed_client_shares_the_informers_credentials(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """D23 for writes: a Client on a kubeconfig with a tokenFile reads it through the same
    credentials as the informers (on every kubernetes client version: apply_auth). A refused
    write raises Unauthorized and is said once; once the file holds a token the server
    accepts, the next write goes through and 'credentials accepted again' is said."""
    from kubeinformers import Client, Unauthorized
    from kubeinformers.generated.core.v1 import ConfigMap
    from kubeinformers.generated.meta.v1 import ObjectMeta
    from kubeinformers.testing import LocalApiServer

    caplog.set_level(logging.DEBUG, logger=LOG)
    token = tmp_path / "token"
    write(token, "old-token\n")
    with LocalApiServer(token="new-token") as server:
        kubeconfig = server.kubeconfig()
        kubeconfig["users"][0]["user"] = {"tokenFile": str(token)}
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(kubeconfig))
        api = config.new_client_from_config(config_file=str(path))  # type: ignore[no-untyped-call]
        typed = Client(api)
        wanted = ConfigMap(metadata=ObjectMeta(name="c", namespace="default"), data={"k": "v"})
        with pytest.raises(Unauthorized):
            typed.create(wanted)
        write(token, "new-token\n")
        created = typed.create(wanted)
        assert created.data == {"k": "v"}
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOG]
    assert [level for level, _ in said if level >= logging.INFO] == [logging.WARNING, logging.INFO]
    assert said[0][1].startswith("credentials refused (401): cannot create")
    assert not any("old-token" in m or "new-token" in m for _, m in said)
