"""Step 1: read every source into one normalised API model.

Sources: OpenAPI v2 (`swagger.json`), OpenAPI v3 (one document or a folder of them), CRD
YAML (files or folders, multi-document, several versions each; other objects of an install
bundle are skipped), and a live cluster (`generator.cluster`). The
result lists resources (group, version, kind, plural, scope, verbs) — taken from the spec's
`paths` and from each CRD's names, scope and served versions, never from the models — and
schemas, each remembering the file and document it came from so errors can point at it.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubeinformers.generator.difference import describe

log = logging.getLogger("kubeinformers.generator.load")

# x-kubernetes-action → the verb discovery reports.
_ACTION_VERBS = {
    "get": "get",
    "list": "list",
    "watch": "watch",
    "watchlist": "watch",
    "post": "create",
    "put": "update",
    "patch": "patch",
    "delete": "delete",
    "deletecollection": "deletecollection",
}
# The subresources a typed client writes (the rest, such as pods/log, are not objects).
_WRITABLE_SUBRESOURCES = frozenset({"status", "scale"})

_CRD_VERBS = frozenset(
    {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)


class LoadError(Exception):
    """A bad input: names the file, the document index and the path inside the document."""

    def __init__(self, file: str, doc_index: int | None, path: str, message: str) -> None:
        self.file = file
        self.doc_index = doc_index
        self.path = path
        self.message = message
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[LoadError], tuple[str, int | None, str, str]]:
        # Errors of files read in worker processes come back pickled.
        return LoadError, (self.file, self.doc_index, self.path, self.message)

    def __str__(self) -> str:
        where = self.file
        if self.doc_index is not None:
            where += f" (document {self.doc_index})"
        if self.path:
            where += f" at {self.path}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Source:
    """Where something came from: a file (or cluster URL) and the document index in it."""

    file: str
    doc_index: int | None = 0  # None: the file (a cluster's URL) holds one object

    def error(self, path: str, message: str) -> LoadError:
        return LoadError(self.file, self.doc_index, path, message)


@dataclass(frozen=True)
class Resource:
    """One servable resource of the API, as discovery would describe it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: frozenset[str]
    source: Source
    singular: str = ""
    from_crd: bool = False
    # The subresources the server serves ("status", "scale"): what a client may write.
    subresources: frozenset[str] = frozenset()

    @property
    def lists_and_watches(self) -> bool:
        return {"list", "watch"} <= self.verbs


@dataclass(frozen=True)
class SubresourceKind:
    """A kind the server takes only as a subresource of another resource's object, created
    there: a policy/v1 Eviction as pods/<name>/eviction, a TokenRequest as
    serviceaccounts/<name>/token (its own group, version and kind; the parent's path)."""

    group: str
    version: str
    kind: str
    parent_group: str
    parent_version: str
    parent_plural: str
    subresource: str


@dataclass
class OpenAPIDocument:
    """Component schemas (original names, `$ref`s as written) and the doc's resources."""

    source: Source
    schemas: dict[str, Any]
    ref_prefix: str  # "#/components/schemas/" (v3) or "#/definitions/" (v2)
    # API group -> the schemas its paths' operations refer to and those naming it in their
    # x-kubernetes-group-version-kind: where `select_groups` starts a document's closure.
    group_roots: dict[str, frozenset[str]] = field(default_factory=dict)

    def keep_closure(self, groups: Collection[str]) -> None:
        """Keep only the schemas `groups` need (their roots and every schema these refer to,
        transitively), as the server's own group-version documents hold: a swagger.json serves
        every group in one document."""
        stack = [name for g in groups for name in self.group_roots.get(g, ())]
        kept: dict[str, Any] = {}
        while stack:
            name = stack.pop()
            if name in kept or name not in self.schemas:
                continue
            kept[name] = self.schemas[name]
            stack.extend(_refs(kept[name], self.ref_prefix))
        self.schemas = {name: schema for name, schema in self.schemas.items() if name in kept}


@dataclass
class CRDVersion:
    """One served version of a CRD: its resource and its `openAPIV3Schema` (may be None)."""

    resource: Resource
    schema: dict[str, Any] | None
    crd_name: str
    version_index: int = 0


