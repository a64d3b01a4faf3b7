"""Step 3: render informers, listers, accessors, the factory and the registry with jinja2.

The context built here is the analogue of informer-gen's `GetTargets`: which groups and
versions exist, which kinds offer list and watch (only those get informers), each kind's
plural, scope and model class. Templates (one per kind of output file) only print it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from kubeinformers.generator import layout, naming
from kubeinformers.generator.kind_listers import attach_listers
from kubeinformers.generator.load import Resource, SubresourceKind
from kubeinformers.generator.models import HEADER

TEMPLATES = Path(__file__).parent / "templates"
_CLASS = re.compile(r"^class (\w+)\(", re.MULTILINE)
_LISTER_METHODS = frozenset({"list", "get", "by_namespace", "resource", "indexer"})
META_ALIASES = (
    ("Quantity", "str | int | float"),
    ("IntOrString", "int | str"),
)
# Re-exported from the runtime: datetimes that serialise as Go's metav1.Time / MicroTime.
META_REEXPORTS = (
    ("kubeinformers.runtime.api.timestamps", "MicroTime"),
    ("kubeinformers.runtime.api.timestamps", "Time"),
)


@dataclass
class KindCtx:
    kind: str
    plural: str
    accessor: str
    informer: str
    lister: str
    model: str
    model_module: str  # the submodule of the version package that defines `model`
    namespaced: bool
    api_version: str
    resource_expr: str


@dataclass
class VersionCtx:
    version: str
    title: str
    module: str
    accessor_class: str
    kinds: list[KindCtx] = field(default_factory=list)
    classes: list[tuple[str, str]] = field(default_factory=list)  # (class, submodule)
    aliases: tuple[tuple[str, str], ...] = ()
    reexports: tuple[tuple[str, str], ...] = ()  # (module, name)

    @property
    def uses_protobuf(self) -> bool:
        """Whether a kind's APIResource names its protobuf message (`_ProtobufKind`)."""
        return any("_ProtobufKind(" in k.resource_expr for k in self.kinds)

    @property
    def kind_modules(self) -> list[tuple[str, list[str]]]:
        """(submodule, the kinds' models and listers it defines), for TYPE_CHECKING imports."""
        by_module: dict[str, set[str]] = defaultdict(set)
        for k in self.kinds:
            by_module[k.model_module].update((k.model, k.lister))
        return sorted((m, sorted(names)) for m, names in by_module.items())

    @property
    def class_modules(self) -> list[tuple[str, list[str]]]:
        """(submodule, its classes), for TYPE_CHECKING imports."""
        by_module: dict[str, list[str]] = defaultdict(list)
        for cls, module in self.classes:
            by_module[module].append(cls)
        return sorted(by_module.items())

    @property
    def split(self) -> bool:
        """Whether the models live in one module per kind (CRDs) rather than `models.py`."""
        return any(module != "models" for _, module in self.classes)

    @property
    def example(self) -> str:
        if self.kinds:
            return self.kinds[0].model
        return self.classes[0][0] if self.classes else "*"

    @property
    def example_module(self) -> str:
        """The submodule that defines `example` (`models` for the built-ins)."""
        if self.kinds:
            return self.kinds[0].model_module
        return self.classes[0][1] if self.classes else "models"


@dataclass
class GroupCtx:
    group: str
    package: str
    accessor: str
    accessor_class: str
    title: str
    versions: list[VersionCtx] = field(default_factory=list)


def resource_expr(
    r: Resource,
    constructor: str = "APIResource",
    protobuf: tuple[str, str] | None = None,
    first: str = "",
    tail: str = "",
) -> str:
    """The APIResource literal of `r`, laid out as black would after `first` (the start of
    its line; returned without it) and before `tail`; `protobuf` = (message, schema module)
    for a built-in kind the server also writes as protobuf (`ProtobufKind`, imported under
    the same prefix)."""
    call = resource_call(r, constructor, protobuf)
    return layout.call(first, call, tail)[len(first) :]


def resource_call(
    r: Resource, constructor: str = "APIResource", protobuf: tuple[str, str] | None = None
) -> layout.Call:
    """The APIResource literal of `r` as a call to lay out (see `resource_expr`)."""
    verbs = ", ".join(f'"{v}"' for v in sorted(r.verbs))
    args: list[tuple[str, str | layout.Call]] = [
        ("group", f'"{r.group}"'),
        ("version", f'"{r.version}"'),
        ("resource", f'"{r.plural}"'),
        ("kind", f'"{r.kind}"'),
        ("namespaced", str(r.namespaced)),
        ("singular", f'"{r.singular}"'),
        ("verbs", layout.Call("frozenset", [("", f"{{{verbs}}}")])),
    ]
    if r.subresources:
        names = ", ".join(f'"{v}"' for v in sorted(r.subresources))
        args.append(("subresources", layout.Call("frozenset", [("", f"{{{names}}}")])))
    if protobuf is not None:
        prefix = "_" if constructor.startswith("_") else ""
        pb = layout.Call(
            f"{prefix}ProtobufKind", [("", f'"{protobuf[0]}"'), ("", f'"{protobuf[1]}"')]
        )
        args.append(("protobuf", pb))
    return layout.Call(constructor, args)


