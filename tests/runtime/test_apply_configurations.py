"""Apply configurations without a server (M8): what `client.apply` sends for a generated
`<Kind>Apply` and what it returns. The real server's merges are in tests/e2e/test_client_real.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from examples.informers.demo.v1.apply.gadget import GadgetApply
from examples.informers.demo.v1.apply.widget import WidgetApply
from examples.informers.demo.v1.gadget import Gadget
from examples.informers.demo.v1.widget import Widget
from kubeinformers.generated.apps.v1 import Deployment
from kubeinformers.generated.apps.v1.apply import DeploymentApply, DeploymentSpecApply
from kubeinformers.runtime.client.typed import APPLY_PATCH, _Calls


def test_m8_a_configuration_sends_exactly_its_fields_with_apiversion_and_kind() -> None:
    config = DeploymentApply(metadata={"name": "web", "namespace": "prod"}, spec={"replicas": 3})
    call = _Calls().apply(
        config, field_manager="scaler", force=False, subresource=None, dry_run=False
    )
    assert call.request.method == "PATCH" and call.request.content_type == APPLY_PATCH
    assert call.request.path == "/apis/apps/v1/namespaces/prod/deployments/web"
    assert dict(call.request.query) == {"fieldManager": "scaler"}
    assert json.loads(call.request.body or b"") == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"replicas": 3},  # no selector, no template: the scaler owns only replicas
    }
    # What a factory's client waits for before returning (read your writes, M1).
    assert call.resource is not None and call.resource.kind == "Deployment"
    assert (call.namespace, call.name) == ("prod", "web")
    # The answer is the whole object, typed by the configuration's kind.
    answer = {
        "kind": "Deployment",
        "metadata": {"name": "web", "uid": "u"},
        "spec": {"replicas": 3, "selector": {}, "template": {}},
    }
    decoded = call.decode(json.dumps(answer).encode())
    assert type(decoded) is Deployment and decoded.metadata and decoded.metadata.uid == "u"


def test_m8_the_status_configuration_goes_to_the_status_subresource() -> None:
    when = datetime(2026, 11, 24, 12, 0, 5, tzinfo=UTC)
    config = WidgetApply(
        metadata={"name": "w", "namespace": "n"},
        status={
            "phase": "Ready",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": when}],
        },
    )
    call = _Calls().apply(
        config, field_manager="ctl", force=True, subresource="status", dry_run=True
    )
    assert call.request.path == "/apis/demo.kubeinformers.io/v1/namespaces/n/widgets/w/status"
    assert dict(call.request.query) == {"fieldManager": "ctl", "force": "true", "dryRun": "All"}
    body = json.loads(call.request.body or b"")
    assert body["status"]["conditions"][0]["lastTransitionTime"] == "2026-11-24T12:00:05.000000Z"
    assert call.resource is None  # a dry run: nothing for the cache to wait for (M1)
    assert WidgetApply.model() is Widget


def test_m8_a_cluster_scoped_configuration_has_no_namespace_in_its_path() -> None:
    call = _Calls().apply(
        GadgetApply(metadata={"name": "g"}, spec={"model": "m1"}),
        field_manager="me",
        force=False,
        subresource=None,
        dry_run=False,
    )
    assert call.request.path == "/apis/demo.kubeinformers.io/v1/gadgets/g"
    assert GadgetApply.model() is Gadget


def test_m8_a_configuration_without_a_name_or_namespace_is_refused_before_sending() -> None:
    nameless = DeploymentApply(metadata={"namespace": "n"})  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match="no metadata name"):
        _Calls().apply(nameless, field_manager="me", force=False, subresource=None, dry_run=False)
    homeless = DeploymentApply(metadata={"name": "web"})  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match="needs a namespace"):
        _Calls().apply(homeless, field_manager="me", force=False, subresource=None, dry_run=False)


def test_m8_a_configuration_is_a_plain_document() -> None:
    """Unset arguments are not sent; nothing is validated or copied at build time."""
    spec: DeploymentSpecApply = {"replicas": 2}
    config = DeploymentApply(metadata={"name": "a", "namespace": "b"}, spec=spec)
    assert config.fields == {"metadata": {"name": "a", "namespace": "b"}, "spec": {"replicas": 2}}
    assert config == DeploymentApply(metadata={"name": "a", "namespace": "b"}, spec={"replicas": 2})
    assert "DeploymentApply(" in repr(config)
