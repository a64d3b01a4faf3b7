"""K21: models keep their fields in key-sharing dicts, and behave exactly as with their own."""

from __future__ import annotations

import copy
import json
import pickle
import sys
import weakref
from typing import Any

from pydantic import BaseModel

from bench.pods import realistic_pod
from kubeinformers.generated.core.v1 import Container, Pod, PodCondition, PodSpec
from kubeinformers.runtime.codec.lazy import LazyModelBuilder, materialize
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.wire import JsonDecoder
from tests.support.garbage import collected

_get_dict = BaseModel.__dict__["__dict__"].__get__
_set_dict = BaseModel.__dict__["__dict__"].__set__


def _raw(i: int = 1) -> bytes:
    return json.dumps(realistic_pod(i, "perf")).encode()


def _decoded(i: int = 1) -> Pod:
    body = b'{"kind":"PodList","metadata":{},"items":[' + _raw(i) + b"]}"
    return JsonDecoder(Pod).decode_list(body).items[0]


def _compact(model: BaseModel) -> bool:
    """Whether `model`'s instance dict is smaller than the same dict of its own keys."""
    values = _get_dict(model)
    return sys.getsizeof(values) < sys.getsizeof(dict(values))


def _with_its_own_dict(model: Any) -> Any:
    """`model` as pydantic alone would hold it: each instance dict a plain one."""
    own = copy.deepcopy(model)
    stack = [own]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            _set_dict(item, dict(_get_dict(item)))
            stack.extend(_get_dict(item).values())
        elif isinstance(item, list):
            stack.extend(item)
    return own


def test_k21_decoded_models_hold_key_sharing_dicts_of_their_fields() -> None:
    pod = _decoded()
    assert pod.spec is not None and pod.status is not None and pod.status.conditions
    assert pod.spec.containers and pod.metadata is not None
    container, condition = pod.spec.containers[0], pod.status.conditions[0]
    models: list[BaseModel] = [pod.metadata, container, condition, pod.status]
    for model in models:
        assert _compact(model), type(model).__name__
        assert list(_get_dict(model)) == list(type(model).model_fields)  # pydantic's order
    # ~2.5-3x smaller: values only, the names live once per class.
    assert sys.getsizeof(_get_dict(container)) * 2 < sys.getsizeof(dict(_get_dict(container)))
    lazy = materialize(LazyModelBuilder(Pod).build(_raw()))
    assert (
        lazy.spec is not None and lazy.spec.containers and _compact(lazy.spec.containers[0])
    )  # lazy and eager alike


def test_k21_every_way_pydantic_makes_a_model_gives_it_a_key_sharing_dict() -> None:
    raw = _raw()
    source = Container.model_validate_json(json.dumps(realistic_pod(1)["spec"]["containers"][0]))
    made = [
        Container.model_validate(json.loads(raw)["spec"]["containers"][0]),
        source,
        Container.model_construct(**dict(_get_dict(source))),
        copy.copy(source),
        copy.deepcopy(source),
        source.model_copy(update={"image": "other"}),
    ]
    for model in made:
        assert _compact(model)


def test_k21_a_key_sharing_dict_changes_nothing_a_user_reads() -> None:
    shared = _decoded()
    own = _with_its_own_dict(shared)
    assert shared.spec is not None and shared.spec.containers
    assert not _compact(own.spec.containers[0])
    assert shared == own and own == shared
    assert shared.model_dump() == own.model_dump()
    assert shared.model_dump_json() == own.model_dump_json()
    assert shared.model_dump_json(exclude_unset=True) == own.model_dump_json(exclude_unset=True)
    assert repr(shared) == repr(own)
    for twin in (copy.copy(shared), copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert twin == own and twin.model_dump_json() == own.model_dump_json()
    assert vars(shared.spec.containers[0]) == vars(own.spec.containers[0])


def test_k21_changing_one_model_never_changes_another() -> None:
    one, two, three = _decoded(1), _decoded(1), _decoded(1)
    assert one.spec is not None and two.spec is not None and three.spec is not None
    assert one.spec.containers and two.spec.containers and three.spec.containers
    a, b = one.spec.containers[0], two.spec.containers[0]
    a.image = "changed"
    del a.working_dir
    a.__dict__["not_a_field"] = 1  # the dict stops sharing its keys, and stays right
    assert a.image == "changed" and b.image != "changed"
    assert "working_dir" not in a.__dict__ and "working_dir" in b.__dict__
    assert "not_a_field" not in b.__dict__ and _compact(b)
    assert b == three.spec.containers[0]


def test_k21_a_model_whose_dict_cannot_be_compacted_keeps_pydantics() -> None:
    spec = _decoded().spec  # a pod's spec: 42 fields, past CPython's 30 shared keys
    assert spec is not None and not _compact(spec)
    assert spec == PodSpec.model_validate_json(spec.model_dump_json())
    # A construction without a required field gets no value for it (no None filled in).
    partial = PodCondition.model_construct(type="Ready")  # type: ignore[call-arg]
    assert "status" not in partial.__dict__ and partial.type == "Ready"
    revived = pickle.loads(pickle.dumps(PodCondition(type="Ready", status="True")))
    assert revived == PodCondition(type="Ready", status="True")


class _Informer:
    """Stands for what a decoder's on_invalid hook names: an informer's lister-watcher, which
    holds its reflector, its store and the reflector's last error."""

    def report(self, error: BaseException) -> None:
        raise AssertionError(f"nothing here is invalid: {error}")


def test_k21_k9_a_dropped_decoder_and_its_informer_are_collected_after_full_reads() -> None:
    # A decoder's lazy classes are its own (they hold its on_invalid hook, K11); a whole
    # read publishes the built state through the field-set setter with the lazy class still
    # the object's. Keeping those classes in K21's table of key-sharing dicts kept every
    # dropped decoder's informer alive for good: in the soak, a stopped informer's reflector
    # whose last error pinned a socket of a failed TLS handshake.
    informer = _Informer()
    decoder = LazyDecoder(Pod, on_invalid=informer.report)
    page = decoder.decode_list(b'{"kind":"PodList","metadata":{},"items":[' + _raw(1) + b"]}")
    pod = page.items[0]
    assert pod.spec is not None and pod.spec.containers  # nested lazy objects, their classes
    assert materialize(pod).status is not None  # the whole build: the class switched
    assert type(pod) is Pod and _compact(pod.spec.containers[0])
    gone = weakref.ref(informer)
    del informer, decoder, page, pod
    assert collected(lambda: gone() is None)


def test_k21_a_lazy_item_read_in_part_holds_what_it_built_in_a_key_sharing_dict() -> None:
    """The fields a lazy item builds alone (K13, K19: a reconcile's `spec` and `status`)
    are kept in a dict sharing its keys among the items of its model, not one of its own."""
    decoder = LazyDecoder(Pod, on_invalid=lambda err: None)
    body = b'{"kind":"PodList","metadata":{},"items":[' + _raw(1) + b"," + _raw(2) + b"]}"
    for i, pod in enumerate(decoder.decode_list(body).items, start=1):
        assert pod.spec is not None and pod.status is not None
        assert pod.status.phase == "Running" and pod.spec.containers
        state = _get_dict(pod)
        assert set(state) >= {"spec", "status"}
        assert _compact(pod)
        assert materialize(pod) == _decoded(i)  # the whole read builds the model as before
