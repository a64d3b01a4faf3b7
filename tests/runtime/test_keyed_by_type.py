"""Keyed by type (issue 17 item 1): a generated model knows its lister and resource, so
`factory.informer(Pod)` is the accessor chain's informer (H1, H2: one per resource) and
`factory.lister(Pod)` is a PodLister over it; CRD models alike."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient

from examples.informers import CustomInformers
from examples.informers.demo.v1 import Widget, WidgetLister
from kubeinformers.generated import SharedInformerFactory
from kubeinformers.generated.core.v1 import Pod, PodLister, PodSpec
from kubeinformers.generator.kind_listers import attach_listers
from kubeinformers.runtime.api.kinds import KindModelError, resource_of


def test_informer_by_model_is_the_accessor_chains_informer() -> None:
    factory = SharedInformerFactory(ApiClient())
    informer = factory.informer(Pod)
    assert informer is factory.core().v1().pods().informer()
    assert resource_of(Pod).gvr.resource == "pods"
    lister = factory.lister(Pod)
    assert type(lister) is PodLister
    assert lister.pods("default").list() == []


def test_crd_models_know_their_lister_too() -> None:
    factory = SharedInformerFactory(ApiClient())
    informer = factory.informer(Widget)
    assert informer is CustomInformers(factory).demo().v1().widgets().informer()
    assert type(factory.lister(Widget)) is WidgetLister


def test_a_model_that_is_not_a_listable_kind_is_refused_clearly() -> None:
    factory = SharedInformerFactory(ApiClient())
    with pytest.raises(KindModelError, match="PodSpec is not the model of a kind"):
        factory.informer(PodSpec)


SOURCE = '''# header

from kubeinformers.runtime.api.model import KubeModel


class Thing(KubeModel):
    """
    A thing.
    """

    name: str


class ThingSpec(KubeModel):
    size: int
'''


def test_generator_attaches_one_lister_line_per_kind_and_leaves_others() -> None:
    code = attach_listers(SOURCE, {"Thing": ("pkg.v1.listers", "ThingLister")})
    namespace: dict[str, object] = {}
    exec(compile(code, "<models>", "exec"), namespace)
    thing = namespace["Thing"]
    assert "__kube_lister__" in vars(thing)
    assert "__kube_lister__" not in vars(namespace["ThingSpec"])
    assert "from pkg.v1.listers import ThingLister" in code  # for mypy only
    assert attach_listers(SOURCE, {"Other": ("m", "OtherLister")}) == SOURCE
