"""Names of generated things: group packages, version packages, accessors, classes, fields.

Group accessors follow client-go's rule — the first DNS label of the group, `core` for the
legacy group — written in snake_case (`cert-manager.io` → `cert_manager`, as DESIGN.md's
example). Groups whose first labels agree would share an accessor, so each of them adds the
labels that set it apart from the others — those between what all of them share after the
first label and what all of them share at the end — as few as tell them apart
(`ec2.aws.upbound.io` → `ec2`, `ec2.aws.m.upbound.io` → `ec2_m`; `ops.alpha.example.com` →
`ops_alpha`, `ops.beta.example.org` → `ops_beta`). A built-in group keeps its short name.
The resolutions are summarised in one note, so a user is never surprised by a name.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

# Methods of the factories and of CustomInformers that a group accessor must not shadow.
RESERVED_ACCESSORS = frozenset(
    {
        "start",
        "shutdown",
        "wait_for_cache_sync",
        "informer_for",
        "for_resource",
        "typed_informer",
        "factory",
        "resync_period",
        "namespace",
        "meta",
        "registry",
        "informers",  # the package's factory module
        "apimachinery",
    }
)

# Attribute names of pydantic's BaseModel that a field must not shadow (mypy and pydantic
# both object); such fields get a trailing underscore, like Python keywords.
_BASEMODEL_ATTRS = frozenset(
    {
        "copy",
        "dict",
        "json",
        "schema",
        "schema_json",
        "construct",
        "validate",
        "fields",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "from_orm",
        "update_forward_refs",
        "model_config",
        "model_fields",
        "model_computed_fields",
        "model_extra",
        "model_fields_set",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
    }
)

# Word patterns, tried in order at each position:
# - an acronym with a version (`IPv4`, `IPv6`) or a digit-acronym plural (`K8s`) is one word;
# - an upper-case run plus a plural `s` (`IPs`, `CIDRs`) is one word;
# - an upper-case run before a capitalised word ends at that word (`APIService`);
# - a capitalised or lower-case word with trailing digits (`Dns01`); the rest.
_WORD = re.compile(
    r"[A-Z]{2,}[a-z]\d+s?(?=[A-Z_]|$)|[A-Za-z]\d+s(?=[A-Z0-9_]|$)"
    r"|[A-Z]{2,}s(?=[A-Z0-9_]|$)|[A-Z]+\d*(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+"
)


def words(name: str) -> list[str]:
    """Split `podIPs`, `APIService`, `assignedIPv4`, `enableK8sTokenAuth`, `x-kubernetes-foo`
    or `dns01` into lower-case words (`pod ips`, `assigned ipv4`, `enable k8s token auth`)."""
    out: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", name):
        out.extend(m.group(0).lower() for m in _WORD.finditer(chunk))
    return out


def snake_case(name: str) -> str:
    return "_".join(words(name))


def safe_identifier(name: str, reserved: Iterable[str] = ()) -> str:
    """A valid, non-keyword identifier; keywords and reserved names get a trailing `_`.

    Soft keywords (`match`, `case`, and `type` since Python 3.12) are valid names and stay
    as they are: which words are soft keywords depends on the Python that runs the generator,
    and the code it writes must not (H35)."""
    if not name:
        name = "field"
    if name[0].isdigit():
        name = f"n{name}"
    if keyword.iskeyword(name) or name in reserved:
        name += "_"
    return name


@functools.cache  # a provider's 2,000 CRDs repeat a few thousand field names 340,000 times
def field_name(json_name: str) -> str:
    """The Python attribute of an API field: snake_case; keywords get a trailing underscore."""
    name = snake_case(json_name).lstrip("_")
    if json_name.startswith("$"):
        name += "_"
    return safe_identifier(name, _BASEMODEL_ATTRS)


def kind_accessor(kind: str, plural: str) -> str:
    """`pods`, `service_monitors`, `network_policies`: the plural, cut where the kind's words are.

    The plural of a CRD is one lower-case word (`servicemonitors`); the kind tells where its
    word boundaries are. Boundaries past the common prefix of kind and plural are dropped.
    """
    kind_words = words(kind)
    bounds: set[int] = set()
    pos = 0
    for w in kind_words[:-1]:
        pos += len(w)
        bounds.add(pos)
    lower_plural = plural.lower()
    common = 0
    lower_kind = "".join(kind_words)
    while (
        common < min(len(lower_kind), len(lower_plural))
        and lower_kind[common] == lower_plural[common]
    ):
        common += 1
    parts: list[str] = []
    start = 0
    for b in sorted(bounds):
        if b >= common:
            break
        parts.append(lower_plural[start:b])
        start = b
    parts.append(lower_plural[start:])
    name = "_".join(p for p in (re.sub(r"[^a-z0-9]+", "_", p).strip("_") for p in parts) if p)
    return safe_identifier(name, RESERVED_ACCESSORS)


# Names the generated model modules import. A class by one of these names (kind `Field`,
# `Any`, `UUID`) keeps its name: the module imports the other one under an alias
# (`from pydantic import Field as _Field`); see `kubeinformers.generator.imports`.
RESERVED_CLASSES = frozenset(
    {
        "Annotated",
        "Any",
        "AwareDatetime",
        "BaseModel",
        "ClassVar",
        "ConfigDict",
        "Decimal",
        "Dict",
        "Enum",
        "Field",
        "KubeModel",
        "List",
        "Literal",
        "MicroTime",
        "NaiveDatetime",
        "ObjectMeta",  # CRD modules import it
        "Optional",
        "RootModel",
        "StrEnum",
        "TYPE_CHECKING",
        "Time",
        "UUID",
        "Union",
        "annotations",
        "date",
        "datetime",
        "time",
        "timedelta",
    }
)


def kind_class(kind: str) -> tuple[str, bool]:
    """The class of kind `kind`, and whether it had to differ from the kind.

    The kind itself whenever it is a valid Python identifier and not a keyword
    (`postgresql`, `UUID`, `Field` stay as they are). Otherwise (a keyword such as `None`,
    or a character Python does not allow) the nearest identifier: invalid characters become
    `_`, a keyword gets a trailing `_`, a leading digit a leading `X`.
    """
    if kind.isidentifier() and not keyword.iskeyword(kind):
        return kind, False
    name = re.sub(r"\W", "_", kind) or "Kind"
    if name[0].isdigit():
        name = f"X{name}"
    if keyword.iskeyword(name):
        name += "_"
    return name, True


# Module names beside the kind modules of a version package.
RESERVED_MODULES = frozenset({"apply", "informers", "listers", "models", "registry"})


def kind_module(kind: str, taken: Iterable[str] = ()) -> str:
    """The module of a kind's models inside its version package: `prometheus_rule`.

    Never the name of a class the package exports: for a lower-case kind (`postgresql`) the
    module is `postgresql_models`, as importing a submodule binds its name in the package.
    """
    name = safe_identifier(snake_case(kind) or "kind", RESERVED_MODULES)
    if name == kind_class(kind)[0]:
        name += "_models"
    base, n = name, 2
    while name in taken:
        name = f"{base}{n}"
        n += 1
    return name


@functools.cache
def class_name(name: str) -> str:
    """A CamelCase class-name fragment from a field name (`issuerRef` → `IssuerRef`)."""
    pieces = re.split(r"[^A-Za-z0-9]+", name)
    out = "".join(p[:1].upper() + p[1:] for p in pieces if p)
    if not out or out[0].isdigit():
        out = f"X{out}"
    return out


def version_package(version: str) -> str:
    """Versions are valid identifiers already (`v1`, `v1beta1`); anything else is made one."""
    return safe_identifier(re.sub(r"[^a-z0-9_]", "_", version.lower()))


def is_builtin_group(group: str) -> bool:
    return group == "" or "." not in group or group.endswith(".k8s.io")


def _label_name(labels: list[str]) -> str:
    return "_".join(re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") for label in labels)


@dataclass(frozen=True)
class GroupNames:
    """Accessor (= package) name of every group, and the collisions that were resolved."""

    names: dict[str, str]
    collisions: list[str]


def reserved_accessors() -> frozenset[str]:
    """Names a group accessor must not take: the factory's own attributes, and ours."""
    from kubeinformers.runtime.cache.factory import SharedInformerFactory

    public = {n for n in dir(SharedInformerFactory) if not n.startswith("_")}
    return RESERVED_ACCESSORS | public


