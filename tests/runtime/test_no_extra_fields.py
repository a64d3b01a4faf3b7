"""K25: models without unknown fields share one empty mapping of them, and behave exactly as
models with their own."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from pydantic import BaseModel

from bench.pods import realistic_pod
from kubeinformers.generated.core.v1 import Pod
from kubeinformers.runtime.api.model import NO_EXTRA_FIELDS, KubeModel
from kubeinformers.runtime.cache.transforms import strip_managed_fields
from kubeinformers.runtime.codec.lazy import LazyModelBuilder, materialize

_held = BaseModel.__dict__["__pydantic_extra__"].__get__


def _pod(**unknown: object) -> Pod:
    return Pod.model_validate_json(json.dumps(realistic_pod(1, "perf") | unknown))


def test_k25_models_without_unknown_fields_share_one_empty_mapping() -> None:
    pod, lazy = (
        _pod(),
        materialize(LazyModelBuilder(Pod).build(json.dumps(realistic_pod(2)).encode())),
    )
    for model in (pod, pod.spec, pod.status, lazy.spec, lazy.metadata):
        assert _held(model) is NO_EXTRA_FIELDS
        assert model is not None and model.model_extra == {}
    with_unknown = _pod(newField={"a": 1})
    assert with_unknown.model_extra == {"newField": {"a": 1}}
    assert _held(with_unknown.spec) is NO_EXTRA_FIELDS  # its parts still share


def test_k25_the_shared_mapping_changes_nothing_a_user_reads() -> None:
    pod = _pod()
    own = _pod()
    object.__setattr__(own.spec, "__pydantic_extra__", {})  # as pydantic alone holds it
    assert pod == own and pod.spec == own.spec
    assert pod.model_dump_json() == own.model_dump_json()
    assert repr(pod.spec) == repr(own.spec)
    for twin in (copy.copy(pod), copy.deepcopy(pod), pickle.loads(pickle.dumps(pod))):
        assert twin == pod and _held(twin.spec) is NO_EXTRA_FIELDS


def test_k25_an_unknown_attribute_or_update_goes_to_that_model_alone() -> None:
    one, two = _pod(), _pod()
    assert one.spec is not None and two.spec is not None
    one.spec.addedLater = 1
    assert one.spec.model_extra == {"addedLater": 1} and two.spec.model_extra == {}
    copied = two.model_copy(update={"unknownKey": "v"})
    assert copied.model_extra == {"unknownKey": "v"} and two.model_extra == {}
    assert NO_EXTRA_FIELDS == {} and len(NO_EXTRA_FIELDS) == 0


def test_k25_adding_to_the_shared_mapping_in_place_is_refused_naming_the_remedy() -> None:
    pod = _pod()
    assert pod.spec is not None and pod.spec.model_extra is not None
    with pytest.raises(TypeError, match="set the attribute instead"):
        pod.spec.model_extra["x"] = 1
    with pytest.raises(TypeError):
        pod.spec.model_extra.update(x=1)
    assert NO_EXTRA_FIELDS == {} and _pod().spec.model_extra == {}  # type: ignore[union-attr]


def test_k25_strip_managed_fields_of_an_undeclared_metadata_without_unknown_fields() -> None:
    class Meta(KubeModel):
        name: str | None = None

    class Thing(KubeModel):
        metadata: Meta | None = None

    thing = Thing.model_validate({"metadata": {"name": "x"}})
    assert thing.metadata is not None and _held(thing.metadata) is NO_EXTRA_FIELDS
    assert strip_managed_fields(thing) is thing and thing.metadata.name == "x"