def tool_versions() -> str:
    """The versions the output depends on (`make verify` needs the same ones)."""
    from importlib.metadata import version

    return (
        f"datamodel-code-generator {version('datamodel-code-generator')}, black {version('black')}"
    )


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    # A line a long kind name makes too long, split as black would (see `layout`).
    env.globals["bracket"] = layout.bracket
    return env


def _camel(package: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in package.split("_") if p)


def dedupe(resources: Iterable[Resource]) -> list[Resource]:
    """One resource per group/version/plural (the first source wins), sorted."""
    seen: dict[tuple[str, str, str], Resource] = {}
    for r in resources:
        seen.setdefault((r.group, r.version, r.plural), r)
    return [seen[k] for k in sorted(seen)]


def _natural_accessor(r: Resource) -> str:
    """The kind accessor by the plural cut at the kind's words (H11's kind rule)."""
    accessor = naming.kind_accessor(r.kind, r.plural)
    return f"{accessor}_" if accessor in _LISTER_METHODS else accessor


def _keeps_accessor(r: Resource) -> tuple[bool, str, str]:
    """Which of several kinds mapping to one accessor keeps it: the smallest (H19)."""
    return ("-" in r.plural, r.plural, r.kind)


def render(
    resources: Iterable[Resource],
    kinds: Mapping[tuple[str, str, str], str],
    model_files: Mapping[str, str],
    group_pkgs: Mapping[str, str],
    package: str,
    builtin: bool,
    api_title: str = "",
    protobuf_kinds: Mapping[tuple[str, str, str], str] | None = None,
    protobuf_module: str = "",
    notes: list[str] | None = None,
    subresource_kinds: Iterable[SubresourceKind] = (),
) -> dict[str, str]:
    """Every non-model file of the output, `{relative path: source}`.

    `protobuf_kinds` maps (group, version, kind) to the protobuf message of each kind the
    server writes as protobuf, described by the table in `protobuf_module`. A kind accessor
    renamed because another kind has it is said in `notes` (H19)."""
    env = _environment()
    files: dict[str, str] = {}
    header = HEADER
    all_resources = dedupe(resources)
    pb_kinds = protobuf_kinds or {}

    def wire(r: Resource) -> tuple[str, str] | None:
        message = pb_kinds.get((r.group, r.version, r.kind))
        return (message, protobuf_module) if message else None

    versions: dict[str, VersionCtx] = {}

    def version_ctx(pkg: str, version: str, title: str) -> VersionCtx:
        key = f"{pkg}/{version}"
        if key not in versions:
            versions[key] = VersionCtx(
                version=version,
                title=title,
                module=f"{package}.{pkg}.{version}",
                accessor_class=f"{_camel(pkg)}{_camel(version)}Informers",
            )
        return versions[key]

    for path, code in sorted(model_files.items()):
        parts = path.split("/")
        if len(parts) != 3:
            continue
        gv = version_ctx(parts[0], parts[1], f"{parts[0]}/{parts[1]}")
        submodule = parts[2].removesuffix(".py")
        gv.classes = sorted({*gv.classes, *((c, submodule) for c in _CLASS.findall(code))})
        if parts[0] == "meta" and parts[1] == "v1":
            gv.aliases = META_ALIASES
            gv.reexports = META_REEXPORTS
            gv.title = "meta/v1 (apimachinery)"

    # H19: of the kinds whose plurals map to one accessor, the one with an undashed plural
    # keeps it (then the first plural, then kind, in code-point order), whatever the input
    # order: adding a kind with plural `dns-records` never takes `dns_records()` from
    # `dnsrecords`. The others' accessors follow their spelled plural.
    keeper: dict[tuple[str, str, str], Resource] = {}
    for r in all_resources:
        if r.lists_and_watches and (r.group, r.version, r.kind) in kinds:
            slot = (r.group, r.version, _natural_accessor(r))
            held = keeper.get(slot)
            if held is None or _keeps_accessor(r) < _keeps_accessor(held):
                keeper[slot] = r

    registry_models: list[str] = []
    # Kinds served without list and watch, by model module: {model class: APIResource literal}.
    served_only: dict[str, dict[str, str]] = defaultdict(dict)
    # Kinds created as a subresource of another object: {model class: SubresourceKind literal}.
    created_under: dict[str, dict[str, str]] = defaultdict(dict)
    group_title: dict[str, str] = {}
    for r in all_resources:
        final = kinds.get((r.group, r.version, r.kind))
        if final is None:
            continue
        module, _, cls = final.rpartition(".")
        mod_path = module.replace(".", "/") + ".py"
        if mod_path not in model_files:
            continue
        gvr = layout.Call(
            "GroupVersionResource",
            [("", f'"{r.group}"'), ("", f'"{r.version}"'), ("", f'"{r.plural}"')],
        )
        registry_models.append(layout.call("    ", gvr, f': "{package}.{module}:{cls}",')[4:])
        pkg = group_pkgs[r.group]
        version = naming.version_package(r.version)
        gv_module, _, model_module = module.rpartition(".")
        if gv_module != f"{pkg}.{version}":
            continue  # a kind whose model lives in another package cannot get accessors here
        if not r.lists_and_watches:
            # No informer, no lister: its model knows its resource, for the typed client.
            if r.verbs and model_module:
                first = f"{cls}.__kube_resource__ = "
                readable = {"get", "list"} <= r.verbs  # the client reads it (M13)
                served_only[f"{pkg}/{version}/{model_module}.py"][cls] = resource_expr(
                    r, "_ReadableResource" if readable else "_APIResource", None, first=first
                )
            continue
        gv = version_ctx(pkg, version, f"{r.group or 'core'}/{r.version}")
        gv.title = f"{r.group or 'core'}/{r.version}"
        group_title[pkg] = r.group or "core"
        used = {k.informer for k in gv.kinds}
        base = naming.class_name(cls)  # `postgresql` → `PostgresqlInformer`
        if f"{base}Informer" in used:
            base = naming.class_name(r.plural)
        accessor = _natural_accessor(r)
        taken_accessors = {k.accessor: k for k in gv.kinds}
        kept = keeper.get((r.group, r.version, accessor), r)
        holder = taken_accessors.get(accessor)
        if kept is not r or holder is not None:  # e.g. plurals `foo-bars` and `foobars`
            holder_kind = holder.kind if holder is not None else kept.kind
            holder_plural = holder.plural if holder is not None else kept.plural
            # H19: only the accessor is renamed, never the classes (`base`), and it is said.
            wanted = accessor
            stem = accessor = naming.safe_identifier(r.plural.replace("-", "_"))
            n = 2
            reserved = {*taken_accessors, wanted}
            while accessor in reserved:
                accessor = f"{stem}{n}"
                n += 1
            if notes is not None:
                notes.append(
                    f"{gv.title}: kinds {holder_kind} (plural {holder_plural}) and {r.kind} "
                    f"(plural {r.plural}) both map to accessor {wanted}(); {holder_kind} keeps "
                    f"it, {r.kind}'s is {accessor}()"
                )
        gv.kinds.append(
            KindCtx(
                kind=r.kind,
                plural=r.plural,
                accessor=accessor,
                informer=f"{base}Informer",
                lister=f"{base}Lister",
                model=cls,
                model_module=model_module,
                namespaced=r.namespaced,
                api_version=f"{r.group}/{r.version}" if r.group else r.version,
                resource_expr=resource_expr(
                    r, "_APIResource", wire(r), first="    RESOURCE: _ClassVar[_APIResource] = "
                ),
            )
        )

    # Each listable kind's model learns its lister (`factory.lister(Pod) -> PodLister`); the
    # listers are defined beside the models, in the module of each model (see kind_listers):
    # a group-version's `models.py` for built-ins, each kind's own module for CRDs.
    by_plural = {(r.group, r.version, r.plural): r for r in all_resources}
    with_resource = {(r.group, r.version, r.kind) for r in all_resources}
    for sub in subresource_kinds:
        own = (sub.group, sub.version, sub.kind)
        final = kinds.get(own)
        parent = by_plural.get((sub.parent_group, sub.parent_version, sub.parent_plural))
        if final is None or parent is None or own in with_resource:
            continue  # no model, no parent, or its own resource says it (Binding: bindings)
        module, _, cls = final.rpartition(".")
        sub_pkg = group_pkgs.get(sub.group)
        sub_version = naming.version_package(sub.version)
        gv_module, _, model_module = module.rpartition(".")
        if sub_pkg is None or gv_module != f"{sub_pkg}.{sub_version}":
            continue
        api_version = f"{sub.group}/{sub.version}" if sub.group else sub.version
        literal = layout.Call(
            "_SubresourceKind",
            [
                ("", resource_call(parent, "_APIResource")),
                ("", f'"{sub.subresource}"'),
                ("", f'"{api_version}"'),
                ("", f'"{sub.kind}"'),
            ],
        )
        first = f"{cls}.__kube_subresource__ = "
        text = layout.call(first, literal, "")[len(first) :]
        created_under[f"{sub_pkg}/{sub_version}/{model_module}.py"][cls] = text

    # Kinds served without list and watch learn their resource the same way (see kind_listers).
    for key, gv in versions.items():
        uses = Counter(k.model for k in gv.kinds)
        by_module: dict[str, list[KindCtx]] = defaultdict(list)
        for k in gv.kinds:
            by_module[k.model_module].append(k)
        for path in (*served_only, *created_under):
            if path.startswith(f"{key}/"):
                by_module.setdefault(path[len(key) + 1 :].removesuffix(".py"), [])
        for module, module_kinds in sorted(by_module.items()):
            path = f"{key}/{module}.py"
            if path not in model_files:
                continue
            module_kinds.sort(key=lambda k: k.accessor)
            listed = sorted((k.model, k.lister) for k in module_kinds if uses[k.model] == 1)
            block = ""
            if module_kinds:
                block = env.get_template("model_listers.py.j2").render(
                    kinds=module_kinds, listed=listed
                )
            scopes = {"namespaced" if k.namespaced else "cluster" for k in module_kinds}
            files[path] = attach_listers(
                model_files[path],
                dict(listed),
                block,
                scopes,
                served_only.get(path),
                created_under.get(path),
            )

    groups: dict[str, GroupCtx] = {}
    by_pkg: dict[str, list[VersionCtx]] = defaultdict(list)
    for key in sorted(versions):
        pkg = key.split("/")[0]
        by_pkg[pkg].append(versions[key])
    for pkg, gvs in sorted(by_pkg.items()):
        with_kinds = [v for v in gvs if v.kinds]
        for gv in gvs:
            gv.kinds.sort(key=lambda k: k.accessor)
            files[f"{pkg}/{gv.version}/__init__.py"] = env.get_template("version.py.j2").render(
                header=header, gv=gv
            )
            if gv.split:
                files[f"{pkg}/{gv.version}/models.py"] = env.get_template(
                    "models_index.py.j2"
                ).render(header=header, gv=gv)
            if gv.kinds:
                files[f"{pkg}/{gv.version}/informers.py"] = env.get_template(
                    "informers.py.j2"
                ).render(header=header, gv=gv)
                files[f"{pkg}/{gv.version}/listers.py"] = env.get_template("listers.py.j2").render(
                    header=header, gv=gv
                )
        if with_kinds:
            group = GroupCtx(
                group=group_title[pkg],
                package=pkg,
                accessor=pkg,
                accessor_class=f"{_camel(pkg)}Informers",
                title=group_title[pkg],
                versions=sorted(with_kinds, key=lambda v: v.version),
            )
            groups[pkg] = group
            # The accessors in `informers`, not in `__init__`: a type checker reading one
            # kind reads its package's `__init__` too, and must not be led to every kind.
            files[f"{pkg}/informers.py"] = env.get_template("group.py.j2").render(
                header=header, group=group
            )
            doc = (
                f"The {group.title} group: " + ", ".join(v.version for v in gvs) + ". Its "
                f"informers: `from {package}.{pkg}.informers import {group.accessor_class}`."
            )
        else:
            doc = f"Models of {pkg}: " + ", ".join(v.version for v in gvs) + "."
        files[f"{pkg}/__init__.py"] = env.get_template("package.py.j2").render(
            header=header, doc=doc
        )

    group_list = [groups[k] for k in sorted(groups)]
    example = "..."
    example_module, example_kind = "<group>.<version>.<kind module>", "<Kind>"
    if group_list:
        g0 = group_list[0]
        v0 = g0.versions[0]
        example = f"{g0.accessor}().{v0.version}().{v0.kinds[0].accessor}()"
        example_module = f"{g0.package}.{v0.version}" + (f".{v0.example_module}" * v0.split)
        example_kind = v0.example
    root = {
        "builtin": builtin,
        "package": package,
        "groups": group_list,
        "example": example,
        "example_module": example_module,
        "example_kind": example_kind,
        "api_title": api_title,
    }
    # The factory in a module of its own (see root.py.j2).
    files["informers.py"] = env.get_template("factory.py.j2").render(header=header, root=root)
    files["__init__.py"] = env.get_template("root.py.j2").render(header=header, root=root)
    files["registry.py"] = env.get_template("registry.py.j2").render(
        header=header,
        registry={
            "resources": [
                resource_expr(r, protobuf=wire(r), first="    ", tail=",") for r in all_resources
            ],
            "protobuf": any(wire(r) for r in all_resources),
            "models": registry_models,
            "tools": tool_versions(),
        },
    )
    return files