def group_names(groups: Iterable[str]) -> GroupNames:
    """Deterministic accessor names for a set of groups (see the module docstring)."""
    unique = sorted(set(groups))
    reserved = reserved_accessors()

    def first_label(group: str) -> str:
        if group == "":
            return "core"
        return safe_identifier(_label_name(group.split(".")[:1]), reserved)

    by_first: dict[str, list[str]] = defaultdict(list)
    for g in unique:
        by_first[first_label(g)].append(g)
    names: dict[str, str] = {}
    lengthened: list[str] = []
    for first, gs in sorted(by_first.items()):
        if len(gs) == 1:
            names[gs[0]] = first
            continue
        keep = [g for g in gs if is_builtin_group(g)][:1]
        for g in keep:
            names[g] = first
        apart = _set_apart([g for g in gs if g not in keep], gs, bare_taken=bool(keep))
        if apart is None:
            return _lengthened(unique, reserved)
        for g, labels in apart.items():
            names[g] = safe_identifier(_label_name(labels), reserved)
            if len(labels) > 1:
                lengthened.append(g)
    if len(set(names.values())) != len(names):
        # Only with odd input (`ec2-m.io` beside `ec2.m.io`): the label-by-label rule.
        return _lengthened(unique, reserved)
    return GroupNames(names, _summary(lengthened, names))