@dataclass
class CRDDefinition:
    """One CustomResourceDefinition as read: its name, where, its spec, its served versions.

    Kept so that two files defining the same CRD can be compared (see `resolve_duplicates`).
    """

    name: str
    source: Source
    spec: Mapping[str, Any]
    versions: list[CRDVersion]


@dataclass
class APIModel:
    """Everything the later steps need; filled by the `load_*` functions."""

    documents: list[OpenAPIDocument] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    subresource_kinds: list[SubresourceKind] = field(default_factory=list)
    crds: list[CRDVersion] = field(default_factory=list)
    definitions: list[CRDDefinition] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def extend(self, other: APIModel) -> None:
        self.documents.extend(other.documents)
        self.resources.extend(other.resources)
        self.subresource_kinds.extend(other.subresource_kinds)
        self.crds.extend(other.crds)
        self.definitions.extend(other.definitions)
        self.errors.extend(other.errors)
        self.notes.extend(other.notes)

    def drop_definitions(self, dropped: Collection[CRDDefinition]) -> None:
        """Forget these CRDs' versions and resources (a duplicate lost, or a conflict)."""
        versions = {id(v) for d in dropped for v in d.versions}
        resources = {id(v.resource) for d in dropped for v in d.versions}
        gone = {id(d) for d in dropped}
        self.definitions = [d for d in self.definitions if id(d) not in gone]
        self.crds = [v for v in self.crds if id(v) not in versions]
        self.resources = [r for r in self.resources if id(r) not in resources]

    def select_groups(self, groups: Collection[str]) -> None:
        """Keep only the resources, CRDs and OpenAPI documents of these API groups.

        An OpenAPI document is kept when it serves a resource of a chosen group (a v3
        group-version document is self-contained); documents serving none are left out.
        """
        chosen = set(groups)
        kept_sources = {r.source for r in self.resources if r.group in chosen}
        self.documents = [d for d in self.documents if d.source in kept_sources]
        for document in self.documents:
            if set(document.group_roots) - chosen:  # serves other groups too (swagger.json)
                document.keep_closure(chosen)
        self.drop_definitions([d for d in self.definitions if d.spec.get("group") not in chosen])
        self.resources = [r for r in self.resources if r.group in chosen]


# libyaml's loader when PyYAML was built with it (10x faster on big CRDs), else pure Python.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _YAMLLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """Safe loader that reads a bare `=` as text, as Go's YAML does.

    PyYAML follows YAML 1.1, where `=` is the "value" tag with no constructor; one
    prometheus-operator CRD has an unquoted `- =` enum item.
    """


_YAMLLoader.add_constructor("tag:yaml.org,2002:value", _YAMLLoader.construct_yaml_str)


# ----------------------------------------------------------------------------- OpenAPI


def load_openapi(path: Path) -> APIModel:
    """A swagger.json, one v3 document, or a folder of v3 documents (sorted by name)."""
    model = APIModel()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
        if not files:
            model.errors.append(LoadError(str(path), None, "", "no *.json OpenAPI documents"))
        for f in files:
            try:
                model.extend(_load_openapi_file(f))
            except LoadError as e:
                model.errors.append(e)
        return model
    try:
        model.extend(_load_openapi_file(path))
    except LoadError as e:
        model.errors.append(e)
    return model


def _load_openapi_file(path: Path) -> APIModel:
    source = Source(str(path), 0)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise source.error("", f"cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:  # H17
        raise source.error(
            "", f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})"
        ) from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        try:
            doc = yaml.load(text, Loader=_YAMLLoader)
        except yaml.YAMLError:
            raise source.error(
                f"line {e.lineno} column {e.colno}",
                f"not JSON: {_json_reason(e)}{_cut_short(text, e)}",
            ) from e
    return openapi_from_document(doc, source)


def _json_reason(e: json.JSONDecodeError) -> str:
    # json's "Unterminated string starting at" expects the position after it
    if e.msg.startswith("Unterminated string"):
        return "a string starts there and is never closed"
    return e.msg


def _cut_short(text: str, e: json.JSONDecodeError) -> str:
    """What to add to a JSON error that the end of the text caused (H32): "" otherwise.

    A string still open at the end ("Unterminated string") or an error at the last
    non-blank character means the text stopped before the document did: a download or copy
    cut short, which the parser's own words ("Expecting property name") do not say."""
    end = len(text.rstrip())
    if not (e.msg.startswith("Unterminated string") or e.pos >= end):
        return ""
    return (
        "; the text ends before the JSON document does: the file looks truncated, copy or "
        "download it again"
    )


