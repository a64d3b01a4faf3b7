"""All 157 real CRD files of ../shared/data/crds/ generate in ONE run, every module imports,
and the result passes mypy --strict together with a usage file that reads a nested field of
every served kind.

The usage file is written here from the CRD schemas: for each served version of each CRD it
picks a nested path that exists in the schema (`spec.x.y` when there is one, else the
shallowest typed nested path: through lists, status, other top-level fields), spells it with
the generated attribute names (found through the models' aliases), and writes a typed
function that reads it, with the None checks and loops the types demand.
"""

from __future__ import annotations

import importlib
import json
import time
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from kubeinformers.generator import crd_models, naming
from kubeinformers.generator import models as model_step
from kubeinformers.generator import schema as schema_step
from kubeinformers.generator.cli import collect
from kubeinformers.generator.naming import class_name
from tests.generator.genutil import (
    Run,
    generate_ok,
    import_all,
    importable,
    lister_model,
    python_files,
    run_mypy,
)
from tests.generator.structural import iter_crd_files, load_documents

PKG = "h8_corpus"
GVK = tuple[str, str, str]


@dataclass(frozen=True)
class Corpus:
    root: Path
    pkg_dir: Path
    run: Run
    seconds: float
    schemas: dict[GVK, dict[str, Any]]  # served (group, version, kind) → openAPIV3Schema
    files: int


def served_schemas(folder: Path) -> tuple[dict[GVK, dict[str, Any]], int]:
    """Counted from the YAML directly, independently of the generator's loader."""
    schemas: dict[GVK, dict[str, Any]] = {}
    files = 0
    for path in iter_crd_files(folder):
        files += 1
        for crd in load_documents(path):
            spec = crd["spec"]
            for version in spec["versions"]:
                if version.get("served"):
                    key = (spec["group"], version["name"], spec["names"]["kind"])
                    schemas[key] = version["schema"]["openAPIV3Schema"]
    return schemas, files


