"""Step 3b: apply configurations, the partial objects of server-side apply (client-go's
`applyconfigurations`), written beside the models from the same pre-processed schemas.

For each models module (`apps/v1/models.py`, a CRD kind's `demo/v1/widget.py`) one apply
module (`apps/v1/apply.py`, `demo/v1/apply/widget.py`) holding:

- a `TypedDict` (`total=False`) per object type with fields, `<Class>Apply`, keyed by the
  API's JSON names; `Required[...]` only on list-map keys (`x-kubernetes-list-map-keys`, else
  `x-kubernetes-patch-merge-key`) the item's schema requires, since the server needs them to
  merge the list (a defaulted key, a port's `protocol`, the server fills in);
- a class per kind the server patches, `<Kind>Apply(ApplyConfiguration[<Kind>])`: the kind's
  top-level fields as keyword arguments, `metadata` with the object's identity required.

Why TypedDicts (and not partial pydantic classes): a dict literal checked by mypy is what a
manifest is, costs no validation and no model build at import (2,000-CRD providers), and mypy
checks every key, value and required key of it. The kind class ties a configuration to its
model, so `client.apply(DeploymentApply(...))` is typed `Deployment` (see
`kubeinformers.runtime.api.apply`).

The output is laid out as black would (checked by the tests), so it needs no formatting pass:
a line a provider's long names make too long is split as black splits it (`layout.bracket`).
"""

from __future__ import annotations

import ast
import importlib
import json
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeinformers.generator import layout
from kubeinformers.generator.load import Resource
from kubeinformers.generator.models import HEADER
from kubeinformers.generator.schema import OBJECT_META, SHARED_BUILTINS
from kubeinformers.generator.shapes import SHAPE_MODULES

LIST_MAP_KEYS = "x-kubernetes-list-map-keys"  # kept by `schema` on array nodes
MODULE = "apply"  # a built-in group-version's module, a CRD version's package
BASE = "kubeinformers.runtime.api.apply"
META_MODULE = "meta.v1.models"
# The identities of a kind's own metadata (a nested ObjectMeta, a pod template's, needs none).
ROOT_META = {
    "ClusterObjectMetaApply": ("name",),
    "NamespacedObjectMetaApply": ("name", "namespace"),
}
LINE_LENGTH = 100
# What the server writes and an apply must not send (it refuses managedFields).
_META_READ_ONLY = ("managedFields", "selfLink")
_REF = re.compile(r'"\$ref": "#/components/schemas/([^"]+)"')


@dataclass
class _Kind:
    cls: str  # the model's class
    kind: str
    api_version: str
    namespaced: bool


@dataclass
class _Module:
    """One apply module being written: its classes and what it imports for type checking."""

    dotted: str  # the models module it mirrors, `apps.v1.models` / `demo.v1.widget`
    imports: dict[str, str] = field(default_factory=dict)  # apply module → its alias
    typing: set[str] = field(default_factory=set)
    datetime: bool = False


def apply_path(models_module: str) -> str:
    """`apps.v1.models` → `apps/v1/apply.py`; a CRD kind's `demo.v1.widget` →
    `demo/v1/apply/widget.py`."""
    parts = models_module.split(".")
    if parts[-1] == "models":
        return "/".join([*parts[:-1], f"{MODULE}.py"])
    return "/".join([*parts[:-1], MODULE, f"{parts[-1]}.py"])


def _apply_module(models_module: str) -> str:
    return apply_path(models_module).removesuffix(".py").replace("/", ".")


def _external_kinds() -> set[str]:
    """The model classes of the shared built-in tree's kinds (`core.v1.models.Pod`), read from
    its registry: a CRD embedding one refers to its `<Kind>ObjectApply`."""
    try:
        models = importlib.import_module(f"{SHARED_BUILTINS}.registry").MODELS
    except (ImportError, AttributeError):
        return set()
    prefix = f"{SHARED_BUILTINS}."
    return {
        str(v).removeprefix(prefix).replace(":", ".")
        for v in models.values()
        if str(v).startswith(prefix)
    }