def openapi_from_document(doc: Any, source: Source) -> APIModel:
    """Read one parsed OpenAPI document (v2 or v3)."""
    if not isinstance(doc, Mapping):
        raise source.error("", "not an OpenAPI document (expected a JSON object)")
    if "swagger" in doc:
        schemas = doc.get("definitions") or {}
        prefix = "#/definitions/"
        where = "definitions"
    elif "openapi" in doc:
        schemas = (doc.get("components") or {}).get("schemas") or {}
        prefix = "#/components/schemas/"
        where = "components.schemas"
    else:
        raise source.error("", "neither `swagger` nor `openapi` key: not an OpenAPI document")
    if not isinstance(schemas, Mapping):
        raise source.error(where, "must be a mapping of schema name to schema")
    model = APIModel()
    paths = doc.get("paths") or {}
    roots = _group_roots(paths, schemas, prefix) if isinstance(paths, Mapping) else {}
    model.documents.append(OpenAPIDocument(source, dict(schemas), prefix, roots))
    model.resources.extend(_resources_from_paths(paths, source))
    if isinstance(paths, Mapping):
        model.subresource_kinds.extend(_subresource_kinds_from_paths(paths))
    return model


def _refs(value: Any, prefix: str) -> Iterator[str]:
    """The schema names `value` refers to (`$ref`s under `prefix`), at any depth."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                yield ref[len(prefix) :]
            stack.extend(v for k, v in item.items() if k != "$ref")
        elif isinstance(item, list):
            stack.extend(item)


def _group_roots(
    paths: Mapping[str, Any], schemas: Mapping[str, Any], prefix: str
) -> dict[str, frozenset[str]]:
    """API group -> the schemas its paths refer to and those whose
    x-kubernetes-group-version-kind names it (see `OpenAPIDocument.group_roots`)."""
    roots: dict[str, set[str]] = {}
    for path, item in paths.items():
        m = _PREFIX.match(str(path))
        if m:
            roots.setdefault(m.group("g") or "", set()).update(_refs(item, prefix))
    for name, schema in schemas.items():
        gvks = (
            schema.get("x-kubernetes-group-version-kind") if isinstance(schema, Mapping) else None
        )
        for gvk in gvks if isinstance(gvks, list) else ():
            if isinstance(gvk, Mapping) and isinstance(gvk.get("group", ""), str):
                roots.setdefault(gvk.get("group", ""), set()).add(str(name))
    return {group: frozenset(names) for group, names in roots.items()}


_PREFIX = re.compile(r"^/(?:api/(?P<cv>[^/]+)|apis/(?P<g>[^/]+)/(?P<v>[^/]+))(?P<rest>/.*)?$")


def _api_paths(
    paths: Mapping[str, Any],
) -> Iterator[tuple[str, str, list[str], bool, Mapping[str, Any]]]:
    """Each API path in order, split: (group, version, its segments after the group version,
    without `watch/` and `namespaces/{namespace}/`, whether it had the latter, its item)."""
    for path in sorted(paths):
        item = paths[path]
        m = _PREFIX.match(path)
        if not m or not isinstance(item, Mapping):
            continue
        segs = [s for s in (m.group("rest") or "").split("/") if s]
        if segs and segs[0] == "watch":
            segs = segs[1:]
        namespaced = len(segs) >= 3 and segs[0] == "namespaces" and segs[1] == "{namespace}"
        if namespaced:
            segs = segs[2:]
        yield m.group("g") or "", m.group("cv") or m.group("v") or "", segs, namespaced, item


def _resources_from_paths(paths: Mapping[str, Any], source: Source) -> list[Resource]:
    """Resources from the operations' x-kubernetes-action and x-kubernetes-group-version-kind."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    subresources: dict[tuple[str, str, str], set[str]] = {}
    same_kind: list[tuple[str, str, str, str, str]] = []  # (group, version, plural, sub, kind)
    for group, version, segs, namespaced, item in _api_paths(paths):
        if len(segs) == 3 and segs[1] == "{name}" and segs[2] in _WRITABLE_SUBRESOURCES:
            subresources.setdefault((group, version, segs[0]), set()).add(segs[2])
            continue
        if len(segs) == 3 and segs[1] == "{name}" and not segs[0].startswith("{"):
            # Another subresource written as the parent's own kind (a pod's resize and
            # ephemeralcontainers, a namespace's finalize, a CSR's approval): writable too.
            for op in item.values():
                gvk = op.get("x-kubernetes-group-version-kind") if isinstance(op, Mapping) else None
                if isinstance(gvk, Mapping) and op.get("x-kubernetes-action") in ("put", "patch"):
                    same_kind.append((group, version, segs[0], segs[2], str(gvk.get("kind", ""))))
            continue
        if not segs or len(segs) > 2 or segs[0].startswith("{"):
            continue  # another subresource, or not a resource path at all
        plural = segs[0]
        for op in item.values():
            if not isinstance(op, Mapping):
                continue
            verb = _ACTION_VERBS.get(str(op.get("x-kubernetes-action", "")))
            gvk = op.get("x-kubernetes-group-version-kind")
            if verb is None or not isinstance(gvk, Mapping):
                continue
            entry = found.setdefault(
                (group, version, plural),
                {"kind": gvk.get("kind", ""), "namespaced": False, "verbs": set()},
            )
            entry["verbs"].add(verb)
            entry["namespaced"] = entry["namespaced"] or namespaced
    for group, version, plural, sub, kind in same_kind:
        parent = found.get((group, version, plural))
        if parent is not None and kind and parent["kind"] == kind:
            subresources.setdefault((group, version, plural), set()).add(sub)
    return [
        Resource(
            group=g,
            version=v,
            kind=e["kind"],
            plural=p,
            namespaced=e["namespaced"],
            verbs=frozenset(e["verbs"]),
            source=source,
            singular=e["kind"].lower(),
            subresources=frozenset(subresources.get((g, v, p), ())),
        )
        for (g, v, p), e in sorted(found.items())
        if e["kind"]
    ]


