"""K15: decoded models share their field sets, and behave exactly as models with their own."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from kubeinformers.generated.core.v1 import PodCondition
from kubeinformers.runtime.api.model import SharedFieldsSet
from kubeinformers.runtime.cache.transforms import strip_managed_fields
from kubeinformers.runtime.codec.lazy import LazyModelBuilder, materialize
from kubeinformers.runtime.codec.wire import JsonDecoder
from tests.runtime.test_lazy import Pod, list_body, pod_json


def _decoded(name: str = "web-1") -> Pod:
    return JsonDecoder(Pod).decode_list(list_body(pod_json(name))).items[0]


def test_k15_decoded_models_share_one_field_set_per_shape() -> None:
    one, two = _decoded("a"), _decoded("b")
    assert type(one.model_fields_set) is SharedFieldsSet
    assert one.model_fields_set is two.model_fields_set
    assert one.spec is not None and two.spec is not None
    assert one.spec.containers[0].model_fields_set is two.spec.containers[0].model_fields_set
    lazy = materialize(LazyModelBuilder(Pod).build(pod_json("c")))
    assert lazy.model_fields_set is one.model_fields_set  # lazy and eager alike


def test_k15_a_shared_set_changes_nothing_a_user_reads() -> None:
    raw = pod_json()
    shared, own = _decoded(), Pod.model_validate_json(raw)
    assert shared == own and shared.model_fields_set == own.model_fields_set
    assert shared.model_dump(exclude_unset=True) == own.model_dump(exclude_unset=True)
    assert shared.model_dump_json(exclude_unset=True) == own.model_dump_json(exclude_unset=True)
    assert json.loads(shared.model_dump_json(exclude_unset=True)) == json.loads(raw)
    for twin in (copy.copy(shared), copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert twin == own and twin.model_dump(exclude_unset=True) == own.model_dump(
            exclude_unset=True
        )


def test_k15_changing_one_model_never_changes_another() -> None:
    one, two = _decoded("a"), _decoded("b")
    assert one.spec is not None and two.spec is not None
    one.spec.node_name = "n1"  # an assignment gives `one.spec` its own set first
    assert "node_name" in one.spec.model_fields_set
    assert "node_name" not in two.spec.model_fields_set
    assert two.spec.model_dump(exclude_unset=True) == _decoded("b").spec.model_dump(  # type: ignore[union-attr]
        exclude_unset=True
    )
    copied = two.model_copy(update={"kind": "Changed"})
    assert "kind" in copied.model_fields_set and copied.kind == "Changed"
    del two.spec.node_name  # a deletion gives `two.spec` its own set, too
    assert "node_name" not in two.spec.__dict__
    assert type(_decoded("c").spec.model_fields_set) is SharedFieldsSet  # type: ignore[union-attr]


def test_k15_changing_a_shared_set_in_place_is_refused_naming_the_remedy() -> None:
    pod = _decoded()
    with pytest.raises(TypeError, match="shared with other models"):
        pod.model_fields_set.add("status")
    assert "status" not in _decoded().model_fields_set


def test_k15_strip_managed_fields_works_on_shared_sets() -> None:
    pod = _decoded()
    assert pod.metadata is not None
    strip_managed_fields(pod)
    assert "managedFields" not in pod.model_dump(exclude_unset=True)["metadata"]
    assert type(_decoded().metadata.model_fields_set) is SharedFieldsSet  # type: ignore[union-attr]


def test_k15_every_way_pydantic_makes_a_model_shares_its_set() -> None:
    raw = pod_json("p")
    made = [
        Pod.model_validate_json(raw),
        Pod.model_validate(json.loads(raw)),
        Pod.model_construct(kind="Pod"),
        copy.copy(_decoded()),
        pickle.loads(pickle.dumps(_decoded())),
    ]
    for pod in made:
        assert type(pod.model_fields_set) is SharedFieldsSet
    assert made[0].model_fields_set is made[1].model_fields_set is made[3].model_fields_set
    assert made[0].spec is not None and made[1].spec is not None
    assert (
        made[0].spec.containers[0].model_fields_set is made[1].spec.containers[0].model_fields_set
    )


def test_k15_model_copy_with_update_is_pydantics_own() -> None:
    pod = _decoded()
    copied = pod.model_copy(update={"kind": "Changed", "extraThing": 1})
    assert copied.kind == "Changed" and copied.model_extra == {**pod.model_extra, "extraThing": 1}  # type: ignore[dict-item]
    assert {"kind", "extraThing"} <= copied.model_fields_set
    assert type(copied.model_fields_set) is set  # its own, changed
    assert pod.kind == "Pod" and "extraThing" not in pod.model_fields_set
    assert pod.model_extra is not None and "extraThing" not in pod.model_extra
    deep = pod.model_copy(update={"kind": "Deep"}, deep=True)
    assert deep.kind == "Deep" and deep.spec == pod.spec and deep.spec is not pod.spec


def test_k15_models_built_in_many_threads_at_once_share_exactly_their_own_sets() -> None:
    """Threads validating at once (K10: lazy builds in several reader threads) each get the
    shared set equal to the fields they were given: one object per shape, none lost."""
    import threading

    shapes = [{"kind": "Pod"}, {"kind": "Pod", "apiVersion": "v1"}, {"apiVersion": "v1"}]
    start = threading.Barrier(6, timeout=10)
    built: list[list[Pod]] = [[] for _ in range(6)]

    def build(out: list[Pod]) -> None:
        start.wait()
        for i in range(300):
            out.append(Pod.model_validate(shapes[i % 3]))

    threads = [threading.Thread(target=build, args=(out,)) for out in built]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads)
    by_shape: dict[frozenset[str], set[int]] = {}
    for out in built:
        assert len(out) == 300
        for i, pod in enumerate(out):
            given = {"kind": "kind", "apiVersion": "api_version"}
            assert pod.model_fields_set == {given[k] for k in shapes[i % 3]}
            by_shape.setdefault(frozenset(pod.model_fields_set), set()).add(
                id(pod.model_fields_set)
            )
    assert len(by_shape) == 3 and all(len(ids) == 1 for ids in by_shape.values())


def test_k15_models_of_one_class_given_alternating_field_sets_each_get_their_own() -> None:
    # Most models of a class come with the same set, found without a lookup; one given
    # another set between them still gets exactly its own, shared with its shape.
    shapes = [
        {"type": "Ready", "status": "True"},
        {"type": "Ready", "status": "True", "reason": "r"},
    ]
    made = [PodCondition.model_validate(shapes[i % 2]) for i in range(6)]
    for i, condition in enumerate(made):
        assert condition.model_fields_set == set(["type", "status", "reason"][: 2 + i % 2])
        assert type(condition.model_fields_set) is SharedFieldsSet
        assert condition.model_fields_set is made[i % 2].model_fields_set
    assert made[0].model_fields_set is not made[1].model_fields_set