class _Writer:
    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        package: str,
        kind_classes: set[str],
        wanted: set[str],
    ) -> None:
        self.schemas = schemas
        self.package = package
        self.kind_classes = kind_classes  # final names whose TypedDict is `<Class>ObjectApply`
        self.wanted = wanted  # the classes that get a TypedDict
        self.required = self._list_map_keys()
        self.by_module: dict[str, list[str]] = {}
        for name in schemas:
            self.by_module.setdefault(name.rsplit(".", 1)[0], []).append(name)

    def _list_map_keys(self) -> dict[str, set[str]]:
        """Final class name → the list-map keys it must carry (see the module docstring)."""
        out: dict[str, set[str]] = {}

        def visit(node: Any) -> None:
            if not isinstance(node, Mapping):
                return
            keys = node.get(LIST_MAP_KEYS)
            items = node.get("items")
            if keys and isinstance(items, Mapping) and "$ref" in items:
                target = _target(items["$ref"])
                body = self.schemas.get(target)
                # A built-in class of the shared tree (body None) got its keys with that tree.
                if body is not None:
                    required = set(body.get("required") or ())
                    out.setdefault(target, set()).update(k for k in keys if k in required)
            for key in ("properties",):
                for sub in (node.get(key) or {}).values():
                    visit(sub)
            for key in ("items", "additionalProperties"):
                visit(node.get(key))
            for key in ("allOf", "anyOf", "oneOf"):
                for sub in node.get(key) or ():
                    visit(sub)

        for body in self.schemas.values():
            visit(body)
        return out

    def typed_dict_name(self, final: str) -> str:
        cls = final.rsplit(".", 1)[1]
        return f"{cls}ObjectApply" if final in self.kind_classes else f"{cls}Apply"

    def has_fields(self, final: str) -> bool:
        body = self.schemas.get(final)
        if body is None:
            return True  # a built-in class of the shared tree: only objects are matched
        return bool(body.get("properties"))

    # --- types ------------------------------------------------------------------------------

    def annotation(self, node: Mapping[str, Any], mod: _Module) -> str:
        """The Python type of a cleaned schema node, as an apply configuration accepts it."""
        given = node.get("x-annotation")
        if isinstance(given, str):
            return given
        if "$ref" in node:
            target = _target(node["$ref"])
            if target not in self.kind_classes and _any_object(target, self.schemas.get(target)):
                mod.typing.add("Any")  # an embedded resource of any kind (H25)
                return "dict[str, Any]"
            if self.has_fields(target):
                return self.reference(target, mod)
            return self.annotation(self.schemas[target], mod)
        python = node.get("x-python-type")
        if isinstance(python, str):  # a CRD enum: only the values it lists apply
            mod.typing.add("Literal")
            return _literal(python)
        alternatives = node.get("anyOf")
        if isinstance(alternatives, list):
            types = {a.get("type") for a in alternatives if isinstance(a, Mapping)}
            if types <= {"integer", "string"}:
                return "int | str"
            if types <= {"integer", "string", "number"}:
                return "str | int | float"
            mod.typing.add("Any")
            return "Any"
        if node.get("customTypePath") or node.get("format") == "date-time":
            mod.datetime = True
            return "datetime | str"
        typ = node.get("type")
        if typ == "array":
            items = node.get("items")
            inner = self.annotation(items, mod) if isinstance(items, Mapping) and items else None
            if inner is None:
                mod.typing.add("Any")
                inner = "Any"
            return f"list[{inner}]"
        addl = node.get("additionalProperties")
        if isinstance(addl, Mapping) and addl:
            return f"dict[str, {self.annotation(addl, mod)}]"
        if typ == "object" or addl is not None:
            mod.typing.add("Any")
            return "dict[str, Any]"
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
        if typ in simple:
            return simple[str(typ)]
        mod.typing.add("Any")
        return "Any"

    def reference(self, target: str, mod: _Module) -> str:
        """The TypedDict of `target`; another module's through that module's alias (a CRD's
        own class may have the name of a built-in one it also refers to)."""
        name = self.typed_dict_name(target)
        module = target.rsplit(".", 1)[0]
        if module == mod.dotted:
            return name
        base = self.package if target in self.schemas else SHARED_BUILTINS
        return f"{_imported(mod, base, module)}.{name}"

    # --- output -----------------------------------------------------------------------------

    def typed_dict(
        self, name: str, body: Mapping[str, Any], required: Iterable[str], mod: _Module
    ) -> str:
        props: Mapping[str, Any] = body.get("properties") or {}
        needed = set(required)
        fields: list[tuple[str, str]] = []
        for key, node in props.items():
            annotation = self.annotation(node, mod)
            if key in needed:
                mod.typing.add("Required")
                annotation = f"Required[{annotation}]"
            fields.append((str(key), annotation))
        if all(k.isidentifier() and not keyword.iskeyword(k) for k, _ in fields):
            lines = [layout.bracket(f"class {name}(", "TypedDict, total=False", "):")]
            lines.extend(_field(key, annotation) for key, annotation in fields)
            if not fields:
                lines.append("    pass")
            return "\n".join(lines)
        # Keys that are no identifiers (`$ref`, `x-kubernetes-...`, `not`): the functional
        # form, with the types as strings (names imported for type checking only).
        lines = [f"{name} = TypedDict(", f'    "{name}",', "    {"]
        lines.extend(f"        {_string(k)}: {_string(a)}," for k, a in fields)
        lines.extend(["    },", "    total=False,", ")"])
        return "\n".join(lines)

    def root(self, kind: _Kind, body: Mapping[str, Any], model_ref: str, mod: _Module) -> str:
        """The kind's configuration class, and the TypedDict of its keyword arguments: the
        top-level fields by their API names, `metadata` required with its identity."""
        props: Mapping[str, Any] = body.get("properties") or {}
        meta = "NamespacedObjectMetaApply" if kind.namespaced else "ClusterObjectMetaApply"
        meta_base = self.package if OBJECT_META in self.schemas else SHARED_BUILTINS
        if mod.dotted != META_MODULE:
            meta = f"{_imported(mod, meta_base, META_MODULE)}.{meta}"
        fields = {
            "properties": {
                k: {"x-annotation": meta} if k == "metadata" else v
                for k, v in props.items()
                if k not in ("apiVersion", "kind")
            }
        }
        args = f"_{kind.cls}ApplyFields"
        mod.typing.add("Unpack")
        scope = "namespaced" if kind.namespaced else "cluster-scoped"
        lines = [
            self.typed_dict(args, fields, {"metadata"}, mod),
            "",
            "",
            layout.bracket(f"class {kind.cls}Apply(", f'ApplyConfiguration["{model_ref}"]', "):"),
            f'    """What one field manager applies to a {kind.kind} ({kind.api_version}, '
            f"{scope}): only",
            f"    the fields given are sent. `client.apply(...)` returns the whole {kind.cls}.",
            '    """',
            "",
            "    __slots__ = ()",
            layout.exploded(
                "    __kube_model__ = (",
                [f'"{self.model_module(mod.dotted)}"', f'"{kind.cls}"'],
                ")",
            ),
            "",
            layout.bracket("    def __init__(", f"self, **fields: Unpack[{args}]", ") -> None:"),
            "        super().__init__(fields)",
        ]
        return "\n".join(lines)

    @staticmethod
    def model_module(dotted: str) -> str:
        """The models module relative to the apply module's package."""
        last = dotted.rsplit(".", 1)[1]
        return ".models" if last == "models" else f"..{last}"

    def module(self, dotted: str, kinds: Mapping[str, _Kind], title: str) -> str | None:
        """The apply module mirroring the models module `dotted`; None when it has nothing."""
        mod = _Module(dotted)
        blocks: list[str] = []
        classes = sorted(self.by_module.get(dotted, ()), key=lambda n: n.rsplit(".", 1)[1])
        for final in classes:
            body = self.schemas[final]
            if not body.get("properties") or final not in self.wanted:
                continue
            if final == OBJECT_META:
                body = {**body, "properties": _without(body["properties"], _META_READ_ONLY)}
            required = self.required.get(final, set())
            blocks.append(self.typed_dict(self.typed_dict_name(final), body, required, mod))
            if final == OBJECT_META:
                for name, identity in ROOT_META.items():
                    blocks.append(self.typed_dict(name, body, {*required, *identity}, mod))
        for final in classes:
            kind = kinds.get(final)
            if kind is not None:
                blocks.append(self.root(kind, self.schemas[final], f"_models.{kind.cls}", mod))
        if not blocks:
            return None
        head = [
            HEADER,
            f'"""Server-side apply configurations of {title}: partial objects that type-check.',
            "",
            "`<Kind>Apply(metadata=..., spec=...)` is what `client.apply` sends; the nested",
            "`<Class>Apply` TypedDicts take the API's field names, only list-map keys required.",
            'See kubeinformers.runtime.api.apply and docs/guide/writing.md."""',
            "",
            "from __future__ import annotations",
            "",
            "from typing import TYPE_CHECKING, TypedDict",
            "",
        ]
        if kinds:
            head += ["from kubeinformers.runtime.api.apply import ApplyConfiguration", ""]
        checking: list[str] = []
        if mod.datetime:
            checking.append("    from datetime import datetime")
        if mod.typing:
            checking.append(f"    from typing import {', '.join(sorted(mod.typing))}")
        if kinds:
            parent, _, last = dotted.rpartition(".")
            checking.append(_import(f"{self.package}.{parent}", last, "_models"))
        for module, alias in sorted(mod.imports.items()):
            parent, _, last = module.rpartition(".")
            checking.append(_import(parent, last, alias))
        if checking:
            head.append("if TYPE_CHECKING:")
            head.extend(checking)
            head.append("")
        return "\n".join(head) + "\n\n" + "\n\n\n".join(blocks) + "\n"