def _subresource_kinds_from_paths(paths: Mapping[str, Any]) -> list[SubresourceKind]:
    """Kinds created as a subresource of an object (`post` on `<plural>/{name}/<sub>`) whose
    kind is not the parent's own: Eviction, TokenRequest, Binding (pods/binding)."""
    parents: dict[tuple[str, str, str], str] = {}  # (group, version, plural) -> its kind
    posts: list[tuple[str, str, str, str, Mapping[str, Any]]] = []
    for group, version, segs, _namespaced, item in _api_paths(paths):
        for op in item.values():
            if not isinstance(op, Mapping):
                continue
            gvk = op.get("x-kubernetes-group-version-kind")
            if not isinstance(gvk, Mapping):
                continue
            if len(segs) == 2 and segs[1] == "{name}" and op.get("x-kubernetes-action") == "get":
                parents[(group, version, segs[0])] = str(gvk.get("kind", ""))
            elif (
                len(segs) == 3
                and segs[1] == "{name}"
                and not segs[0].startswith("{")
                and op.get("x-kubernetes-action") == "post"
            ):
                posts.append((group, version, segs[0], segs[2], gvk))
    found: dict[tuple[str, str, str], SubresourceKind] = {}
    for group, version, plural, sub, gvk in posts:
        kind = str(gvk.get("kind", ""))
        own = (str(gvk.get("group", "")), str(gvk.get("version", "")), kind)
        parent_kind = parents.get((group, version, plural))
        if not kind or parent_kind is None or kind == parent_kind:
            continue  # the parent's own kind (status, scale) or an unknown parent
        found.setdefault(own, SubresourceKind(*own, group, version, plural, sub))
    return [found[key] for key in sorted(found)]


# ----------------------------------------------------------------------------- CRDs


def crd_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(
            p for p in path.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
        )
    return [path]


# Reading a provider's 2,000 CRD files (100 MB of YAML) takes ~40 s of CPU: above this many
# bytes, worker processes read and parse them (results in file order, as one process would).
PARALLEL_MIN_BYTES = 4_000_000


