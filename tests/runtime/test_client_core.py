"""The typed client's core without a server (M4, M7): request bodies, typed errors, the
Retry-After loop and retry_on_conflict. The real-server behaviour is in
tests/e2e/test_client_real.py."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import ValidationError

from examples.informers.demo.v1.widget import Widget, WidgetSpec
from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.api.errors import (
    AlreadyExists,
    ApiStatusError,
    BadRequest,
    Conflict,
    Invalid,
    NotFound,
    TooManyRequests,
)
from kubeinformers.runtime.client.retry import Backoff, retry_on_conflict
from kubeinformers.runtime.client.typed import APPLY_PATCH, Client, _Calls
from kubeinformers.runtime.codec.drift import InvalidFieldError


@dataclass
class _Resp:
    status: int
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)


class _Pool:
    def __init__(self, answers: list[_Resp]) -> None:
        self.answers = answers
        self.sent: list[dict[str, Any]] = []

    def request(self, method: str, url: str, **kw: Any) -> _Resp:
        self.sent.append({"method": method, "url": url, **kw})
        return self.answers.pop(0)


class _ApiClient:
    """The parts of kubernetes.client.ApiClient the core uses."""

    def __init__(self, answers: list[_Resp]) -> None:
        self.configuration = type(
            "C", (), {"host": "https://k8s.test", "connection_pool_maxsize": 200}
        )()
        self.default_headers: dict[str, str] = {}
        self.user_agent = "test"
        self.rest_client = type("R", (), {"pool_manager": _Pool(answers)})()

    def update_params_for_auth(self, headers: dict[str, str], *_: Any) -> None:
        headers["Authorization"] = "Bearer secret"


def _status(code: int, reason: str, message: str, **details: Any) -> bytes:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    body |= {"reason": reason, "message": message, "details": details}
    return json.dumps(body).encode()


def test_m7_apply_sends_only_the_fields_set() -> None:
    """Fields left unset (None in the model) are not sent, so the manager claims none of them."""
    w = Widget(metadata=ObjectMeta(name="w", namespace="n"), spec=WidgetSpec(size="small"))
    call = _Calls().apply(w, field_manager="me", force=True, subresource=None, dry_run=False)
    assert call.request.content_type == APPLY_PATCH
    assert dict(call.request.query) == {"fieldManager": "me", "force": "true"}
    assert json.loads(call.request.body or b"") == {
        "apiVersion": "demo.kubeinformers.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"size": "small"},
    }
    assert call.request.path == "/apis/demo.kubeinformers.io/v1/namespaces/n/widgets/w"


def test_m7_update_sends_every_field_including_unknown_ones() -> None:
    """M5: fields the model lacks (a newer server's) are kept through read-modify-write."""
    w = Widget.model_validate(
        {
            "metadata": {"name": "w", "namespace": "n", "resourceVersion": "7"},
            "spec": {"size": "small", "rating": 5},
            "futureField": {"a": 1},
        }
    )
    call = _Calls().write("update", w, subresource=None, field_manager=None, dry_run=False)
    body = json.loads(call.request.body or b"")
    assert body["spec"]["rating"] == 5 and body["futureField"] == {"a": 1}
    assert body["metadata"]["resourceVersion"] == "7" and call.request.method == "PUT"


def test_m7_a_namespaced_object_without_a_namespace_is_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="needs a namespace"):
        _Calls().write(
            "create",
            ConfigMap(metadata=ObjectMeta(name="c")),
            subresource=None,
            field_manager=None,
            dry_run=False,
        )


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (422, "Invalid", Invalid),
    ],
)
def test_m4_failures_raise_the_typed_error_with_the_status(
    code: int, reason: str, cls: type[ApiStatusError]
) -> None:
    api = _ApiClient(
        [_Resp(code, _status(code, reason, "nope", name="c", causes=[{"field": "x"}]))]
    )
    with pytest.raises(cls) as err:
        Client(api).get(ConfigMap, "c", namespace="n")
    assert err.value.status.reason == reason and err.value.status.code == code
    assert err.value.causes[0].field == "x"
    assert 'get configmaps "c" in namespace "n" at https://k8s.test: nope' in str(err.value)
    assert "secret" not in str(err.value)


def test_m4_a_conflict_says_what_to_do_by_the_kind_of_write_not_by_the_objects_name() -> None:
    stale = _Resp(409, _status(409, "Conflict", "Operation cannot be fulfilled: modified"))
    named_apply = ConfigMap(metadata=ObjectMeta(name="apply-cfg", namespace="apply", uid="u"))
    with pytest.raises(Conflict) as err:
        Client(_ApiClient([stale])).update(named_apply)
    assert "read it again and redo the change" in str(err.value)
    assert "force=True" not in str(err.value)
    owned = _Resp(409, _status(409, "Conflict", "Apply failed with 1 conflict"))
    with pytest.raises(Conflict) as err:
        Client(_ApiClient([owned])).apply(named_apply, field_manager="me")
    assert "take them over with force=True" in str(err.value)