@pytest.fixture(scope="module")
def corpus(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    folder = shared_data / "crds"
    schemas, files = served_schemas(folder)
    root = tmp_path_factory.mktemp("corpus")
    started = time.perf_counter()
    run = generate_ok(root, PKG, "--crd", folder)
    seconds = time.perf_counter() - started
    print(f"\ngenerated {len(schemas)} served CRD versions of {files} files in {seconds:.1f}s")
    with importable(root, PKG):
        yield Corpus(root, root / PKG, run, seconds, schemas, files)


def _models(corpus: Corpus) -> dict[GVK, type[BaseModel]]:
    """(group, version, kind) → generated model, through the generated registry."""
    registry = importlib.import_module(f"{PKG}.registry")
    models: dict[GVK, type[BaseModel]] = {}
    for resource in registry.RESOURCES:
        module, _, name = registry.MODELS[resource.gvr].partition(":")
        models[(resource.group, resource.version, resource.kind)] = getattr(
            importlib.import_module(module), name
        )
    return models


def test_all_157_crd_files_generate_in_one_run(corpus: Corpus) -> None:
    assert corpus.files == 157
    assert "error" not in corpus.run.stderr.lower(), corpus.run.stderr
    assert set(_models(corpus)) == set(corpus.schemas)


def test_each_kinds_model_informer_and_lister_agree(corpus: Corpus) -> None:
    """The model is the kind's class, named exactly as the kind (issue 15: even where the
    kind's name is one the model module imports, e.g. external-secrets' `UUID`), and its
    informer and lister use it."""
    wrong = []
    for (group, version, kind), model in sorted(_models(corpus).items()):
        package = model.__module__.rsplit(".", 1)[0]
        lister = getattr(
            importlib.import_module(model.__module__), f"{class_name(model.__name__)}Lister"
        )
        informer = getattr(
            importlib.import_module(f"{package}.informers"), f"{class_name(model.__name__)}Informer"
        )
        if model.__name__ != kind or lister_model(lister) is not model:
            wrong.append(f"{group}/{version} {kind}: model {model!r}, lister {lister}")
        resource = informer.RESOURCE
        if (resource.group, resource.version, resource.kind) != (group, version, kind):
            wrong.append(f"{group}/{version} {kind}: informer of {resource}")
    assert wrong == []


def test_every_generated_module_imports(corpus: Corpus) -> None:
    modules = import_all(corpus.root, corpus.pkg_dir)
    assert len(modules) == len(python_files(corpus.pkg_dir))


def test_crd_model_writer_equals_datamodel_code_generator_on_the_whole_corpus(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """H14 over all 211 kinds: the models step gives the same files when
    datamodel-code-generator writes every module, and the writer wrote all but a few."""
    model = collect(crds=[shared_data / "crds"])
    groups = naming.group_names({r.group for r in model.resources}).names
    prep = schema_step.prepare(model, groups)
    calls: list[bool] = []
    write = crd_models.write

    def counted(*args: Any) -> str | None:
        code = write(*args)
        calls.append(code is not None)
        return code

    monkeypatch.setattr(crd_models, "write", counted)
    ours, errors = model_step.generate_models(prep, object_meta_external=True)
    assert not errors
    assert len(calls) == len(prep.crd_modules)
    assert sum(calls) >= 0.9 * len(calls), f"the writer declined {calls.count(False)} modules"
    monkeypatch.setattr(crd_models, "write", lambda *args: None)
    theirs, errors = model_step.generate_models(prep, object_meta_external=True)
    assert not errors
    assert ours == theirs


# --------------------------------------------------------------------------- round trip

FREE_FORM = {"free": {"nested": [1, "two", {"three": True}]}}
STRING_FORMATS = {
    "date-time": "2026-11-22T08:00:00Z",
    "byte": "aGVsbG8=",
    "duration": "1h30m",
    "ipv4": "10.0.0.1",
    "ipv6": "fd00::1",
    "https": "https://example.com/x",
}


def synthesise(node: dict[str, Any], depth: int = 0) -> Any:
    """An instance of `node` that sets every property it declares, to any depth.

    Maps get one key, arrays one item, int-or-string alternates between an int and a
    string, free-form and preserve-unknown-fields objects carry an arbitrary JSON payload.
    """
    if node.get("x-kubernetes-int-or-string"):
        return "25%" if depth % 2 else 3
    kind = node.get("type")
    props = node.get("properties")
    if node.get("x-kubernetes-embedded-resource"):
        embedded: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap"}
        embedded["metadata"] = {"name": "embedded", "labels": {"a": "b"}}
        for name, sub in (props or {}).items():
            embedded.setdefault(name, synthesise(sub, depth + 1))
        return embedded if props else embedded | {"data": {"k": "v"}}
    if kind == "object" or (kind is None and props):
        if props:
            out = {name: synthesise(sub, depth + 1) for name, sub in props.items()}
            if node.get("x-kubernetes-preserve-unknown-fields"):
                out["h8Preserved"] = FREE_FORM
            return out
        extra = node.get("additionalProperties")
        return {"key": synthesise(extra, depth + 1)} if isinstance(extra, dict) else FREE_FORM
    if kind == "array":
        items = node.get("items")
        return [synthesise(items, depth + 1) if isinstance(items, dict) else FREE_FORM]
    if kind in ("string", "integer") and node.get("enum"):
        return node["enum"][0]
    if kind == "string":
        return STRING_FORMATS.get(node.get("format", ""), "text")
    return {"integer": 7, "number": 1.5, "boolean": True}.get(kind or "", FREE_FORM)


def synthesised_object(key: GVK, schema: dict[str, Any]) -> dict[str, Any]:
    """A whole custom object: every field set, plus fields no schema knows (kept, too)."""
    obj = synthesise(schema)
    obj["apiVersion"], obj["kind"] = f"{key[0]}/{key[1]}", key[2]
    obj["metadata"] = {"name": "x", "namespace": "ns", "labels": {"a": "b"}}
    obj["h8TopLevelUnknown"] = [1, {"two": 2}]
    if isinstance(obj.get("spec"), dict):
        obj["spec"]["h8SpecUnknown"] = {"x": 1}
    return typing.cast(dict[str, Any], obj)


def test_every_kind_round_trips_an_object_that_sets_every_field(corpus: Corpus) -> None:
    """Parse → serialise by alias gives back every field of the schema, and unknown ones."""
    models = _models(corpus)
    failures = []
    for key, schema in sorted(corpus.schemas.items()):
        body = synthesised_object(key, schema)
        try:
            parsed = models[key].model_validate_json(json.dumps(body))
        except ValueError as e:
            failures.append(f"{key}: does not parse: {str(e)[:500]}")
            continue
        if parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) != body:
            failures.append(f"{key}: differs after the round trip")
    assert failures == [], "\n".join(failures)


def test_models_type_check_the_values_they_read(corpus: Corpus) -> None:
    """The round trip above is not vacuous: a wrongly typed value is refused."""
    key = ("cert-manager.io", "v1", "Certificate")
    body = synthesised_object(key, corpus.schemas[key])
    body["spec"]["privateKey"]["size"] = {"not": "an int"}
    with pytest.raises(ValueError, match=r"(privateKey|private_key)\.size"):
        _models(corpus)[key].model_validate(body)


# --------------------------------------------------------------------------- usage file


def _is_typed_object(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and node.get("type") == "object"
        and bool(node.get("properties"))
        and not node.get("x-kubernetes-preserve-unknown-fields")
    )


def _child(node: dict[str, Any]) -> dict[str, Any] | None:
    """The object a path continues into: the node itself, or the items of an array."""
    if _is_typed_object(node):
        return node
    if node.get("type") == "array" and _is_typed_object(node.get("items")):
        return typing.cast(dict[str, Any], node["items"])
    return None


def schema_paths(schema: dict[str, Any]) -> list[tuple[str, ...]]:
    """Nested paths in order of preference: spec.x.y, then any depth-3, then depth-2 paths."""
    tops = [n for n in schema.get("properties", {}) if n not in ("apiVersion", "kind", "metadata")]
    tops.sort(key=lambda n: (n != "spec", n != "status", n))
    deep: list[tuple[str, ...]] = []
    shallow: list[tuple[str, ...]] = []
    for top in tops:
        first = _child(schema["properties"][top])
        if first is None:
            shallow.append((top,))
            continue
        for x, x_node in first["properties"].items():
            second = _child(x_node)
            if second is None:
                shallow.append((top, x))
                continue
            deep.extend((top, x, y) for y in second["properties"])
    return deep + shallow


def _unwrap(annotation: Any) -> tuple[Any, bool, bool]:
    """(inner type, optional?, list?) of `X`, `X | None`, `list[X]`, `list[X] | None`."""
    optional = False
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) != len(args)
        if len(rest) != 1:
            return None, optional, False
        annotation = rest[0]
    if typing.get_origin(annotation) is list:
        return typing.get_args(annotation)[0], optional, True
    return annotation, optional, False