def load_crds(path: Path, jobs: int = 1) -> APIModel:
    """Every CRD document of a file or folder; bad documents become errors, the rest load.

    Other objects (an install bundle's Deployments, ServiceAccounts, ...: Helm and kustomize
    output) are skipped with one summary note per path; a path holding no CRD at all is an
    error, and so is a file named on the command line that holds no YAML document. A big
    folder is read by `jobs` worker processes (`workers.bound_pool`).
    """
    model = APIModel()
    if not path.exists():
        model.errors.append(
            LoadError(str(path), None, "", "no such file or folder; check the --crd path")
        )
        return model
    files = crd_files(path)
    if not files:
        model.errors.append(
            LoadError(str(path), None, "", "no *.yaml, *.yml or *.json files; check the --crd path")
        )
        return model
    skipped: Counter[str] = Counter()
    empty_files = 0
    for f, (piece, documents, skipped_here) in zip(files, _load_files(files, jobs), strict=True):
        model.extend(piece)
        skipped.update(skipped_here)
        if documents == 0 and not any(e.file == str(f) for e in model.errors):
            if f == path:
                model.errors.append(
                    LoadError(
                        str(f),
                        None,
                        "",
                        "empty: no YAML document in it; give a file holding "
                        "CustomResourceDefinitions, or leave this one out",
                    )
                )
                return model
            empty_files += 1
    what = _skipped_summary(skipped, empty_files)
    if not model.crds and not model.errors:
        model.errors.append(
            LoadError(
                str(path),
                None,
                "",
                f"no CustomResourceDefinition in it ({what or 'nothing to read'}); give the "
                "CRD files, or the install bundle that holds them",
            )
        )
    elif what:
        model.notes.append(f"{path}: {what}")
    return model


