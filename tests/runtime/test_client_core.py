"""The typed client's core without a server (M4, M7): request bodies, typed errors, the
Retry-After loop and retry_on_conflict. The real-server behaviour is in
tests/e2e/test_client_real.py."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from examples.informers.demo.v1.apply.widget import WidgetApply
from examples.informers.demo.v1.widget import Widget, WidgetSpec
from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.api.errors import (
    AlreadyExists,
    ApiStatusError,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    TooManyRequests,
    UnsupportedMediaType,
)
from kubeinformers.runtime.api.resource import APIResource
from kubeinformers.runtime.client import server_warnings, typed
from kubeinformers.runtime.client.retry import Backoff, retry_on_conflict
from kubeinformers.runtime.client.typed import (
    APPLY_PATCH,
    AsyncClient,
    Client,
    UnreadableAnswerError,
    _Calls,
)
from kubeinformers.runtime.codec.drift import InvalidFieldError, InvalidObjectError

_REPO = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a%2Fb"])
def test_m9_a_name_that_is_no_path_segment_is_refused_before_any_request(name: str) -> None:
    api = _ApiClient([])  # no answer: a request sent would fail the test with IndexError
    client = Client(api)
    calls: list[Callable[[], object]] = [
        lambda: client.get(ConfigMap, name, namespace="n"),
        lambda: client.delete(ConfigMap, name, namespace="n"),
        lambda: client.patch(ConfigMap, name, {"data": {}}, namespace="n"),
        lambda: client.apply(
            WidgetApply(metadata={"name": name or "w", "namespace": "n" if name else ".."}),
            field_manager="me",
        ),
        lambda: client.get_scale(Widget, name, namespace="n"),
        lambda: client.list(ConfigMap, namespace=name or "/"),
    ]
    for call in calls:
        with pytest.raises(
            ValueError, match=r"(configmaps|widgets\.demo\.kubeinformers\.io).* may not"
        ):
            call()
    assert api.rest_client.pool_manager.sent == []


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
    owned = _Resp(
        409,
        _status(
            409,
            "Conflict",
            'Apply failed with 1 conflict: conflict with "m1": .data.x',
            causes=[{"reason": "FieldManagerConflict", "message": 'conflict with "m1"'}],
        ),
    )
    with pytest.raises(Conflict) as err:
        Client(_ApiClient([owned])).apply(named_apply, field_manager="me")
    assert "take them over with force=True" in str(err.value)


def test_m4_an_apply_with_a_stale_resource_version_is_not_told_to_force() -> None:
    # The real server's answer to an apply that sent an old metadata.resourceVersion: a
    # Conflict without FieldManagerConflict causes, which force=True does not get past.
    stale = _Resp(
        409,
        _status(
            409,
            "Conflict",
            'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
            "please apply your changes to the latest version and try again",
            name="c",
            kind="configmaps",
        ),
    )
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="n", resource_version="1"))
    with pytest.raises(Conflict) as err:
        Client(_ApiClient([stale])).apply(cm, field_manager="me")
    assert "force=True" not in str(err.value)
    assert "leave resourceVersion out of an apply" in str(err.value)


def test_m4_an_invalid_json_patch_says_why_when_the_server_does_not() -> None:
    # The real server's answer to a JSON patch whose `test` fails or whose path is missing:
    # 422 with no causes and a message that names nothing.
    body = _status(422, "Invalid", "the server rejected our request due to an error in our request")
    patch = [{"op": "remove", "path": "/data/missing"}]
    with pytest.raises(Invalid) as err:
        Client(_ApiClient([_Resp(422, body)])).patch(
            ConfigMap, "c", patch, namespace="n", patch_type="json"
        )
    assert not err.value.causes and "named in the error's causes" not in str(err.value)
    assert "JSON patch does not apply to the object" in str(err.value)
    # The same answer to an operation the server cannot read (an unknown op, no path).
    with pytest.raises(Invalid) as err:
        Client(_ApiClient([_Resp(422, body)])).patch(
            ConfigMap, "c", [{"op": "bogus", "path": "/data/a"}], namespace="n", patch_type="json"
        )
    assert "an operation is malformed (an `op` other than add, remove" in str(err.value)
    with pytest.raises(Invalid) as err:  # another 422 without causes: no causes to point at
        Client(_ApiClient([_Resp(422, body)])).patch(ConfigMap, "c", {"data": {}}, namespace="n")
    assert "named in the error's causes" not in str(err.value)


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


def test_m4_a_429_without_retry_after_is_raised_at_once_and_an_eviction_says_why() -> None:
    """client-go's checkWait: a 429 is sent again only after a Retry-After. An eviction its
    pod's PodDisruptionBudget does not allow now is answered 429 without one: raised at
    once (it was sent again ten times, a second apart, and called "the server is
    overloaded"), saying the budget decides and to evict again later."""
    cause = {
        "reason": "DisruptionBudget",
        "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
    }
    refused = _status(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
        causes=[cause],
    )
    api = _ApiClient([_Resp(429, refused)] * 3)
    with pytest.raises(TooManyRequests) as err:
        Client(api).get(ConfigMap, "c", namespace="n")
    assert len(api.rest_client.pool_manager.sent) == 1
    assert "PodDisruptionBudget allows no disruption now" in str(err.value)
    assert "overloaded" not in str(err.value)
    plain = _Resp(429, _status(429, "TooManyRequests", "not now"))
    api = _ApiClient([plain] * 3)
    with pytest.raises(TooManyRequests, match="without a Retry-After: try again later"):
        Client(api).get(ConfigMap, "c", namespace="n")
    assert len(api.rest_client.pool_manager.sent) == 1


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


def test_m19_local_api_server_answers_a_dry_run_as_the_server_and_keeps_nothing() -> None:
    """A dry run goes through the whole write and answers what it would store (a created
    object without a resourceVersion, an updated one with the one it has), as kube-apiserver
    does (tests/e2e/test_fake_matches_real.py, dry_run); nothing is stored and no version
    passes, so no watch hears of it."""
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer() as server:
        client = Client(server.api_client())
        cm = ConfigMap(metadata=ObjectMeta(name="dry", namespace="default"), data={"a": "1"})
        version = server.resource_version
        would = client.create(cm, dry_run=True)
        assert would.metadata is not None and would.metadata.uid
        assert would.metadata.resource_version is None and would.data == {"a": "1"}
        with pytest.raises(NotFound):
            client.get(ConfigMap, "dry", namespace="default")
        assert server.resource_version == version
        created = client.create(cm)
        assert created.metadata is not None
        changed = created.model_copy(update={"data": {"a": "2"}})
        updated = client.update(changed, dry_run=True)
        assert updated.data == {"a": "2"} and updated.metadata is not None
        assert updated.metadata.resource_version == created.metadata.resource_version
        client.delete(ConfigMap, "dry", namespace="default", dry_run=True)
        kept = client.get(ConfigMap, "dry", namespace="default")
        assert kept.data == {"a": "1"} and kept.metadata is not None
        assert kept.metadata.resource_version == created.metadata.resource_version


def _drifted_widget(rv: str) -> bytes:
    """A Widget as a server whose CRD changed `spec.replicas` to a string would send it."""
    body: dict[str, Any] = {"apiVersion": "demo.kubeinformers.io/v1", "kind": "Widget"}
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


def _paused_drift(rv: str, name: str = "w") -> bytes:
    """A Widget as kube-apiserver sent it once its CRD made `spec.paused` (a boolean in the
    generated model) a string (found on a real kube-apiserver 1.36)."""
    body: dict[str, Any] = {"apiVersion": "demo.kubeinformers.io/v1", "kind": "Widget"}
    body |= {"metadata": {"name": name, "namespace": "n", "resourceVersion": rv}}
    body |= {"spec": {"size": "small", "paused": "sometimes", "color": "blue"}}
    body |= {"status": {"phase": "Ready"}}
    return json.dumps(body).encode()


_WIDGET_APPLY = WidgetApply(metadata={"name": "w", "namespace": "n"}, spec={"color": "teal"})

# Every call of the client that answers with the object, as (call, whether it sends the
# object read before as its body). Each takes the client (either face) and that object.
_OBJECT_CALLS: dict[str, tuple[Callable[[Any, Widget], Any], bool]] = {
    "get": (lambda c, w: c.get(Widget, "w", namespace="n"), False),
    "create": (lambda c, w: c.create(w), True),
    "update": (lambda c, w: c.update(w), True),
    "update_status": (lambda c, w: c.update_status(w), True),
    "patch": (lambda c, w: c.patch(Widget, "w", {"spec": {"color": "x"}}, namespace="n"), False),
    "patch_status": (
        lambda c, w: c.patch(Widget, "w", {"status": {}}, namespace="n", subresource="status"),
        False,
    ),
    "apply_model": (lambda c, w: c.apply(w, field_manager="t", force=True), True),
    "apply_configuration": (lambda c, w: c.apply(_WIDGET_APPLY, field_manager="t"), False),
    "apply_status": (lambda c, w: c.apply_status(w, field_manager="t"), True),
    # A delete answers with the object while a finalizer keeps it.
    "delete": (lambda c, w: c.delete(Widget, "w", namespace="n"), False),
}


def _on_face(face: str, api: _ApiClient, call: Callable[[Any, Widget], Any], obj: Widget) -> Any:
    if face == "sync":
        return call(Client(api), obj)

    async def main() -> Any:
        return await call(AsyncClient(api), obj)

    return asyncio.run(main())


@pytest.mark.parametrize("face", ["sync", "async"])
@pytest.mark.parametrize("name", _OBJECT_CALLS)
def test_k11_m2_every_call_reads_a_drifted_answer_as_an_informer_does(name: str, face: str) -> None:
    """get, every write (status and apply ones too) and a delete answered with the object, on
    both faces: the object comes back (a write the server applied is never reported as failed),
    its bad field raises InvalidFieldError when read, the rest reads, and neither the write's
    body nor any dump of the answer warns (the server's value is held as it came)."""
    call, sends_object = _OBJECT_CALLS[name]
    api = _ApiClient([_Resp(200, _paused_drift("7")), _Resp(200, _paused_drift("8"))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = Client(api).get(Widget, "w", namespace="n")
        got = _on_face(face, api, call, read)
        assert isinstance(got, Widget) and got.metadata is not None
        assert got.metadata.resource_version == "8"
        assert got.spec is not None and got.spec.color == "blue" and got.spec.size == "small"
        with pytest.raises(InvalidFieldError, match=r"spec\.paused") as info:
            _ = got.spec.paused
        assert info.value.value == "sometimes" and info.value.key == "n/w"
        assert json.loads(got.model_dump_json(exclude_unset=True)) == json.loads(_paused_drift("8"))
    if sends_object:
        sent = json.loads(api.rest_client.pool_manager.sent[1]["body"])
        assert sent["spec"]["paused"] == "sometimes"  # the server's value went back as it came


def test_k11_a_drifted_answer_is_said_once_per_object_the_last_ones_remembered(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once per object and bad fields, however often it is read; when more objects were said
    than are remembered, the least recently said is forgotten first (all were forgotten at
    once, and every object said again)."""
    monkeypatch.setattr(typed, "_REPORTED_MAX", 2)
    monkeypatch.setattr(typed, "_reported", OrderedDict())
    names = ["a", "b", "a", "c", "a", "b"]
    api = _ApiClient([_Resp(200, _paused_drift(str(i), name)) for i, name in enumerate(names)])
    client = Client(api)
    caplog.set_level(logging.WARNING, logger="kubeinformers.client")
    for name in names:
        client.get(Widget, name, namespace="n")
    said = [
        r.getMessage().split("'")[1] for r in caplog.records if r.name == "kubeinformers.client"
    ]
    assert said == ["n/a", "n/b", "n/c", "n/b"]  # b, the least recently said, was forgotten


class _Observer:
    """A factory's read-your-writes hook: records what each write waits for."""

    def __init__(self) -> None:
        self.waited: list[tuple[str | None, str, str | None]] = []

    def wait_for_write(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None:
        meta = getattr(result, "metadata", None)
        self.waited.append((namespace, name, getattr(meta, "resource_version", None)))

    async def wait_for_write_async(
        self,
        resource: APIResource,
        namespace: str | None,
        name: str,
        result: object,
        timeout: float,
        *,
        deleted: bool = False,
    ) -> None:
        self.wait_for_write(resource, namespace, name, result, timeout, deleted=deleted)


@pytest.mark.parametrize("face", ["sync", "async"])
def test_m1_k11_a_write_answered_with_a_drifted_object_waits_for_the_cache(face: str) -> None:
    """The answer is read, so read-your-writes waits for its resourceVersion (it was skipped:
    the write raised before the wait)."""
    api = _ApiClient([_Resp(200, _paused_drift("7")), _Resp(200, _paused_drift("8"))])
    observer = _Observer()
    read = Client(api).get(Widget, "w", namespace="n")
    if face == "sync":
        Client(api, observer=observer).update(read)
    else:
        asyncio.run(AsyncClient(api, observer=observer).update(read))
    assert observer.waited == [("n", "w", "8")]


def test_m1_k11_read_your_writes_of_a_drifted_object_through_a_factory() -> None:
    """End to end over LocalApiServer: the Widget CRD made spec.paused a string; the informer
    caches the object (K11), and a read-modify-write of the cached copy through
    factory.client() returns (update, patch, status writes, apply) once the lister has it."""
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.testing.local_api_server import LocalApiServer

    crd = yaml.safe_load((_REPO / "crds" / "demo.kubeinformers.io_widgets.yaml").read_text())
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    spec_schema = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec_schema["paused"] = {"type": "string"}  # the model says boolean
    with LocalApiServer() as server:
        server.create(crd)
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
        drifted = json.loads(_paused_drift("1"))
        del drifted["metadata"]["resourceVersion"], drifted["status"]
        server.create(drifted)
        with SharedInformerFactory(server.api_client(), namespace="n") as factory:
            lister = factory.lister(Widget).widgets("n")
            factory.start()
            assert all(factory.wait_for_cache_sync(timeout=30).values())
            client = factory.client(field_manager="t")

            def in_the_cache(result: Widget) -> Widget:
                cached = lister.get("w")
                assert result.metadata is not None and cached.metadata is not None
                assert cached.metadata.resource_version == result.metadata.resource_version
                return cached

            mine = lister.get("w").model_copy(deep=True)
            assert mine.spec is not None
            mine.spec.color = "green"
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                in_the_cache(client.update(mine))
                in_the_cache(client.patch(Widget, "w", {"spec": {"color": "red"}}, namespace="n"))
                status = {"status": {"phase": "Failed"}}
                in_the_cache(client.patch(Widget, "w", status, namespace="n", subresource="status"))
                in_the_cache(client.apply(_WIDGET_APPLY, force=True))

                async def on_the_async_face() -> Widget:
                    ours = factory.async_client(field_manager="t")
                    return await ours.patch(Widget, "w", {"spec": {"port": 80}}, namespace="n")

                cached = in_the_cache(asyncio.run(on_the_async_face()))
            assert cached.spec is not None and cached.spec.color == "teal"
            assert cached.spec.port == 80
            with pytest.raises(InvalidFieldError, match=r"spec\.paused"):
                _ = cached.spec.paused
            stored = server.get("demo.kubeinformers.io/v1", "Widget", "w", "n")
            assert stored["spec"]["paused"] == "sometimes"  # kept through every write
            assert stored["status"]["phase"] == "Failed"


# What each call is worded as in its error, and whether it writes.
_NO_OBJECT_CALLS: dict[str, tuple[Callable[[Client], Any], str, bool]] = {
    "get": (
        lambda c: c.get(Widget, "w", namespace="n"),
        'get widgets.demo.kubeinformers.io "w" in namespace "n"',
        False,
    ),
    "update": (
        lambda c: c.update(Widget.model_validate(json.loads(_widget_body()))),
        'update widgets.demo.kubeinformers.io "w" in namespace "n"',
        True,
    ),
    "update_dry_run": (
        lambda c: c.update(Widget.model_validate(json.loads(_widget_body())), dry_run=True),
        'update widgets.demo.kubeinformers.io "w" in namespace "n"',
        False,
    ),
    "delete": (
        lambda c: c.delete(Widget, "w", namespace="n"),
        'delete widgets.demo.kubeinformers.io "w" in namespace "n"',
        True,
    ),
    "get_scale": (
        lambda c: c.get_scale(Widget, "w", namespace="n"),
        'get widgets.demo.kubeinformers.io "w" in namespace "n" (scale)',
        False,
    ),
    "scale": (
        lambda c: c.scale(Widget, "w", 3, namespace="n"),
        'scale widgets.demo.kubeinformers.io "w" in namespace "n" to 3',
        True,
    ),
}


def _widget_body() -> bytes:
    return json.dumps(
        {"metadata": {"name": "w", "namespace": "n"}, "spec": {"size": "small"}}
    ).encode()


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        (b'["not", "an", "object"]', "a JSON array"),
        (b"<html>proxy error</html>", "not JSON"),
        (b"null", "a JSON null"),
        (b"", "not JSON"),
    ],
)
@pytest.mark.parametrize("name", _NO_OBJECT_CALLS)
def test_k11_m4_an_answer_that_is_no_object_fails_naming_the_request(
    name: str, answer: bytes, found: str
) -> None:
    """Only an answer with no object at all fails, with an error that names the request, the
    server and what came, and, for a write, says it may have been applied (not a raw pydantic
    ValidationError: a caller could not tell the write from a request that failed)."""
    call, what, writes = _NO_OBJECT_CALLS[name]
    with pytest.raises(UnreadableAnswerError) as info:
        call(Client(_ApiClient([_Resp(200, answer)])))
    err = info.value
    message = str(err)
    assert message.startswith(f"cannot {what} at https://k8s.test: ")
    assert f"(it is {found}: {answer.decode()!r})" in message
    assert ("may have been applied" in message) is writes
    assert isinstance(err, InvalidObjectError) and isinstance(err.validation_error, ValidationError)
    assert err.request.what == what and err.body == answer


def test_m4_a_read_object_created_or_applied_again_is_told_what_to_change() -> None:
    # The real server's answers (kube-apiserver 1.36) to a create and an apply of an object
    # read from it: their messages say what is wrong, not what to do.
    read = ConfigMap(
        metadata=ObjectMeta(name="c", namespace="n", resource_version="7", uid="u"), data={}
    )
    created = _Resp(
        500,
        _status(500, "InternalError", "resourceVersion should not be set on objects to be created"),
    )
    with pytest.raises(ApiStatusError) as err:
        Client(_ApiClient([created])).create(read)
    assert "clear metadata.resource_version" in str(err.value)
    applied = _Resp(400, _status(400, "BadRequest", "metadata.managedFields must be nil"))
    with pytest.raises(ApiStatusError) as err:
        Client(_ApiClient([applied])).apply(read, field_manager="me")
    assert "apply an apply configuration" in str(err.value)


def test_m4_a_refused_list_is_worded_as_every_other_refused_call() -> None:
    """`client.list` goes through the informers' transport; its 403 read "forbidden: cannot
    list ..." where every other call reads "cannot get ...": one wording, the verb, the
    resource, the server, the server's message and what to check."""
    from kubernetes import client as k8s

    from kubeinformers.runtime.api.errors import Forbidden
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer(token="admin", users={"nobody-token": "nobody"}) as server:
        cfg = server.configuration()
        cfg.api_key = {"authorization": "nobody-token"}
        said = {}
        with k8s.ApiClient(cfg) as api:
            nobody = Client(api)
            for verb, call in (
                ("get", lambda: nobody.get(ConfigMap, "x", namespace="default")),
                ("list", lambda: nobody.list(ConfigMap, namespace="default")),
            ):
                with pytest.raises(Forbidden) as refused:
                    call()
                said[verb] = refused.value.message
    for verb, message in said.items():
        assert message.startswith(f"cannot {verb} configmaps"), message
        assert f"at {server.url}:" in message and "check the RBAC rules" in message, message


def test_m4_a_resource_the_server_does_not_serve_is_named_with_what_to_check() -> None:
    """kube-apiserver 1.36 answers a call on a resource it does not serve with a 404 that names
    no object: "404 page not found" as plain text (a CRD not installed, an unknown group) or a
    Status "the server could not find the requested resource" (a version not enabled, a
    subresource the CRD does not declare). The typed client said only that; the informers'
    transport (and client.list) say which resource and what to check: so do all its calls."""
    plain = _Resp(404, b"404 page not found\n")
    nothing = _status(404, "NotFound", "the server could not find the requested resource")
    w = Widget(metadata=ObjectMeta(name="w", namespace="n"), status=None)
    calls: list[tuple[_Resp, Callable[[Client], object]]] = [
        (plain, lambda c: c.get(Widget, "w", namespace="n")),
        (plain, lambda c: c.delete(Widget, "w", namespace="n")),
        (
            plain,
            lambda c: c.apply(
                WidgetApply(metadata={"name": "w", "namespace": "n"}), field_manager="m"
            ),
        ),
        (_Resp(404, nothing), lambda c: c.create(w)),
    ]
    for answer, call in calls:
        with pytest.raises(NotFound) as err:
            call(Client(_ApiClient([answer])))
        message = str(err.value)
        assert "the server does not serve widgets.demo.kubeinformers.io in " in message, message
        assert "demo.kubeinformers.io/v1: check the API group and version" in message, message
        assert "CustomResourceDefinition is installed" in message, message
    with pytest.raises(NotFound) as err:
        Client(_ApiClient([_Resp(404, nothing)])).update_status(w)
    assert "does not serve widgets.demo.kubeinformers.io/status in demo" in str(err.value)
    assert "declares the status subresource" in str(err.value)
    # A missing object's Status names it: the server's message alone says it all.
    missing = _status(404, "NotFound", 'configmaps "c" not found', name="c", kind="configmaps")
    with pytest.raises(NotFound) as err:
        Client(_ApiClient([_Resp(404, missing)])).get(ConfigMap, "c", namespace="n")
    assert str(err.value).endswith(': configmaps "c" not found'), str(err.value)


def test_m4_a_failed_delete_precondition_is_not_told_to_redo_the_change() -> None:
    """kube-apiserver's answer to a delete whose uid precondition no longer holds (the object
    was deleted and created again). "read it again and redo the change (retry_on_conflict
    does this)" would delete the new object, which the precondition is there to prevent."""
    answer = _Resp(
        409,
        _status(
            409,
            "Conflict",
            'Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition (u1) '
            "does not match the UID in record (u2). The object might have been deleted and "
            "then recreated",
            name="c",
            kind="ConfigMap",
        ),
    )
    with pytest.raises(Conflict) as err:
        Client(_ApiClient([answer])).delete(ConfigMap, "c", namespace="n", uid="u1")
    message = str(err.value)
    assert "retry_on_conflict" not in message and "redo the change" not in message, message
    assert "no longer the one the delete's preconditions name" in message, message


def test_m4_a_strategic_merge_patch_of_a_custom_resource_is_told_which_patch_to_use() -> None:
    """kube-apiserver 1.36 refuses a strategic merge patch of a custom resource with 415 and
    only lists the media types it accepts; the error says what to pass instead."""
    body = _status(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
    with pytest.raises(UnsupportedMediaType) as err:
        Client(_ApiClient([_Resp(415, body)])).patch(
            Widget, "w", {"spec": {"size": "small"}}, namespace="n", patch_type="strategic"
        )
    assert 'patch a custom resource with patch_type="merge" or "json"' in str(err.value)


def test_m4_a_create_in_a_terminating_namespace_is_not_told_to_check_rbac() -> None:
    """kube-apiserver 1.36's NamespaceLifecycle answer to a create (or an apply that creates)
    in a namespace being deleted: 403 Forbidden with a cause NamespaceTerminating (client-go's
    `HasStatusCause(err, NamespaceTerminatingCause)`). No RBAC rule is missing: "check the
    RBAC rules of the credentials" sent the user the wrong way."""
    body = _status(
        403,
        "Forbidden",
        'configmaps "x" is forbidden: unable to create new content in namespace doomed '
        "because it is being terminated",
        name="x",
        kind="configmaps",
        causes=[
            {
                "reason": "NamespaceTerminating",
                "message": "namespace doomed is being terminated",
                "field": "metadata.namespace",
            }
        ],
    )
    cm = ConfigMap(metadata=ObjectMeta(name="x", namespace="doomed"))
    with pytest.raises(Forbidden) as err:
        Client(_ApiClient([_Resp(403, body)])).create(cm)
    assert "RBAC" not in str(err.value), str(err.value)
    assert "the namespace is being deleted" in str(err.value)
    refused = _status(403, "Forbidden", 'configmaps "x" is forbidden: User "u" cannot create')
    with pytest.raises(Forbidden) as err:  # a plain 403 is still about RBAC
        Client(_ApiClient([_Resp(403, refused)])).create(cm)
    assert "check the RBAC rules" in str(err.value)


def test_m11_the_servers_warnings_are_logged_with_the_request(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kube-apiserver 1.36 accepts a create with a field it does not know, drops the field and
    says so only in a `Warning: 299 - "unknown field ..."` header; client-go's rest client logs
    such warnings (rest.WarningLogger), the typed client dropped them silently."""
    created = _Resp(
        201,
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}',
        {"Warning": '299 - "unknown field \\"dta\\"", 299 - "second", 199 - "not 299"'},
    )
    cm = ConfigMap.model_validate({"metadata": {"name": "c", "namespace": "n"}, "dta": {}})
    monkeypatch.setattr(server_warnings, "_said", OrderedDict())  # nothing said before here
    with caplog.at_level(logging.WARNING, logger="kubeinformers.client"):
        Client(_ApiClient([created])).create(cm)
    said = [r.getMessage() for r in caplog.records if r.name == "kubeinformers.client"]
    assert said == [
        'create configmaps "c" in namespace "n" at https://k8s.test: the server warns: '
        'unknown field "dta"',
        'create configmaps "c" in namespace "n" at https://k8s.test: the server warns: second',
    ], said


def test_m11_a_warning_said_before_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    """A controller writes again and again: a deprecated API's warning on every write would be
    a flood. Each text is said once at WARNING, its repeats at DEBUG."""
    text = f"apps/v1beta9 Widget is deprecated ({uuid.uuid4().hex})"  # never said before
    answers = [
        _Resp(
            201,
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}',
            {"Warning": f'299 - "{text}"'},
        )
        for _ in range(3)
    ]
    client = Client(_ApiClient(answers))
    cm = ConfigMap.model_validate({"metadata": {"name": "c", "namespace": "n"}})
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.client"):
        for _ in range(3):
            client.create(cm)
    said = [r for r in caplog.records if r.name == "kubeinformers.client" and text in r.message]
    assert [r.levelno for r in said] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert said[1].getMessage().endswith("(said before)")


def test_m7_a_patch_body_of_the_wrong_shape_for_its_type_is_refused_before_sending() -> None:
    """A dict sent as a JSON patch, or a list as a merge patch: kube-apiserver 1.36 answers 400
    "error decoding patch: json: cannot unmarshal object into Go value of type
    []handlers.jsonPatchOp". Refused before any request, as a model sent as a JSON patch is,
    saying which shape each patch type takes."""
    api = _ApiClient([])  # no answer: a request sent would fail the test with IndexError
    client = Client(api)
    with pytest.raises(TypeError, match=r'a JSON patch \(patch_type="json"\) is a list'):
        client.patch(ConfigMap, "c", {"op": "add"}, namespace="n", patch_type="json")
    for patch_type in ("merge", "strategic"):
        with pytest.raises(TypeError, match=f"a {patch_type} patch is a dict"):
            client.patch(ConfigMap, "c", [{"data": {}}], namespace="n", patch_type=patch_type)
    assert api.rest_client.pool_manager.sent == []
    ops = ({"op": "add", "path": "/data/a", "value": "1"},)  # a tuple of operations is a list
    call = _Calls().patch(
        ConfigMap,
        "c",
        ops,
        "n",
        patch_type="json",
        subresource=None,
        field_manager=None,
        dry_run=False,
    )
    assert json.loads(call.request.body or b"") == list(ops)


def test_m4_an_apply_of_a_field_the_schema_lacks_is_not_a_server_failure() -> None:
    """kube-apiserver 1.36 answers an apply with a field its schema does not declare (or a
    value of the wrong type) with 500 InternalError "failed to create typed patch object":
    the server did not fail, the request is wrong, and sending it again fails again."""
    body = _status(
        500,
        "InternalError",
        "failed to create typed patch object (n/c; /v1, Kind=ConfigMap): .bogusField: field "
        "not declared in schema",
    )
    cm = ConfigMap.model_validate({"metadata": {"name": "c", "namespace": "n"}, "bogusField": 1})
    with pytest.raises(ApiStatusError) as err:
        Client(_ApiClient([_Resp(500, body)])).apply(cm, field_manager="me")
    assert ".bogusField: field not declared in schema; the server's schema does not" in str(
        err.value
    )


def test_m6_a_client_of_something_else_than_an_api_client_is_refused_by_name() -> None:
    """`Client("https://...")` (a URL where the kubernetes ApiClient belongs) raised
    AttributeError: 'str' object has no attribute 'configuration'."""
    for face in (Client, AsyncClient):
        with pytest.raises(TypeError, match=r"needs a kubernetes\.client\.ApiClient .* not str"):
            face("https://127.0.0.1:6443")  # type: ignore[arg-type]


def test_m4_a_token_with_a_line_break_is_never_shown_in_the_error() -> None:
    """http.client refuses a header value with a line break with ValueError("Invalid header
    value b'Bearer <token>\\n'"): the typed client passed it on, the credential in its message
    (found with a kubeconfig token ending in a newline against kube-apiserver 1.36). The
    informers' transport, which `client.list` uses, worded it without the value but kept the
    original as the new error's __context__."""
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = "http://127.0.0.1:1"  # never reached: the header is refused before sending
    cfg.api_key = {"authorization": "Bearer s3cr3t-token\n"}
    with k8s.ApiClient(cfg) as api:
        for verb, call in (
            ("get", lambda: Client(api).get(ConfigMap, "c", namespace="n")),
            ("list", lambda: Client(api).list(ConfigMap, namespace="n")),  # the transport's
        ):
            with pytest.raises(ValueError) as err:
                call()
            # Nor in what a traceback or an error reporter reads: the chained exceptions.
            assert err.value.__cause__ is None and err.value.__context__ is None
            assert "s3cr3t" not in f"{err.value!s} {err.value!r}", err.value
            assert str(err.value).startswith(
                f'cannot {verb} configmaps "c" in namespace "n"'
                if verb == "get"
                else "cannot list configmaps"
            )
            assert "a request header is invalid" in str(err.value)


class _SilentPool:
    """A server that accepted the request and never answered: urllib3's read timeout."""

    def request(self, method: str, url: str, **kw: Any) -> _Resp:
        import urllib3

        message = "Read timed out. (read timeout=60)"
        raise urllib3.exceptions.ReadTimeoutError(None, url, message)  # type: ignore[arg-type]


def test_m4_a_server_that_does_not_answer_is_not_called_unreachable() -> None:
    """Against a socket that accepts and never answers, a call raised after 60 s "cannot get
    ...: http://127.0.0.1:41853 unreachable: ... Read timed out." (measured), though the
    server was reached; the informers' transport words it as below. A write may have been
    applied: the server had it."""
    api = _ApiClient([])
    api.rest_client.pool_manager = _SilentPool()
    client = Client(api)
    with pytest.raises(ConnectionError) as err:
        client.get(ConfigMap, "c", namespace="n")
    assert "unreachable" not in str(err.value)
    assert "accepted the request but did not answer within 60 s" in str(err.value)
    assert "may have been applied" not in str(err.value)
    with pytest.raises(ConnectionError) as err:
        client.create(ConfigMap(metadata=ObjectMeta(name="c", namespace="n")))
    assert str(err.value).endswith("it may have been applied"), str(err.value)


def test_m6_a_kinds_class_given_where_its_object_belongs_is_refused_by_name() -> None:
    """`client.create(ConfigMap)` (mypy now rejects it) raised KindModelError "pydantic's
    ModelMetaclass is not the model of a kind ... pass a generated top-level kind such as
    Pod": the user had passed one."""
    client = Client(_ApiClient([]))  # no answer: a request sent would fail with IndexError
    with pytest.raises(TypeError, match=r"create takes an object, ConfigMap\(metadata="):
        client.create(ConfigMap)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="apply takes an object"):
        client.apply(ConfigMap, field_manager="me")  # type: ignore[call-overload]


def test_m13_local_api_server_answers_reviews_by_its_own_rules() -> None:
    """M13 on the stand-in server: a review comes back answered by the rules the server
    enforces (the admin may do what `forbid` leaves; a user with a token, nothing), a
    TokenReview knows the server's tokens, a Binding sets the pod's node once."""
    from kubernetes.client import ApiClient

    from kubeinformers.generated.authentication.v1 import TokenReview, TokenReviewSpec
    from kubeinformers.generated.authorization.v1 import (
        ResourceAttributes,
        SelfSubjectAccessReview,
        SelfSubjectAccessReviewSpec,
    )
    from kubeinformers.generated.core.v1 import Binding, Container, ObjectReference, Pod, PodSpec
    from kubeinformers.testing.local_api_server import LocalApiServer

    def may(client: Client, verb: str) -> bool | None:
        attributes = ResourceAttributes(verb=verb, resource="secrets", namespace="default")
        spec = SelfSubjectAccessReviewSpec(resource_attributes=attributes)
        answer = client.create(SelfSubjectAccessReview(spec=spec)).status
        assert answer is not None
        return answer.allowed

    with LocalApiServer(token="admin-token", users={"u-token": "alice"}) as server:
        server.forbid("secrets", ["delete"])
        admin = Client(server.api_client())
        assert may(admin, "get") is True and may(admin, "delete") is False
        config = server.configuration()
        config.api_key = {"authorization": "u-token"}
        alice = Client(ApiClient(config))
        assert may(alice, "get") is False
        known = admin.create(TokenReview(spec=TokenReviewSpec(token="u-token"))).status
        assert known is not None and known.authenticated and known.user is not None
        assert known.user.username == "alice"
        unknown = admin.create(TokenReview(spec=TokenReviewSpec(token="nope"))).status
        assert unknown is not None and not unknown.authenticated and unknown.error

        admin.create(
            Pod(
                metadata=ObjectMeta(name="p", namespace="default"),
                spec=PodSpec(containers=[Container(name="c", image="i")]),
            )
        )
        binding = Binding(
            metadata=ObjectMeta(name="p", namespace="default"),
            target=ObjectReference(kind="Node", name="n1"),
        )
        assert admin.create(binding) == binding
        pod = admin.get(Pod, "p", namespace="default")
        assert pod.spec is not None and pod.spec.node_name == "n1"
        with pytest.raises(Conflict, match='already assigned to node "n1"'):
            admin.create(binding)


def test_m14_local_api_server_evicts_pods_and_issues_tokens_it_then_takes() -> None:
    """M14 on the stand-in server: an Eviction deletes a pending pod; a TokenRequest returns a
    token the server then takes as the service account (a user without permissions)."""
    from kubernetes.client import ApiClient

    from kubeinformers.generated.authentication.v1 import (
        SelfSubjectReview,
        TokenRequest,
        TokenRequestSpec,
    )
    from kubeinformers.generated.core.v1 import Container, Pod, PodSpec, ServiceAccount
    from kubeinformers.generated.policy.v1 import Eviction
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer(token="admin-token") as server:
        admin = Client(server.api_client())
        admin.create(
            Pod(
                metadata=ObjectMeta(name="p", namespace="default"),
                spec=PodSpec(containers=[Container(name="c", image="i")]),
            )
        )
        # M19: a dry run answers as the eviction would, and evicts nothing.
        admin.create(Eviction(metadata=ObjectMeta(name="p", namespace="default")), dry_run=True)
        kept = admin.get(Pod, "p", namespace="default")
        assert kept.metadata is not None and kept.metadata.deletion_timestamp is None
        assert admin.create(Eviction(metadata=ObjectMeta(name="p", namespace="default")))
        with pytest.raises(NotFound):
            admin.get(Pod, "p", namespace="default")
        admin.create(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="default")))
        issued = admin.create(
            TokenRequest(
                metadata=ObjectMeta(name="robot", namespace="default"),
                spec=TokenRequestSpec(audiences=[]),
            )
        )
        assert issued.status is not None and issued.status.token
        config = server.configuration()
        config.api_key = {"authorization": issued.status.token}
        me = Client(ApiClient(config)).create(SelfSubjectReview())
        assert me.status is not None and me.status.user_info is not None
        assert me.status.user_info.username == "system:serviceaccount:default:robot"


def test_m19_the_factory_client_waits_for_no_cache_after_a_dry_run() -> None:
    """A dry run stores nothing, so no watch event comes: the read-your-writes client returns
    its answer at once instead of waiting for the cache (which would time out)."""
    from kubeinformers.generated.informers import SharedInformerFactory
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer() as server, SharedInformerFactory(server.api_client()) as factory:
        config_maps = factory.core().v1().config_maps()
        config_maps.informer()
        factory.start()
        factory.wait_for_cache_sync_or_raise(timeout=30)
        client = factory.client(read_your_writes_timeout=1.0)
        cm = ConfigMap(metadata=ObjectMeta(name="dry", namespace="default"), data={"a": "1"})
        would = client.create(cm, dry_run=True)  # no ReadYourWritesTimeout
        assert would.data == {"a": "1"}
        assert config_maps.lister().config_maps("default").list() == []
        created = client.create(cm)  # a real write: the cache has it when create returns
        assert created.metadata is not None
        assert config_maps.lister().config_maps("default").get("dry").data == {"a": "1"}