def _set_apart(
    groups: list[str], clashing: list[str], bare_taken: bool
) -> dict[str, list[str]] | None:
    """The labels naming each of `groups`, which share their first label with the other
    `clashing` groups: the first label plus as few as possible of the labels that differ
    (None when no such names exist)."""
    split = {g: g.split(".") for g in clashing}
    shortest = min(len(labels) for labels in split.values())
    suffix = 0  # labels every clashing group ends with (never the first label)
    while suffix < shortest - 1 and len({tuple(ls[-suffix - 1 :]) for ls in split.values()}) == 1:
        suffix += 1
    prefix = 0  # labels after the first that every clashing group starts with
    while prefix < shortest - 1 - suffix and len({ls[1 + prefix] for ls in split.values()}) == 1:
        prefix += 1
    # What each group may add, in order: the labels that differ, then (only when those do
    # not tell it apart) the labels all share at the end.
    extra = {g: split[g][1 + prefix :] for g in groups}
    differing = {g: len(split[g]) - 1 - prefix - suffix for g in groups}
    depth = {g: 1 if differing[g] or bare_taken else 0 for g in groups}

    def name(g: str) -> tuple[str, ...]:
        return (split[g][0], *extra[g][: depth[g]])

    for _ in range(64):
        by_name: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for g in groups:
            by_name[name(g)].append(g)
        clashes = [gs for gs in by_name.values() if len(gs) > 1]
        if not clashes:
            return {g: list(name(g)) for g in groups}
        for gs in clashes:
            # A group whose differing labels are used up keeps its name; the others add one.
            grow = [g for g in gs if depth[g] < differing[g]] or [
                g for g in gs if depth[g] < len(extra[g])
            ]
            if not grow:
                return None
            for g in grow:
                depth[g] += 1
    return None


def _summary(lengthened: list[str], names: Mapping[str, str]) -> list[str]:
    """One note for all groups named beyond their first label."""
    if not lengthened:
        return []
    shown = ", ".join(f"{g} \u2192 {names[g]}()" for g in sorted(lengthened)[:3])
    more = ", ..." if len(lengthened) > 3 else ""
    return [
        f"{len(lengthened)} group(s) share their first label with another group; each adds "
        f"the labels that set it apart ({shown}{more}; see docs/guide/crds.md)"
    ]


def _lengthened(unique: list[str], reserved: frozenset[str]) -> GroupNames:
    """The fallback for odd input: clashing groups lengthened label by label until they
    differ, numbered when even that fails."""
    depth: dict[str, int] = {g: 1 for g in unique}

    def name_of(group: str) -> str:
        if group == "":
            return "core"
        return safe_identifier(_label_name(group.split(".")[: depth[group]]), reserved)

    collisions: list[str] = []
    for _ in range(64):
        by_name: dict[str, list[str]] = defaultdict(list)
        for g in unique:
            by_name[name_of(g)].append(g)
        clashing = {n: gs for n, gs in by_name.items() if len(gs) > 1}
        if not clashing:
            break
        for n, gs in sorted(clashing.items()):
            keep = [g for g in gs if is_builtin_group(g) and depth[g] == 1]
            grow = [g for g in gs if g not in keep[:1]]
            changed = False
            for g in grow:
                if depth[g] < len(g.split(".")):
                    depth[g] += 1
                    changed = True
            if not changed:
                collisions.append(f"groups {gs} share accessor {n!r}: numbered in sorted order")
                return _numbered(unique, name_of, collisions)
    names = {g: name_of(g) for g in unique}
    return GroupNames(names, collisions + _summary([g for g in unique if depth[g] > 1], names))


def _numbered(
    unique: list[str], name_of: Callable[[str], str], collisions: list[str]
) -> GroupNames:
    names: dict[str, str] = {}
    used: dict[str, int] = {}
    for g in unique:
        base = name_of(g)
        n = used.get(base, 0) + 1
        used[base] = n
        names[g] = base if n == 1 else f"{base}{n}"
    return GroupNames(names, collisions)
