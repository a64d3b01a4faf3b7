"""The compact store (K6): lazy objects keep their raw bytes deflated with a dictionary trained
once per informer, and read exactly as they do without it (K5 for protobuf)."""

from __future__ import annotations

import copy
import pickle
import zlib

import pytest

from kubeinformers.runtime.api import keys
from kubeinformers.runtime.codec.compact import Compactor, new_compactor
from kubeinformers.runtime.codec.drift import InvalidFieldError, InvalidObjectError
from kubeinformers.runtime.codec.lazy import (
    _RAW_SLOT,
    LazyModelBuilder,
    is_lazy,
    materialize,
)
from kubeinformers.runtime.codec.lazy_decoder import LazyDecoder
from kubeinformers.runtime.codec.protobuf.decoder import ProtobufLazyDecoder
from kubeinformers.runtime.codec.protobuf.transcode import to_json_object
from tests.runtime.test_lazy import Pod, list_body, pod_json
from tests.runtime.test_protobuf_codec import WIDGET, StrictWidget, Widget, _widget
from tests.support.protobuf import MESSAGES, ld, object_meta, unknown, vint, watch_frame
from tests.support.protobuf import list_body as protobuf_list_body
from tests.support.threads import read_concurrently

TRAIN = Compactor.TRAIN_OBJECTS


def _kept(obj: object) -> bytes:
    """The bytes a lazy object keeps in its raw slot."""
    raw: bytes = object.__getattribute__(obj, _RAW_SLOT)
    return raw


def _pods(n: int, start: int = 0) -> list[bytes]:
    return [
        pod_json(f"web-{i}", spec={"containers": [{"name": f"c{i}"}]})
        for i in range(start, start + n)
    ]


def test_k6_a_compacted_object_restores_exactly_the_bytes_it_was_given() -> None:
    compactor = Compactor()
    raws = _pods(TRAIN + 5)
    compactor.train(raws)
    for raw in raws:
        packed = compactor.pack(raw)
        assert packed is not None and len(packed) < len(raw) // 2
        assert compactor.unpack(packed) == raw
    with pytest.raises(zlib.error):
        compactor.unpack(compactor.pack(raws[0])[:-2])  # type: ignore[index]


def test_k6_listed_json_objects_are_compressed_and_read_as_without_the_store() -> None:
    raws = _pods(TRAIN + 4)
    page = LazyDecoder(Pod, compactor=Compactor()).decode_list(list_body(*raws))
    for raw, pod in zip(raws, page.items, strict=True):
        assert is_lazy(pod) and isinstance(pod, Pod)
        assert _kept(pod) != raw and len(_kept(pod)) < len(raw)  # every listed object
        assert keys.meta_namespace_key(pod) == f"default/{pod.metadata.name}"  # type: ignore[union-attr]
        assert is_lazy(pod)  # identity read without inflating
        assert pod == Pod.model_validate_json(raw)
        assert not is_lazy(pod)


def test_k6_the_lazy_metadata_builds_alone_from_the_compressed_bytes() -> None:
    page = LazyDecoder(Pod, compactor=Compactor()).decode_list(list_body(*_pods(TRAIN)))
    pod = page.items[3]
    assert pod.metadata is not None and pod.metadata.annotations == {"a": "b"}
    assert pod.metadata.generation == 3
    assert is_lazy(pod)


def test_k6_the_dictionary_is_trained_once_from_the_first_page() -> None:
    compactor = Compactor()
    decoder = LazyDecoder(Pod, compactor=compactor)
    decoder.decode_list(list_body(*_pods(TRAIN + 2)))
    dictionary = compactor.dictionary
    assert compactor.trained_times == 1 and dictionary is not None
    assert dictionary == b"".join(_pods(TRAIN))[-32768:]  # the page's first items
    later = decoder.decode_list(list_body(*_pods(TRAIN + 2, start=100)))
    event = decoder.decode_event(b'{"type":"ADDED","object":' + _pods(1, 500)[0] + b"}\n")
    assert compactor.trained_times == 1 and compactor.dictionary is dictionary
    assert later.items[-1] == Pod.model_validate_json(_pods(1, start=TRAIN + 101)[0])
    assert event.object == Pod.model_validate_json(_pods(1, 500)[0])


def test_k6_watch_events_decoded_before_the_dictionary_keep_their_bytes() -> None:
    """A watch-list sends objects one by one: the first TRAIN_OBJECTS train the dictionary
    and stay as sent; every later one is compressed. All read the same."""
    compactor = Compactor()
    decoder = LazyDecoder(Pod, compactor=compactor)
    raws = _pods(TRAIN + 3)
    objects = [decoder.decode_event(b'{"type":"ADDED","object":' + r + b"}\n").object for r in raws]
    assert [_kept(o) == r for o, r in zip(objects, raws, strict=True)] == [True] * TRAIN + [
        False
    ] * 3
    assert compactor.trained_times == 1
    assert [materialize(o) for o in objects] == [Pod.model_validate_json(r) for r in raws]