def _attribute(model: type[BaseModel], json_name: str) -> tuple[str, Any] | None:
    for name, info in model.model_fields.items():
        if (info.alias or name) == json_name:
            return name, info.annotation
    return None


@dataclass(frozen=True)
class Step:
    attr: str
    optional: bool
    is_list: bool


def typed_steps(model: type[BaseModel], path: tuple[str, ...]) -> list[Step] | None:
    """The path in attribute names, if every step but the last lands on a model."""
    steps: list[Step] = []
    current: Any = model
    for i, json_name in enumerate(path):
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        found = _attribute(current, json_name)
        if found is None:
            return None
        attr, annotation = found
        inner, optional, is_list = _unwrap(annotation)
        if i < len(path) - 1 and inner is None:
            return None
        steps.append(Step(attr, optional, is_list))
        current = inner
    return steps


def reader_source(index: int, alias: str, steps: list[Step]) -> str:
    """A function reading the path, narrowing None and looping over lists as mypy requires."""
    lines = [f"def read_{index}(obj: {alias}) -> object:"]
    indent = "    "
    value = "obj"
    for n, step in enumerate(steps):
        var = f"v{n}"
        lines.append(f"{indent}{var} = {value}.{step.attr}")
        last = n == len(steps) - 1
        if last:
            lines.append(f"{indent}return {var}")
            break
        if step.optional:
            lines.append(f"{indent}if {var} is None:")
            lines.append(f"{indent}    return None")
        if step.is_list:
            lines.append(f"{indent}for {var}_item in {var}:")
            indent += "    "
            var = f"{var}_item"
        value = var
    if indent != "    ":
        lines.append("    return None")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Usage:
    source: str
    chosen: dict[GVK, tuple[str, ...]]
    untyped: dict[GVK, list[tuple[str, ...]]]  # schema paths the models do not type