def _import(module: str, name: str, alias: str) -> str:
    """`from module import name as alias` in an `if TYPE_CHECKING:` block, laid out as black
    would."""
    return layout.bracket(
        f"    from {module} import (", f"{name} as {alias}", ")", comma=True, optional=True
    )


_DOTTED = re.compile(r"[\w.]+")


def _field(key: str, annotation: str) -> str:
    """A TypedDict's `    key: annotation`; a line too long split as black splits it: inside
    the annotation's last brackets (`list[`, `Required[`), else in parentheses."""
    first = f"    {key}: "
    opening = _last_opening(annotation)
    if opening > 0 and _DOTTED.fullmatch(annotation[:opening]):
        return layout.bracket(
            first + annotation[: opening + 1], annotation[opening + 1 : -1], annotation[-1]
        )
    if _DOTTED.fullmatch(annotation):
        return layout.bracket(f"{first}(", annotation, ")", optional=True)
    return first + annotation


def _last_opening(text: str) -> int:
    """The index of the bracket that the closing bracket ending `text` closes; -1 if none
    (brackets in string literals do not count)."""
    stack: list[int] = []
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[(":
            stack.append(i)
        elif c in "])":
            if not stack:
                return -1
            start = stack.pop()
            if i == len(text) - 1 and not stack:
                return start
        i += 1
    return -1


def _imported(mod: _Module, base: str, models_module: str) -> str:
    """The alias under which `mod` imports the apply module of `models_module` (`_core_v1`)."""
    relative = _apply_module(models_module)
    alias = "_" + "_".join(p for p in relative.split(".") if p != MODULE)
    mod.imports[f"{base}.{relative}"] = alias
    return alias


def _literal(python: str) -> str:
    """`typing.Literal['a', 'b'] | UnknownEnumValue` (schema's open enum) → `Literal["a", "b"]`:
    in an apply, only the values the CRD lists are valid."""
    expr = ast.parse(python.split(" | ")[0], mode="eval").body
    assert isinstance(expr, ast.Subscript)
    items = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
    values = [ast.literal_eval(item) for item in items]
    return f"Literal[{', '.join(json.dumps(v) for v in values)}]"


def _string(text: str) -> str:
    """A string literal of `text` as black writes it (double quotes unless that escapes more)."""
    if '"' in text and "'" not in text and "\\" not in text:
        return f"'{text}'"
    return json.dumps(text, ensure_ascii=False)


def _without(props: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    drop = set(keys)
    return {k: v for k, v in props.items() if k not in drop}


def _reachable(schemas: Mapping[str, Mapping[str, Any]], roots: Iterable[str]) -> set[str]:
    """The classes an apply configuration of `roots` can hold, and every core/v1 and meta/v1
    class (a CRD's object of the same shape refers to one of those, see `shapes`)."""

    def refs(name: str) -> list[str]:
        return _REF.findall(json.dumps(schemas[name]))

    seen = {name for name in schemas if name.startswith(SHAPE_MODULES)}
    todo = [t for name in [*roots, *seen] for t in refs(name)]
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas or _any_object(name, schemas[name]):
            continue
        seen.add(name)
        todo.extend(refs(name))
    return seen


def _any_object(name: str, body: Mapping[str, Any] | None) -> bool:
    """A CRD's embedded resource that declares no field of its own (`schema`, H25): any
    object, applied as a `dict[str, Any]` (a TypedDict of its apiVersion, kind and metadata
    would refuse the resource's `spec`). A built-in class (PartialObjectMetadata) is not."""
    if body is None or name.startswith(SHAPE_MODULES):
        return False
    props = body.get("properties")
    return (
        isinstance(props, Mapping)
        and set(props) == {"apiVersion", "kind", "metadata"}
        and props["metadata"] == {"$ref": f"#/components/schemas/{OBJECT_META}"}
    )


def _target(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def generate_apply(
    schemas: Mapping[str, Mapping[str, Any]],
    kinds: Mapping[tuple[str, str, str], str],
    resources: Iterable[Resource],
    model_files: Mapping[str, str],
    package: str,
) -> dict[str, str]:
    """`{relative path: source}` of every apply module (see the module docstring)."""
    roots: dict[str, _Kind] = {}
    kind_classes: set[str] = set()
    for r in resources:
        final = kinds.get((r.group, r.version, r.kind))
        if final is None:
            continue
        kind_classes.add(final)
        if "patch" not in r.verbs or final in roots:
            continue
        roots[final] = _Kind(
            cls=final.rsplit(".", 1)[1],
            kind=r.kind,
            api_version=f"{r.group}/{r.version}" if r.group else r.version,
            namespaced=r.namespaced,
        )
    if OBJECT_META not in schemas:
        kind_classes |= _external_kinds()
    writer = _Writer(schemas, package, kind_classes, _reachable(schemas, roots))
    modules = sorted(writer.by_module)
    kinds_of: dict[str, dict[str, _Kind]] = {}  # models module → its kinds (2,000 in a provider)
    for final, k in roots.items():
        kinds_of.setdefault(final.rsplit(".", 1)[0], {})[final] = k
    files: dict[str, str] = {}
    for dotted in modules:
        if dotted.replace(".", "/") + ".py" not in model_files:
            continue
        mine = kinds_of.get(dotted, {})
        parts = dotted.split(".")
        title = "/".join(parts[:-1]) if parts[-1] == "models" else "/".join(parts)
        code = writer.module(dotted, mine, title)
        if code is None:
            continue
        files[apply_path(dotted)] = code
        if parts[-1] != "models":
            init = "/".join([*parts[:-1], MODULE, "__init__.py"])
            files[init] = (
                f'{HEADER}\n"""Apply configurations of {"/".join(parts[:-1])}, one module per '
                'kind (the models\' module names)."""\n'
            )
    return files
