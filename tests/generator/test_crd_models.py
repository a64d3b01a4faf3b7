"""H14: the CRD model writer (`generator.crd_models`) writes the module datamodel-code-generator
writes, byte for byte, or declines and leaves the module to it.

Both writers run here over real CRDs of ../shared/data/crds chosen for what they exercise:
enums (string and integer), int-or-string, date-times, maps of objects, free-form fields,
embedded built-in classes (PodTemplateSpec, LabelSelector, Condition), descriptions with
quotes, backslashes and tabs, long names and long lines in every layout, and the cases the
writer leaves to datamodel-code-generator (a class named `UUID`, two JSON fields with one
Python name, a field named `list`). The whole corpus is compared in test_crd_corpus.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubeinformers.generator import cli, crd_models, models, naming, schema

# (file, what it brings): kept small, the comparison runs datamodel-code-generator per kind.
SAMPLE = [
    "cert-manager/cert-manager.io_issuers.yaml",  # long descriptions, every line layout
    "gateway-api/gateway.networking.k8s.io_grpcroutes.yaml",  # enums, int enums, deep nesting
    "flux/source.toolkit.fluxcd.io_gitrepositories.yaml",  # Condition, date-times, versions
    "keda/keda.sh_scaledobjects.yaml",  # maps of objects, int-or-string
    "cloudnative-pg/postgresql.cnpg.io_poolers.yaml",  # embedded PodTemplateSpec
    "tekton/300-pipeline.yaml",  # free-form objects (preserve-unknown-fields)
    "external-secrets/generators.external-secrets.io_uuids.yaml",  # class UUID: declined
]
# Modules of SAMPLE the writer leaves to datamodel-code-generator, and why (see SAMPLE).
DECLINED = {"generators.v1alpha1.uuid"}


def _prepared(files: Iterable[Path]) -> schema.Prepared:
    model = cli.collect(crds=list(files))
    assert not model.errors, model.errors
    names = naming.group_names({r.group for r in model.resources})
    prep = schema.prepare(model, names.names)
    assert not prep.errors, prep.errors
    return prep


def _by_dmcg(prep: schema.Prepared, unit: list[str]) -> dict[str, str]:
    own = {n.rsplit(".", 1)[0] for n in unit} & prep.crd_modules
    raw = models._run(models._unit_input(prep, unit), prep.aliases, frozenset(prep.crd_modules))
    return models._post_process_crd(raw, own, True)


@dataclass(frozen=True)
class Both:
    prep: schema.Prepared
    ours: dict[str, str | None]  # module → the writer's source, None where it declined
    theirs: dict[str, str]  # path → datamodel-code-generator's source


@pytest.fixture(scope="module")
def both(shared_data: Path) -> Both:
    prep = _prepared(shared_data / "crds" / f for f in SAMPLE)
    ours: dict[str, str | None] = {}
    theirs: dict[str, str] = {}
    for unit in models.units(prep):
        own = sorted({n.rsplit(".", 1)[0] for n in unit} & prep.crd_modules)
        if not own:
            continue
        (module,) = own
        body = {n: prep.schemas[n] for n in unit if n.rsplit(".", 1)[0] == module}
        ours[module] = crd_models.write(module, body, prep.aliases, schema.SHARED_BUILTINS)
        theirs.update(_by_dmcg(prep, unit))
    return Both(prep, ours, theirs)


def test_crd_models_equal_datamodel_code_generator_on_real_crds(both: Both) -> None:
    """H14: every module the writer writes is datamodel-code-generator's, byte for byte."""
    declined = {module for module, code in both.ours.items() if code is None}
    assert declined == DECLINED
    assert len(both.ours) - len(declined) >= len(SAMPLE) - len(DECLINED)
    for module, code in both.ours.items():
        if code is not None:
            assert code == both.theirs[module.replace(".", "/") + ".py"], f"{module} differs"


def test_generate_models_gives_datamodel_code_generators_files(both: Both) -> None:
    """H14: the step writes what datamodel-code-generator would, module for module, with the
    declined modules written by it."""
    files, errors = models.generate_models(both.prep, object_meta_external=True, jobs=1)
    assert not errors
    assert files == both.theirs


def test_writer_declines_what_it_does_not_reproduce() -> None:
    """H14: a field named like a type the module uses, a JSON field without its own Python
    name, and text with a form feed all go to datamodel-code-generator."""
    module = "demo.v1.thing"

    def thing(props: dict[str, object]) -> dict[str, dict[str, object]]:
        return {f"{module}.Thing": {"type": "object", "properties": props}}

    aliases = {"list": "list", "a": "a", "b": "", "c": "c"}
    shadow = thing({"list": {"type": "array", "items": {"type": "string"}}})
    assert crd_models.write(module, shadow, aliases, "kubeinformers.generated") is None
    unnamed = thing({"b": {"type": "string"}})
    assert crd_models.write(module, unnamed, aliases, "kubeinformers.generated") is None
    feed = thing({"c": {"type": "string", "description": "one\x0ctwo"}})
    assert crd_models.write(module, feed, aliases, "kubeinformers.generated") is None
    plain = thing({"a": {"type": "string"}})
    assert crd_models.write(module, plain, aliases, "kubeinformers.generated") == (
        "# Code generated by kubeinformers. DO NOT EDIT.\n\n"
        "from kubeinformers.runtime.api.model import KubeModel\n\n\n"
        "class Thing(KubeModel):\n"
        "    a: str | None = None"
    )