def test_k6_k5_protobuf_list_and_watch_objects_share_one_dictionary() -> None:
    compactor = Compactor()
    decoder = ProtobufLazyDecoder(Widget, message=WIDGET, messages=MESSAGES, compactor=compactor)
    items = [_widget(f"w{i}", str(i), app="web") for i in range(TRAIN + 2)]
    page = decoder.decode_list(protobuf_list_body("example.test/v1", "WidgetList", items))
    frame = watch_frame("MODIFIED", unknown("example.test/v1", "Widget", _widget("late", "99")))
    event = decoder.decode_event(frame)
    assert compactor.trained_times == 1
    for item, widget in zip(items, page.items, strict=True):
        assert _kept(widget) != item and is_lazy(widget)
        assert widget.metadata is not None and widget.metadata.labels == {"app": "web"}
        assert widget == Widget.model_validate(to_json_object(MESSAGES, WIDGET, item))
    assert _kept(event.object) != _widget("late", "99")
    assert event.object.kind == "Widget" and event.object.metadata.name == "late"  # type: ignore[union-attr]


def test_k6_k11_an_invalid_compact_object_field_raises_naming_it_and_is_reported_once() -> None:
    reported: list[InvalidObjectError] = []
    bad = [
        ld(1, object_meta(name=f"bad{i}", namespace="ns")) + ld(2, ld(1, "t") + vint(5, 1))
        for i in range(TRAIN + 1)
    ]
    decoder = ProtobufLazyDecoder(
        StrictWidget,
        message=WIDGET,
        messages=MESSAGES,
        on_invalid=reported.append,
        compactor=Compactor(),
    )
    obj = decoder.decode_list(protobuf_list_body("v1", "WidgetList", bad)).items[-1]
    assert _kept(obj) != bad[-1]
    assert obj.spec is not None and obj.spec.title == "t"  # K11: the rest reads
    with pytest.raises(InvalidFieldError, match=rf"StrictWidget 'ns/bad{TRAIN}'.*spec\.count"):
        _ = obj.spec.count
    with pytest.raises(InvalidFieldError):
        _ = obj.spec.count
    assert [r.key for r in reported] == [f"ns/bad{TRAIN}"]
    assert obj.metadata is not None and obj.metadata.name == f"bad{TRAIN}"


def test_k6_k11_an_invalid_compact_json_field_raises_naming_it_and_is_reported_once() -> None:
    reported: list[InvalidObjectError] = []
    builder = LazyModelBuilder(Pod, on_invalid=reported.append, compactor=Compactor())
    builder.train(_pods(TRAIN))
    pod = builder.build(pod_json(spec={"containers": [{"name": "app", "ports": ["eighty"]}]}))
    assert keys.meta_namespace_key(pod) == "default/web-1"
    materialize(pod)  # K11: built, its bad field apart
    assert pod.spec is not None
    with pytest.raises(InvalidFieldError, match=r"'default/web-1'.*spec\.containers\[0\]\.ports"):
        _ = pod.spec.containers[0].ports
    assert len(reported) == 1


def test_k6_copy_pickle_and_equality_build_the_object_first() -> None:
    raws = _pods(TRAIN + 3)
    expected = Pod.model_validate_json(raws[-1])

    def compact_last() -> Pod:
        return LazyDecoder(Pod, compactor=Compactor()).decode_list(list_body(*raws)).items[-1]

    assert copy.copy(compact_last()) == expected
    assert copy.deepcopy(compact_last()) == expected
    restored = pickle.loads(pickle.dumps(compact_last()))
    assert type(restored) is Pod and restored == expected
    assert compact_last() == compact_last()


def test_k6_concurrent_first_reads_inflate_and_build_once() -> None:
    pod = (
        LazyDecoder(Pod, compactor=Compactor()).decode_list(list_body(*_pods(TRAIN + 1))).items[-1]
    )
    seen = read_concurrently(lambda: pod.spec)
    assert len(seen) == 4 and all(s is seen[0] for s in seen)


def test_k6_the_option_names_its_values() -> None:
    assert new_compactor("none") is None
    assert isinstance(new_compactor("zlib"), Compactor)
    with pytest.raises(
        ValueError, match=r'cache_compression must be "none" or "zlib", not \'zstd\''
    ):
        new_compactor("zstd")  # type: ignore[arg-type]
