"""Built-in types that CRDs embed: a CRD object that is a core type gets the core class.

Operators embed copies of core types in their CRDs (a PodTemplateSpec, Containers, Volumes,
Affinity, ResourceRequirements, LabelSelectors...). Generated as new classes they make big,
slow modules with long names, and a user cannot pass a `core.v1.Container` where the CRD
wants one. So every nested object of a CRD is compared with the built-in core/v1 and meta/v1
types by *shape* (field names and types, recursively; descriptions, enums and validation
do not count) and refers to the built-in class when that class reads everything the CRD's
schema allows:

- every field of the CRD object is a field of the built-in type, of a compatible type
  (the same, or wider: a CRD int-or-string read as a Quantity), and every field the built-in
  type requires is required by the CRD too;
- the CRD object has at least two fields and at least `MIN_COVERAGE` of the built-in's:
  a CRD written against an older Kubernetes lacks the newest fields of a Container and
  still is one, while `{name: string}` is not a Container;
- a built-in of fewer than `DISTINCTIVE_FIELDS` fields shares a word with the field's name
  (`{name, namespace}` under `attachedTo` is no SecretReference; under `secretRef` it is);
- a small built-in named for the core resource it belongs to (PodCondition,
  PersistentVolumeClaimCondition) is taken only where the path names that resource: a
  Certificate's conditions are no pod's, whatever their fields; a big one (PodTemplateSpec)
  is distinctive enough without;
- of the built-ins that fit best, the field's name picks one (`secretKeyRef` → a
  SecretKeySelector, not the ConfigMapKeySelector of the same shape); when it cannot, the
  CRD keeps its own class.

An embedded resource (`x-kubernetes-embedded-resource`) that declares no field besides the
apiVersion, kind and metadata every object has is not matched at all (`schema`, rule H25):
those three fields are most of a PodTemplate, a Service or a Node, and say nothing.

Otherwise the CRD keeps its own class. The shapes of the built-ins come from the same
run when it generates them, else from `kubeinformers.generated.shapes` (written with the
built-ins), which is also where such CRD models import the classes from.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from typing import Any

from kubeinformers.generator import naming

SHAPE_MODULES = ("core.v1.models.", "meta.v1.models.")
MODULE = "_shapes"  # the module of a built-in tree that holds their shapes
MIN_COVERAGE = 0.6
DISTINCTIVE_FIELDS = 5  # a smaller built-in must share a word with the field's name
DISTINCTIVE_WEIGHT = 12  # fields, counted through nested built-ins (see _RESOURCE_QUALIFIERS)
# First words of core/v1 classes that belong to one resource (PodCondition, NodeAddress).
_RESOURCE_QUALIFIERS = frozenset(
    {
        "pod",
        "node",
        "namespace",
        "persistent",
        "service",
        "replication",
        "component",
        "endpoint",
        "event",
        "limit",
    }
)
Token = str | list[Any]
Shape = dict[str, Any]  # {"p": {field: token}, "r": [required fields]}

# A CRD token → the built-in tokens that read every value of it.
_ACCEPTS: dict[str, frozenset[str]] = {
    "string": frozenset({"string", "intstr", "quantity", "any"}),
    "integer": frozenset({"integer", "number", "intstr", "quantity", "any"}),
    "number": frozenset({"number", "quantity", "any"}),
    "boolean": frozenset({"boolean", "any"}),
    "datetime": frozenset({"datetime", "string", "any"}),
    "intstr": frozenset({"intstr", "quantity", "any"}),
    "quantity": frozenset({"quantity", "any"}),
    "object": frozenset({"object", "any"}),
    "any": frozenset({"any"}),
}


def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def token(node: Mapping[str, Any], schemas: Mapping[str, Any], builtin: bool) -> Token:
    """The shape of one field: a type word, `@name` (a built-in class), `%name` (a class of
    the CRD), or `["array", token]` / `["map", token]`. Classes without fields (Time,
    Quantity, IntOrString) are read through to their type."""
    if "$ref" in node:
        target = _name(node["$ref"])
        body = schemas.get(target)
        if isinstance(body, Mapping) and not body.get("properties"):
            return token(body, schemas, builtin)
        if builtin or target.startswith(SHAPE_MODULES):
            return f"@{target}"
        return f"%{target}"
    alternatives = node.get("anyOf")
    if isinstance(alternatives, list):
        types = {a.get("type") for a in alternatives if isinstance(a, Mapping)}
        if types <= {"integer", "string"}:
            return "intstr"
        if types <= {"integer", "string", "number"}:
            return "quantity"
        return "any"
    typ = node.get("type")
    if typ == "array":
        items = node.get("items")
        return ["array", token(items, schemas, builtin) if isinstance(items, Mapping) else "any"]
    addl = node.get("additionalProperties")
    if isinstance(addl, Mapping):
        return ["map", token(addl, schemas, builtin)]
    if typ == "object" or addl is True:
        return "object"
    if typ == "string":
        return "datetime" if node.get("format") == "date-time" else "string"
    if typ in ("integer", "number", "boolean"):
        return str(typ)
    return "any"


def shape(schema: Mapping[str, Any], schemas: Mapping[str, Any], builtin: bool) -> Shape | None:
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return None
    return {
        "p": {str(k): token(v, schemas, builtin) for k, v in sorted(props.items())},
        "r": sorted(str(r) for r in schema.get("required") or ()),
    }


def builtin_shapes(schemas: Mapping[str, Any]) -> dict[str, Shape]:
    """Shapes of the core/v1 and meta/v1 classes among `schemas` (a run's built-ins)."""
    out: dict[str, Shape] = {}
    for name, body in sorted(schemas.items()):
        if name.startswith(SHAPE_MODULES) and isinstance(body, Mapping):
            s = shape(body, schemas, builtin=True)
            if s is not None:
                out[name] = s
    return out


def load_builtin_shapes(module: str) -> dict[str, Shape]:
    """The shapes written with the built-in tree `module` (empty if it has none)."""
    try:
        shapes: dict[str, Shape] = importlib.import_module(f"{module}.{MODULE}").SHAPES
    except (ImportError, AttributeError):
        return {}
    return shapes


def module_source(shapes: Mapping[str, Shape]) -> str:
    """The `_shapes` module written with the built-ins."""
    lines = [
        '"""Shapes of the core/v1 and meta/v1 classes, for generating CRDs that embed them.',
        "",
        "Read by the generator (`kubeinformers.generator.shapes`), never at run time.",
        '"""',
        "",
        "from typing import Any",
        "",
        "# One class per line (written as is, not formatted: a small diff when the API grows).",
        "SHAPES: dict[str, dict[str, Any]] = {",
        *(
            f"    {json.dumps(name)}: {json.dumps(shape)},"
            for name, shape in sorted(shapes.items())
        ),
        "}",
        "",
    ]
    return "\n".join(lines)


@functools.cache  # asked for the same few thousand names some 400,000 times in a provider
def _stems(name: str) -> frozenset[str]:
    """Words of a name without a plural `s` (`SecretKeyRef`, `conditions` → condition)."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in naming.words(name))


class Matcher:
    """Finds the built-in class a CRD object can be read as (see the module docstring)."""

    def __init__(self, builtins: Mapping[str, Shape]) -> None:
        self.builtins = builtins
        self.local: dict[str, Shape] = {}  # classes of the CRD seen so far
        self._by_field: dict[str, set[str]] = {}
        for name, s in builtins.items():
            for field in s["p"]:
                self._by_field.setdefault(field, set()).add(name)
        self._memo: dict[tuple[str, str], bool] = {}
        self._schemas: dict[str, Any] = {}

    def remember(self, name: str, schema: Mapping[str, Any]) -> None:
        s = shape(schema, self._schemas, builtin=False)
        if s is not None:
            self.local[name] = s

    def match(self, schema: Mapping[str, Any], path: tuple[str, ...]) -> str | None:
        """The built-in class `schema` (a hoisted CRD object at class-name `path`: kind,
        field, field, ...) can be read as, or None."""
        hint = path[-1]
        path_words = set().union(*(_stems(p) for p in path))
        s = shape(schema, self._schemas, builtin=False)
        if s is None or len(s["p"]) < 2 or not self.builtins:
            return None
        fields = list(s["p"])
        candidates = set(self._by_field.get(fields[0], ()))
        for field in fields[1:]:
            candidates &= self._by_field.get(field, set())
            if not candidates:
                return None
        hint_words = _stems(hint)
        fits: list[tuple[float, int, str]] = []
        for name in candidates:
            coverage = len(s["p"]) / len(self.builtins[name]["p"])
            if coverage >= MIN_COVERAGE and self._fits(s, name):
                cls = name.rsplit(".", 1)[1]
                overlap = len(hint_words & _stems(cls))
                if not overlap and len(self.builtins[name]["p"]) < DISTINCTIVE_FIELDS:
                    continue
                qualifier = naming.words(cls)[0]
                if (
                    qualifier in _RESOURCE_QUALIFIERS
                    and qualifier not in path_words
                    and self._weight(name) < DISTINCTIVE_WEIGHT
                ):
                    continue  # a PodCondition's fields under no pod: a Job's own condition
                fits.append((coverage, overlap, name))
        if not fits:
            return None
        fits.sort(key=lambda f: (-f[0], -f[1], f[2]))
        if len(fits) > 1 and fits[1][:2] == fits[0][:2]:
            # Equally good fits (`{type, status, reason, ...}` is a NamespaceCondition and a
            # ReplicationControllerCondition): the field's name does not tell which, so the
            # CRD keeps a class of its own rather than borrow a misleading name.
            return None
        return fits[0][2]

    def _weight(self, builtin: str, depth: int = 0) -> int:
        """Fields of `builtin`, counting those of the built-ins it holds (a few levels)."""
        total = 0
        for tok in self.builtins[builtin]["p"].values():
            total += 1
            while isinstance(tok, list):
                tok = tok[1]
            if depth < 3 and tok.startswith("@") and tok[1:] in self.builtins:
                total += self._weight(tok[1:], depth + 1)
        return total

    def _fits(self, s: Shape, builtin: str) -> bool:
        b = self.builtins[builtin]
        if not set(b["r"]) <= set(s["r"]):
            return False
        return all(
            field in b["p"] and self._token_fits(tok, b["p"][field])
            for field, tok in s["p"].items()
        )

    def _token_fits(self, crd: Token, builtin: Token) -> bool:
        if builtin == "any":
            return True
        if isinstance(crd, list) or isinstance(builtin, list):
            return (
                isinstance(crd, list)
                and isinstance(builtin, list)
                and crd[0] == builtin[0]
                and self._token_fits(crd[1], builtin[1])
            )
        if crd.startswith(("@", "%")):
            if not builtin.startswith("@"):
                return False
            key = (crd, builtin)
            if key not in self._memo:
                self._memo[key] = True  # a cycle fits if the rest does
                if crd == builtin:
                    self._memo[key] = True
                else:
                    own = self.builtins.get(crd[1:]) if crd[0] == "@" else self.local.get(crd[1:])
                    self._memo[key] = own is not None and self._fits(own, builtin[1:])
            return self._memo[key]
        return builtin in _ACCEPTS.get(crd, frozenset())