def _load_files(files: list[Path], jobs: int) -> Iterator[tuple[APIModel, int, Counter[str]]]:
    """`_load_file` of each file, in order; in worker processes when there is much to read."""
    if jobs > 1 and len(files) > 1 and _total_bytes(files) >= PARALLEL_MIN_BYTES:
        from kubeinformers.generator import workers

        with workers.bound_pool(jobs) as pool:
            chunk = max(1, min(32, len(files) // (jobs * 8)))
            yield from pool.map(_load_file, files, chunksize=chunk)
        return
    for f in files:
        yield _load_file(f)


def _total_bytes(files: list[Path]) -> int:
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass  # reported when it is read
    return total


def _load_file(f: Path) -> tuple[APIModel, int, Counter[str]]:
    """One file's CRDs (errors in `.errors`, not yet merged), its count of YAML documents and
    the kinds of the other objects in it. For worker processes too."""
    piece = APIModel()
    skipped: Counter[str] = Counter()
    documents = 0
    for index, doc in _documents(f, piece):
        documents += 1
        try:
            piece.extend(crd_from_document(doc, Source(str(f), index), skipped))
        except LoadError as e:
            piece.errors.append(e)
    return piece, documents, skipped


def _skipped_summary(skipped: Counter[str], empty_files: int) -> str:
    """`skipped 26 non-CRD documents: Deployment \u00d73, ...` (most frequent first)."""
    parts = []
    total = sum(skipped.values())
    if total:
        kinds = ", ".join(
            f"{kind} \u00d7{n}"
            for kind, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        noun = "document" if total == 1 else "documents"
        parts.append(f"skipped {total} non-CRD {noun}: {kinds}")
    if empty_files:
        parts.append(f"{empty_files} empty file{'s' if empty_files > 1 else ''}")
    return "; ".join(parts)


def _documents(path: Path, model: APIModel) -> Iterator[tuple[int, Any]]:
    """(index, document) for each YAML document; a malformed one ends the file with an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        model.errors.append(LoadError(str(path), None, "", f"cannot read: {e.strerror or e}"))
        return
    except UnicodeDecodeError as e:  # H17: one bad file is that file's error, not the run's
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        model.errors.append(
            LoadError(
                str(path),
                None,
                f"line {line}",
                f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); YAML "
                "files must be UTF-8: convert it (iconv -f latin1 -t utf-8) or leave it out",
            )
        )
        return
    index = 0
    try:
        for index, doc in enumerate(yaml.load_all(text, Loader=_YAMLLoader)):
            if doc is not None:
                yield index, doc
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        # The failing document is the one after the last one yielded (or the first).
        model.errors.append(
            LoadError(str(path), _failing_index(text, mark), at, f"malformed YAML: {problem}")
        )


def _failing_index(text: str, mark: Any) -> int:
    """Index of the document holding `mark`: count `---` separators before its line."""
    if mark is None:
        return 0
    lines = text.splitlines()[: mark.line + 1]
    seps = [i for i, line in enumerate(lines) if re.match(r"^---(\s|$)", line)]
    # A leading `---` before any content opens document 0, not 1.
    first_content = next(
        (i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")),
        None,
    )
    if seps and first_content is not None and seps[0] <= first_content:
        return max(len(seps) - 1, 0)
    return len(seps)


def crd_from_document(doc: Any, source: Source, skipped: Counter[str] | None = None) -> APIModel:
    """The served versions of one CRD document (or of a `List` of objects).

    With `skipped`, objects of other kinds are counted there by kind and left out (an
    install bundle); without it they are an error.
    """
    model = APIModel()
    if not isinstance(doc, Mapping):
        raise source.error("", "not a mapping: expected a CustomResourceDefinition")
    kind = doc.get("kind")
    if kind in ("List", "CustomResourceDefinitionList"):
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise source.error("items", "must be a list of objects")
        for i, item in enumerate(items):
            try:
                model.extend(crd_from_document(item, source, skipped))
            except LoadError as e:
                path = f"items[{i}].{e.path}" if e.path else f"items[{i}]"
                model.errors.append(LoadError(e.file, e.doc_index, path, e.message))
        return model
    if kind != "CustomResourceDefinition":
        if skipped is None:
            raise source.error("kind", f"{kind!r} is not a CustomResourceDefinition")
        skipped[str(kind) if kind else "(no kind)"] += 1
        return model
    api_version = str(doc.get("apiVersion", ""))
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        raise source.error("spec", "missing or not a mapping")
    name = str((doc.get("metadata") or {}).get("name", ""))
    group = spec.get("group")
    names = spec.get("names")
    if not isinstance(group, str) or not group:
        raise source.error("spec.group", "missing")
    if not isinstance(names, Mapping) or not names.get("kind") or not names.get("plural"):
        raise source.error("spec.names", "needs at least kind and plural")
    name = name or f"{names['plural']}.{group}"
    scope = spec.get("scope", "Namespaced")
    if scope not in ("Namespaced", "Cluster"):
        raise source.error("spec.scope", f"{scope!r} is neither Namespaced nor Cluster")
    versions = spec.get("versions")
    if api_version.endswith("v1beta1") and not versions and spec.get("version"):
        versions = [{"name": spec["version"], "served": True}]
    if not isinstance(versions, list) or not versions:
        raise source.error("spec.versions", "missing or empty")
    shared_schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    served = 0
    for i, v in enumerate(versions):
        if not isinstance(v, Mapping) or not v.get("name"):
            raise source.error(f"spec.versions[{i}]", "needs a name")
        if not v.get("served", False):
            continue
        served += 1
        schema = (v.get("schema") or {}).get("openAPIV3Schema", shared_schema)
        if schema is not None and not isinstance(schema, Mapping):
            raise source.error(
                f"spec.versions[{i}].schema.openAPIV3Schema", "must be a schema (a mapping)"
            )
        resource = Resource(
            group=group,
            version=str(v["name"]),
            kind=str(names["kind"]),
            plural=str(names["plural"]),
            namespaced=scope == "Namespaced",
            verbs=_CRD_VERBS,
            source=source,
            singular=str(names.get("singular") or str(names["kind"]).lower()),
            from_crd=True,
            subresources=_crd_subresources(v.get("subresources", spec.get("subresources"))),
        )
        model.resources.append(resource)
        model.crds.append(CRDVersion(resource, dict(schema) if schema else None, name, i))
    if not served:
        raise source.error(
            "spec.versions",
            f"CRD {name!r} serves no version: nothing to generate; set `served: true` on "
            "a version, or leave this CRD out",
        )
    model.definitions.append(CRDDefinition(name, source, spec, list(model.crds)))
    return model


def _crd_subresources(value: Any) -> frozenset[str]:
    """The subresources a CRD version declares (`status: {}`, `scale: {...}`)."""
    if not isinstance(value, Mapping):
        return frozenset()
    return frozenset(k for k in value if k in _WRITABLE_SUBRESOURCES)


def _where(source: Source) -> str:
    if source.doc_index is None:
        return source.file
    return f"{source.file} (document {source.doc_index})"


def _preferred_rank(source: Source, prefer: Sequence[Path]) -> int | None:
    """Index of the first --prefer path that is this file or a folder holding it."""
    try:
        file = Path(source.file).resolve()
    except (OSError, ValueError):
        return None
    for rank, chosen in enumerate(prefer):
        target = chosen.resolve()
        if file == target or file.is_relative_to(target):
            return rank
    return None


def resolve_duplicates(model: APIModel, prefer: Sequence[Path] = ()) -> None:
    """One definition per CRD name: identical copies are merged (one note), different ones
    are an error naming every file, unless a `--prefer` path picks one of them.

    A CRD left in conflict is dropped entirely, so --keep-going still generates the rest.
    """
    by_name: dict[str, list[CRDDefinition]] = {}
    for definition in model.definitions:
        by_name.setdefault(definition.name, []).append(definition)
    dropped: list[CRDDefinition] = []
    for name, defs in sorted(by_name.items()):
        if len(defs) < 2:
            continue
        first = defs[0]
        if all(d.spec == first.spec for d in defs[1:]):
            others = ", ".join(_where(d.source) for d in defs[1:])
            model.notes.append(
                f"CRD {name} is defined identically in {_where(first.source)} and {others}; "
                "using the first"
            )
            dropped.extend(defs[1:])
            continue
        ranked = sorted(
            (rank, i)
            for i, d in enumerate(defs)
            if (rank := _preferred_rank(d.source, prefer)) is not None
        )
        distinct_best = [defs[i] for rank, i in ranked if ranked and rank == ranked[0][0]]
        if distinct_best and all(d.spec == distinct_best[0].spec for d in distinct_best):
            chosen = distinct_best[0]
            model.notes.append(
                f"CRD {name}: using {_where(chosen.source)} (--prefer); ignoring "
                + ", ".join(_where(d.source) for d in defs if d is not chosen)
            )
            dropped.extend(d for d in defs if d is not chosen)
            continue
        other = next(d for d in defs[1:] if d.spec != first.spec)
        # suggest a file (a CRD read from --cluster has a URL, which --prefer cannot name)
        files_on_disk = [d for d in defs if Path(d.source.file).is_file()]
        suggested = other if other in files_on_disk or not files_on_disk else files_on_disk[-1]
        files = ", ".join(_where(d.source) for d in defs)
        hint = (
            "the --prefer paths hold several different ones; prefer a single file"
            if distinct_best
            else f"pick one with --prefer FILE (e.g. --prefer {suggested.source.file})"
        )
        model.errors.append(
            first.source.error(
                "spec",
                f"CRD {name} is defined differently in {files} "
                f"({describe(first.spec, other.spec, 'the first', 'the other', 'spec')}); "
                f"{hint}",
            )
        )
        dropped.extend(defs)
    if dropped:
        model.drop_definitions(dropped)
    _refuse_kind_conflicts(model)


def _refuse_kind_conflicts(model: APIModel) -> None:
    """H18: two CRDs (different names) of one group declaring the same kind are an error naming
    both, and both are left out: a server accepts only the first one created (the other's
    NamesAccepted condition is False and it serves nothing), and files say nothing of which
    that would be; one package cannot hold two resources of one kind."""
    by_kind: dict[tuple[str, str], list[CRDDefinition]] = {}
    for definition in model.definitions:
        names = definition.spec.get("names")
        kind = names.get("kind") if isinstance(names, Mapping) else None
        group = definition.spec.get("group")
        if isinstance(kind, str) and isinstance(group, str):
            by_kind.setdefault((group, kind), []).append(definition)
    dropped: list[CRDDefinition] = []
    for (group, kind), defs in sorted(by_kind.items()):
        if len(defs) < 2:
            continue
        both = " and ".join(f"CRD {d.name} in {_where(d.source)}" for d in defs)
        for d in defs:
            model.errors.append(
                d.source.error(
                    "spec.names.kind",
                    f"kind {kind} of group {group} is declared by {both}; a server accepts only "
                    "one of them (the other is refused: NamesAccepted=False), so neither is "
                    "generated; give each CRD its own kind, or leave one out",
                )
            )
        dropped.extend(defs)
    if dropped:
        model.drop_definitions(dropped)