def usage_file(corpus: Corpus) -> Usage:
    models = _models(corpus)
    imports: list[str] = []
    funcs: list[str] = []
    chosen: dict[GVK, tuple[str, ...]] = {}
    untyped: dict[GVK, list[tuple[str, ...]]] = {}
    for i, key in enumerate(sorted(corpus.schemas)):
        model = models[key]
        alias = f"{key[2]}_{i}"
        imports.append(f"from {model.__module__} import {model.__name__} as {alias}")
        for path in schema_paths(corpus.schemas[key]):
            steps = typed_steps(model, path)
            if steps is None:
                untyped.setdefault(key, []).append(path)
                continue
            chosen[key] = path
            funcs.append(reader_source(i, alias, steps))
            break
    source = "from __future__ import annotations\n\n" + "\n".join(imports) + "\n\n\n"
    return Usage(source + "\n\n".join(funcs), chosen, untyped)


def test_every_kind_has_a_typed_nested_path(corpus: Corpus) -> None:
    """Each served kind gets a reader; where the schema has spec.x.y, that is what is read."""
    usage = usage_file(corpus)
    assert sorted(set(corpus.schemas) - set(usage.chosen)) == []
    for key, schema in corpus.schemas.items():
        spec_xy = [p for p in schema_paths(schema) if len(p) == 3 and p[0] == "spec"]
        if spec_xy:
            assert usage.chosen[key] == spec_xy[0], (key, usage.untyped.get(key))
    # the most preferred path of every kind is typed all the way down by its model
    assert usage.untyped == {}
    for key, schema in corpus.schemas.items():
        if any(len(p) == 3 for p in schema_paths(schema)):
            assert len(usage.chosen[key]) == 3, key
    nested = sum(len(p) >= 2 for p in usage.chosen.values())
    print(f"\n{nested} of {len(usage.chosen)} kinds read at depth >= 2")


def test_generated_corpus_and_usage_pass_mypy_strict(corpus: Corpus, tmp_path: Path) -> None:
    usage = corpus.root / "usage_corpus.py"
    usage.write_text(usage_file(corpus).source)
    started = time.perf_counter()
    result = run_mypy([usage, corpus.pkg_dir], cwd=corpus.root, mypy_path=[corpus.root])
    print(f"\nmypy --strict over the corpus and usage file: {time.perf_counter() - started:.1f}s")
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    # The same setup must catch a misuse (so the pass above means something).
    header, _ = usage.read_text().split("\n\n\n", 1)
    first_alias = header.splitlines()[2].rsplit(" as ", 1)[1]
    bad = corpus.root / "misuse_corpus.py"
    bad.write_text(
        f"{header}\n\n\ndef misuse(obj: {first_alias}) -> object:\n"
        "    return obj.no_such_field_h8\n"
    )
    result = run_mypy([bad], cwd=corpus.root, mypy_path=[corpus.root])
    assert result.returncode == 1 and "no_such_field_h8" in result.stdout, result.stdout[-3000:]