def test_m4_the_errors_status_holds_the_servers_own_message() -> None:
    api = _ApiClient([_Resp(404, _status(404, "NotFound", 'configmaps "c" not found'))])
    with pytest.raises(NotFound) as err:
        Client(api).get(ConfigMap, "c", namespace="n")
    assert err.value.status.message == 'configmaps "c" not found'
    assert str(err.value).startswith('cannot get configmaps "c" in namespace "n" at https://')


def test_m4_too_many_requests_is_retried_after_retry_after_then_raised() -> None:
    throttled = _Resp(429, _status(429, "TooManyRequests", "slow down"), {"Retry-After": "0"})
    ok = _Resp(200, json.dumps({"metadata": {"name": "c", "namespace": "n"}}).encode())
    api = _ApiClient([throttled, throttled, ok])
    assert Client(api).get(ConfigMap, "c", namespace="n").metadata == ObjectMeta(
        name="c", namespace="n"
    )
    assert len(api.rest_client.pool_manager.sent) == 3

    api = _ApiClient([throttled] * 11)
    with pytest.raises(TooManyRequests) as err:
        Client(api).get(ConfigMap, "c", namespace="n")
    assert err.value.retry_after == 0 and len(api.rest_client.pool_manager.sent) == 11


def test_m4_retry_on_conflict_retries_conflicts_only_and_gives_up_after_its_steps() -> None:
    calls: list[int] = []

    def conflicts_twice() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Conflict(409, "Conflict", "stale")
        return "done"

    assert retry_on_conflict(conflicts_twice) == "done" and len(calls) == 3

    def always() -> str:
        calls.append(1)
        raise Conflict(409, "Conflict", "stale")

    calls.clear()
    with pytest.raises(Conflict):
        retry_on_conflict(always, Backoff(steps=4, duration=0.0))
    assert len(calls) == 4

    def not_found() -> str:
        calls.append(1)
        raise NotFound(404, "NotFound", "gone")

    calls.clear()
    with pytest.raises(NotFound):
        retry_on_conflict(not_found)
    assert len(calls) == 1


def test_m7_local_api_server_refuses_a_dry_run_instead_of_writing() -> None:
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer() as server:
        client = Client(server.api_client())
        cm = ConfigMap(metadata=ObjectMeta(name="dry", namespace="default"))
        with pytest.raises(BadRequest, match="dryRun"):
            client.create(cm, dry_run=True)
        with pytest.raises(NotFound):
            client.get(ConfigMap, "dry", namespace="default")
        client.create(cm)
        with pytest.raises(BadRequest):
            client.delete(ConfigMap, "dry", namespace="default", dry_run=True)
        assert client.get(ConfigMap, "dry", namespace="default").metadata is not None


def _drifted_widget(rv: str) -> bytes:
    """A Widget as a server whose CRD changed `spec.replicas` to a string would send it."""
    body = {"apiVersion": "demo.kubeinformers.io/v1", "kind": "Widget"}
    body |= {"metadata": {"name": "w", "namespace": "n", "resourceVersion": rv}}
    body |= {"spec": {"size": "small", "replicas": "three"}}
    return json.dumps(body).encode()


def test_k11_m5_the_clients_answers_are_read_as_tolerantly_as_an_informers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A field that no longer validates does not make a read fail, nor a write that the
    server applied look failed: the object comes back, that field raises when read, its
    value is kept for the next write, and it is said once."""
    api = _ApiClient([_Resp(200, _drifted_widget("7")), _Resp(200, _drifted_widget("8"))])
    client = Client(api)
    caplog.set_level(logging.WARNING, logger="kubeinformers")
    got = client.get(Widget, "w", namespace="n")
    assert got.metadata is not None and got.metadata.resource_version == "7"
    assert got.spec is not None and got.spec.size == "small"
    with pytest.raises(InvalidFieldError, match=r"spec\.replicas"):
        _ = got.spec.replicas
    updated = client.update(got)  # the server applied it: no error
    assert updated.metadata is not None and updated.metadata.resource_version == "8"
    sent = json.loads(api.rest_client.pool_manager.sent[1]["body"])
    assert sent["spec"]["replicas"] == "three"  # the server's value went back as it came
    (said,) = [r for r in caplog.records if r.name == "kubeinformers.client"]
    assert said.levelno == logging.WARNING
    assert "Widget 'n/w'" in said.getMessage() and "spec.replicas" in said.getMessage()


def test_k11_an_answer_that_is_no_object_still_fails() -> None:
    api = _ApiClient([_Resp(200, b'["not", "an", "object"]')])
    with pytest.raises(ValidationError):
        Client(api).get(Widget, "w", namespace="n")
