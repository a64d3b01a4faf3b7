"""Reads the Go type declarations of k8s.io/api and k8s.io/apimachinery into the protobuf
schema of every built-in type (the generator input `kubeinformers/generator/data/protobuf-k8s-*.json`).
A maintainers' tool: it lives in the repository, not in the installed package.

kube-apiserver writes built-in objects as protobuf (`application/vnd.kubernetes.protobuf`);
to turn them into the JSON Go's encoding/json would have written, the runtime needs, for
every message, each field's number, JSON name, kind, referenced message and flags (the
contract in `kubeinformers.runtime.codec.protobuf.schema`). The source of truth is the Go
struct tags go-to-protobuf itself reads: `protobuf:"varint,5,opt,name=stdin"` gives the
number and wire type, `json:"stdin,omitempty"` the JSON name and omission rules, the Go
type the kind. Only declarations are read (a small tokenizer, no Go toolchain); a shape this
module cannot map fails the extraction naming the type and field, so a new Kubernetes
version never yields a silently wrong table.

    python -m tools.protobuf_schema --api DIR --apimachinery DIR \\
        --tag v0.36.3 --out kubeinformers/generator/data/protobuf-k8s-1.36.json

DIR is a checkout of the module at the tag (`git archive v0.36.3 | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeinformers.generator.protobuf_table import FLAG_NAMES, FORMAT, KIND_NAMES
from kubeinformers.runtime.codec.protobuf import schema as pb

# apimachinery packages whose types the built-in API messages use (the rest is machinery).
APIMACHINERY_PACKAGES = (
    "pkg/apis/meta/v1",
    "pkg/runtime",
    "pkg/util/intstr",
    "pkg/api/resource",
    "pkg/types",
)
_META = "k8s.io/apimachinery/pkg/apis/meta/v1"
# Go types go-to-protobuf encodes by hand-written marshalers: leaf kinds of the contract,
# their messages are not in the table.
LEAVES: Mapping[tuple[str, str], int] = {
    (_META, "Time"): pb.TIME,
    (_META, "MicroTime"): pb.MICROTIME,
    (_META, "Duration"): pb.DURATION,
    (_META, "FieldsV1"): pb.RAW_JSON,
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): pb.RAW_JSON,
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): pb.QUANTITY,
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): pb.INT_OR_STRING,
}
SCALARS: Mapping[str, int] = {
    "string": pb.STRING,
    "bool": pb.BOOL,
    "int": pb.INT,
    "int8": pb.INT,
    "int16": pb.INT,
    "int32": pb.INT,
    "int64": pb.INT,
    "uint": pb.UINT,
    "uint8": pb.UINT,
    "uint16": pb.UINT,
    "uint32": pb.UINT,
    "uint64": pb.UINT,
    "float64": pb.DOUBLE,
    "float32": pb.FLOAT,
}
NULLABLE = "+protobuf.nullable=true"  # a named slice go-to-protobuf wraps in a message


class ExtractError(Exception):
    """A Go declaration this extractor cannot map; names the type and field."""


# --- tokens -----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<nl>\n)
    |(?P<space>[ \t\r\f\v]+)
    |(?P<comment>//[^\n]*)
    |(?P<block>/\*.*?\*/)
    |(?P<raw>`[^`]*`)
    |(?P<str>"(?:[^"\\\n]|\\.)*")
    |(?P<rune>'(?:[^'\\\n]|\\.)+')
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<num>\.?[0-9][0-9A-Za-z_.]*)
    |(?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str  # nl, comment, raw, str, rune, ident, num, punct
    text: str


def tokenize(source: str) -> list[Token]:
    out: list[Token] = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "punct"
        if kind == "space":
            continue
        if kind == "block":
            # A block comment spanning lines ends a statement like a newline does.
            out.append(Token("comment", m.group()))
            if "\n" in m.group():
                out.append(Token("nl", "\n"))
            continue
        out.append(Token(kind, m.group()))
    return out


# --- Go type expressions ------------------------------------------------------------------

# ("name", package path or "" for predeclared, name) | ("ptr", T) | ("slice", T)
# | ("map", K, V) | ("array", T) | ("struct", (GoField, ...)) | ("alias", T) | ("other", text)
GoType = tuple[Any, ...]


@dataclass(frozen=True)
class GoField:
    name: str  # the Go field name (the type's name when embedded)
    type: GoType
    tag: str
    embedded: bool


@dataclass
class TypeDecl:
    package: str
    name: str
    file: str
    tokens: list[Token]
    imports: Mapping[str, str]
    doc: str
    _parsed: GoType | None = None

    def parsed(self) -> GoType:
        if self._parsed is None:
            parser = _Parser(self.tokens, self.imports, self.package)
            try:
                self._parsed = parser.type_expr()
            except ExtractError as e:
                raise ExtractError(f"{self.package}.{self.name} ({self.file}): {e}") from e
        return self._parsed


@dataclass
class Package:
    path: str  # Go import path, e.g. k8s.io/api/core/v1
    types: dict[str, TypeDecl] = field(default_factory=dict)
    group: str | None = None  # from `const GroupName = "apps"` (register.go); "" is core


class _Parser:
    def __init__(self, tokens: list[Token], imports: Mapping[str, str], package: str) -> None:
        self.toks = tokens
        self.i = 0
        self.imports = imports
        self.package = package

    def _peek(self, skip_nl: bool = True) -> Token:
        j = self.i
        while j < len(self.toks) and (
            self.toks[j].kind == "comment" or (skip_nl and self.toks[j].kind == "nl")
        ):
            j += 1
        return self.toks[j] if j < len(self.toks) else Token("eof", "")

    def _next(self, skip_nl: bool = True) -> Token:
        while self.i < len(self.toks) and (
            self.toks[self.i].kind == "comment" or (skip_nl and self.toks[self.i].kind == "nl")
        ):
            self.i += 1
        if self.i >= len(self.toks):
            return Token("eof", "")
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def _expect(self, text: str) -> None:
        tok = self._next()
        if tok.text != text:
            raise ExtractError(f"expected {text!r}, found {tok.text!r}")

    def _skip_balanced(self, open_: str, close: str) -> None:
        self._expect(open_)
        depth = 1
        while depth:
            tok = self._next()
            if tok.kind == "eof":
                raise ExtractError(f"unbalanced {open_!r}")
            depth += (tok.text == open_) - (tok.text == close)

    def _name(self, first: str) -> GoType:
        if self._peek(skip_nl=False).text == ".":
            self._next()
            second = self._next().text
            if first not in self.imports:
                raise ExtractError(f"{first}.{second}: package {first!r} is not imported")
            return ("name", self.imports[first], second)
        if first in SCALARS or first in ("byte", "rune", "any", "error"):
            return ("name", "", first)
        return ("name", self.package, first)

    def type_expr(self) -> GoType:
        tok = self._next()
        if tok.text == "*":
            return ("ptr", self.type_expr())
        if tok.text == "[":
            if self._peek().text == "]":
                self._next()
                return ("slice", self.type_expr())
            while self._next().text not in ("]", ""):
                pass
            return ("array", self.type_expr())
        if tok.text == "map":
            self._expect("[")
            key = self.type_expr()
            self._expect("]")
            return ("map", key, self.type_expr())
        if tok.text == "struct":
            return ("struct", self._struct_body())
        if tok.text == "interface":
            self._skip_balanced("{", "}")
            return ("other", "interface")
        if tok.text == "func":
            self._skip_balanced("(", ")")
            result = self._peek(skip_nl=False)
            if result.text == "(":
                self._skip_balanced("(", ")")
            elif result.kind == "ident" or result.text in ("*", "["):
                self.type_expr()
            return ("other", "func")
        if tok.text == "chan":
            self.type_expr()
            return ("other", "chan")
        if tok.text == "=":
            return ("alias", self.type_expr())  # `type X = Y` is Y (its message too)
        if tok.kind == "ident":
            return self._name(tok.text)
        raise ExtractError(f"cannot read a type starting at {tok.text!r}")

    def _struct_body(self) -> tuple[GoField, ...]:
        self._expect("{")
        fields: list[GoField] = []
        while True:
            tok = self._peek()
            if tok.text == "}":
                self._next()
                return tuple(fields)
            if tok.text == ";":
                self._next()
                continue
            if tok.kind == "eof":
                raise ExtractError("unterminated struct")
            fields.extend(self._field())

    def _tag(self) -> str:
        tok = self._peek(skip_nl=False)
        if tok.kind == "raw":
            self._next(skip_nl=False)
            return tok.text[1:-1]
        if tok.kind == "str":
            self._next(skip_nl=False)
            text: str = json.loads(tok.text)
            return text
        return ""

    def _field(self) -> list[GoField]:
        tok = self._next()
        if tok.text == "*":  # embedded pointer
            typ = self.type_expr()
            return [
                GoField(str(typ[-1]) if typ[0] == "name" else "?", ("ptr", typ), self._tag(), True)
            ]
        if tok.kind != "ident":
            raise ExtractError(f"cannot read a struct field starting at {tok.text!r}")
        after = self._peek(skip_nl=False)
        if after.kind in ("nl", "raw", "str", "eof") or after.text in (";", "}", "."):
            typ = self._name(tok.text)
            return [GoField(str(typ[2]), typ, self._tag(), True)]
        names = [tok.text]
        while self._peek(skip_nl=False).text == ",":
            self._next()
            names.append(self._next().text)
        typ = self.type_expr()
        tag = self._tag()
        return [GoField(n, typ, tag, False) for n in names]


# --- reading packages ---------------------------------------------------------------------

_IMPORT_LINE = re.compile(r'^\s*(?:([A-Za-z_][A-Za-z0-9_]*|\.)\s+)?"([^"]+)"')
_GROUP_NAME = re.compile(r'^(?:const\s+)?GroupName\s*=\s*"([^"]*)"', re.MULTILINE)


def _imports(tokens: Sequence[Token]) -> dict[str, str]:
    """Import name → path for one file (the package name is the path's last element, as in
    k8s.io/api and apimachinery, where every package is named after its folder)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        if tokens[i].kind == "ident" and tokens[i].text == "import":
            i += 1
            specs: list[tuple[str | None, str]] = []
            j = i
            while j < len(tokens) and tokens[j].kind in ("nl", "comment"):
                j += 1
            group = j < len(tokens) and tokens[j].text == "("
            if group:
                j += 1
            alias: str | None = None
            while j < len(tokens):
                t = tokens[j]
                if t.text == ")" or (not group and t.kind == "nl" and specs):
                    break
                if t.kind == "ident" or t.text in (".", "_"):
                    alias = t.text
                elif t.kind in ("str", "raw"):
                    specs.append((alias, t.text[1:-1]))
                    alias = None
                j += 1
            for name, path in specs:
                out[name or path.rsplit("/", 1)[-1]] = path
            i = j
        elif tokens[i].kind == "ident" and tokens[i].text in ("type", "func", "var", "const"):
            break  # imports come first
        else:
            i += 1
    return out


def _doc(tokens: Sequence[Token], start: int) -> str:
    """The comment block right above tokens[start] (no blank line in between)."""
    lines: list[str] = []
    j = start - 1
    newlines = 0
    while j >= 0:
        t = tokens[j]
        if t.kind == "nl":
            newlines += 1
            if newlines > 1:
                break
        elif t.kind == "comment":
            lines.append(t.text)
            newlines = 0
        else:
            break
        j -= 1
    return "\n".join(reversed(lines))


def _type_specs(tokens: list[Token]) -> Iterator[tuple[str, list[Token], str]]:
    """(name, the tokens of its type, doc) of every top-level type declaration."""
    depth = 0
    i = 0
    n = len(tokens)
    while i < n:
        t = tokens[i]
        if t.kind == "punct" and t.text in "{([":
            depth += 1
        elif t.kind == "punct" and t.text in "})]":
            depth -= 1
        elif depth == 0 and t.kind == "ident" and t.text == "type":
            doc = _doc(tokens, i)
            i += 1
            while tokens[i].kind in ("nl", "comment"):
                i += 1
            if tokens[i].text == "(":
                i += 1
                while True:
                    while tokens[i].kind in ("nl", "comment") or tokens[i].text == ";":
                        i += 1
                    if tokens[i].text == ")":
                        break
                    spec_doc = _doc(tokens, i)
                    name, body, i = _one_spec(tokens, i)
                    yield name, body, spec_doc
            else:
                name, body, i = _one_spec(tokens, i)
                yield name, body, doc
            continue
        i += 1


def _one_spec(tokens: list[Token], i: int) -> tuple[str, list[Token], int]:
    name = tokens[i].text
    i += 1
    start = i
    depth = 0
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "punct" and t.text in "{([":
            depth += 1
        elif t.kind == "punct" and t.text in "})]":
            if depth == 0:
                break  # the `)` closing a type group
            depth -= 1
        elif depth == 0 and (t.kind == "nl" or t.text == ";") and i > start:
            break
        i += 1
    return name, tokens[start:i], i


def read_package(folder: Path, import_path: str) -> Package:
    package = Package(import_path)
    for path in sorted(folder.glob("*.go")):
        name = path.name
        if (
            name.endswith("_test.go")
            or name.startswith("zz_generated")
            or name == "generated.pb.go"
        ):
            continue
        text = path.read_text(encoding="utf-8")
        if package.group is None and (m := _GROUP_NAME.search(text)):
            package.group = m.group(1)
        tokens = tokenize(text)
        imports = _imports(tokens)
        for type_name, body, doc in _type_specs(tokens):
            if body and body[0].text == "[" and len(body) > 1 and body[1].kind == "ident":
                continue  # a generic type (`type X[T any] ...`): machinery, never an API message
            package.types[type_name] = TypeDecl(
                import_path, type_name, f"{folder.name}/{name}", body, imports, doc
            )
    return package


def read_sources(api: Path, apimachinery: Path) -> dict[str, Package]:
    """Every package of k8s.io/api that go-to-protobuf generates (it has a generated.proto)
    and the apimachinery packages their types use, by import path."""
    packages: dict[str, Package] = {}
    for proto in sorted(api.rglob("generated.proto")):
        rel = proto.parent.relative_to(api).as_posix()
        packages[f"k8s.io/api/{rel}"] = read_package(proto.parent, f"k8s.io/api/{rel}")
    for rel in APIMACHINERY_PACKAGES:
        folder = apimachinery / rel
        if not folder.is_dir():
            raise ExtractError(
                f"{folder}: missing; is --apimachinery a k8s.io/apimachinery checkout?"
            )
        packages[f"k8s.io/apimachinery/{rel}"] = read_package(folder, f"k8s.io/apimachinery/{rel}")
    if not any(p.startswith("k8s.io/api/") for p in packages):
        raise ExtractError(f"{api}: no generated.proto below it; is --api a k8s.io/api checkout?")
    return packages


# --- the schema ---------------------------------------------------------------------------


def message_name(package: str, name: str) -> str:
    return f"{package.replace('/', '.')}.{name}"


_TAG = re.compile(r'(\w+):"((?:[^"\\]|\\.)*)"')


def struct_tags(tag: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _TAG.finditer(tag)}


@dataclass(frozen=True)
class Shape:
    """What one Go type is on the wire and in JSON (before field flags)."""

    kind: int
    ref: str | None
    flags: int  # REPEATED, MAP, POINTER, ITEMS


class Extractor:
    def __init__(self, packages: Mapping[str, Package]) -> None:
        self.packages = packages
        self.messages: dict[str, tuple[pb.Field, ...]] = {}
        self._pending: list[tuple[str, TypeDecl]] = []

    def _decl(self, package: str, name: str, where: str) -> TypeDecl:
        pkg = self.packages.get(package)
        if pkg is None or name not in pkg.types:
            raise ExtractError(
                f"{where}: type {package}.{name} is not declared in the sources read"
            )
        return pkg.types[name]

    def _message(self, decl: TypeDecl) -> str:
        full = message_name(decl.package, decl.name)
        if full not in self.messages:
            self.messages[full] = ()  # reserved: recursive types end here
            self._pending.append((full, decl))
        return full

    def shape(self, typ: GoType, where: str) -> Shape:
        """The kind, ref and container flags of a Go type; raises for what cannot be mapped."""
        tag = typ[0]
        if tag == "ptr":
            inner = self.shape(typ[1], where)
            if inner.flags & (pb.REPEATED | pb.MAP | pb.POINTER):
                raise ExtractError(f"{where}: a pointer to a slice, map or pointer is not mapped")
            return Shape(inner.kind, inner.ref, inner.flags | pb.POINTER)
        if tag == "slice":
            if typ[1] in (("name", "", "byte"), ("name", "", "uint8")):
                return Shape(pb.BYTES, None, 0)
            inner = self.shape(typ[1], where)
            if inner.flags & (pb.REPEATED | pb.MAP | pb.POINTER):
                raise ExtractError(
                    f"{where}: a slice of slices, maps or pointers has no protobuf mapping here"
                )
            return Shape(inner.kind, inner.ref, inner.flags | pb.REPEATED)
        if tag == "map":
            key = self.shape(typ[1], where)
            if key.kind != pb.STRING or key.flags:
                raise ExtractError(f"{where}: a map whose key is not a string is not mapped")
            inner = self.shape(typ[2], where)
            if inner.flags & (pb.REPEATED | pb.MAP | pb.POINTER):
                raise ExtractError(
                    f"{where}: a map of slices, maps or pointers has no protobuf mapping here "
                    "(a named slice marked +protobuf.nullable=true is)"
                )
            return Shape(inner.kind, inner.ref, inner.flags | pb.MAP)
        if tag == "name":
            package, name = typ[1], typ[2]
            if package == "":
                if name not in SCALARS:
                    raise ExtractError(f"{where}: Go type {name} is not mapped")
                return Shape(SCALARS[name], None, 0)
            if (package, name) in LEAVES:
                return Shape(LEAVES[(package, name)], None, 0)
            decl = self._decl(package, name, where)
            under = decl.parsed()
            if under[0] == "alias":
                return self.shape(under[1], where)
            if self.struct_behind(decl) is not None:
                return Shape(pb.MESSAGE, self._message(decl), 0)
            if under[0] == "slice" and NULLABLE in decl.doc:
                # go-to-protobuf wraps it: message X { repeated T items = 1; }
                return Shape(pb.MESSAGE, self._message(decl), pb.ITEMS)
            return self.shape(under, f"{where} (type {package}.{name})")
        raise ExtractError(f"{where}: Go type {typ[1] if tag == 'other' else tag} is not mapped")

    def struct_behind(self, decl: TypeDecl) -> GoType | None:
        """The struct type `decl` is, also through named types of structs (`type List
        metav1.List`: go-to-protobuf gives it a message of its own with the same fields)."""
        under = decl.parsed()
        if under[0] == "alias":
            return None  # no message of its own
        for _ in range(10):
            if under[0] == "alias":
                under = under[1]
            if under[0] == "struct":
                return under
            if under[0] != "name" or under[1] == "" or (under[1], under[2]) in LEAVES:
                return None
            under = self._decl(under[1], under[2], f"{decl.package}.{decl.name}").parsed()
        raise ExtractError(f"{decl.package}.{decl.name}: named types nest too deep")

    def _fields(self, decl: TypeDecl) -> tuple[pb.Field, ...]:
        under = decl.parsed()
        if under[0] == "slice":  # a +protobuf.nullable wrapper
            inner = self.shape(under, f"{decl.package}.{decl.name}")
            return ((1, "items", inner.kind, inner.ref, inner.flags),)
        struct = self.struct_behind(decl)
        assert struct is not None
        out: list[pb.Field] = []
        for f in struct[1]:
            out.extend(self._field(decl, f))
        numbers = [f[0] for f in out]
        if len(set(numbers)) != len(numbers):
            raise ExtractError(f"{decl.package}.{decl.name}: duplicate protobuf field numbers")
        return tuple(sorted(out))

    def _field(self, decl: TypeDecl, f: GoField) -> list[pb.Field]:
        where = f"{decl.package}.{decl.name} field {f.name}"
        tags = struct_tags(f.tag)
        proto = tags.get("protobuf")
        if proto is None or proto == "-":
            return []
        parts = proto.split(",")
        try:
            # Only the number is read: go-to-protobuf encodes by the Go type, and some tags
            # say otherwise (ListMeta's `*int64` "bytes" is a varint, admissionregistration
            # Rule's `*ScopeType` "rep" an optional string).
            number = int(parts[1])
        except (IndexError, ValueError):
            raise ExtractError(f"{where}: cannot read the protobuf tag {proto!r}") from None
        json_tag = tags.get("json")
        json_parts = json_tag.split(",") if json_tag is not None else [""]
        if json_parts[0] == "-" and len(json_parts) == 1:
            return []  # not in JSON (runtime.Unknown's raw bytes): not listed, as the contract says
        shape = self.shape(f.type, where)
        flags = shape.flags
        options = set(json_parts[1:])
        if "omitempty" in options:
            flags |= pb.OMITEMPTY
        if "omitzero" in options:
            flags |= pb.OMITZERO
        json_name = json_parts[0]
        if f.embedded and not json_name:
            if shape.kind != pb.MESSAGE or flags & (pb.REPEATED | pb.MAP | pb.ITEMS):
                raise ExtractError(f"{where}: an embedded non-struct without a JSON name")
            flags |= pb.INLINE
        elif not json_name:
            json_name = f.name  # encoding/json uses the Go field name
        return [(number, json_name, shape.kind, shape.ref, flags)]

    def resolve(self) -> None:
        while self._pending:
            full, decl = self._pending.pop()
            self.messages[full] = self._fields(decl)

    def add(self, decl: TypeDecl) -> str:
        name = self._message(decl)
        self.resolve()
        return name


def _is_kind(decl: TypeDecl) -> bool:
    """A top-level API type: embeds metav1.TypeMeta and has a metav1.ObjectMeta."""
    under = decl.parsed()
    if under[0] != "struct":
        return False
    types = {f.type for f in under[1]}
    return ("name", _META, "TypeMeta") in types and ("name", _META, "ObjectMeta") in types


def extract(
    packages: Mapping[str, Package],
) -> tuple[dict[str, tuple[pb.Field, ...]], list[list[str]]]:
    """Messages of every struct type of the API packages (and what they reference), and the
    kinds: [group, version, kind, message] of every type with TypeMeta and ObjectMeta."""
    ex = Extractor(packages)
    kinds: list[list[str]] = []
    for path, pkg in sorted(packages.items()):
        for name, decl in sorted(pkg.types.items()):
            try:
                decl.parsed()
            except ExtractError:
                if path.startswith("k8s.io/api/"):
                    raise
                continue  # machinery of apimachinery the API types never use
            if (path, name) in LEAVES:
                continue
            try:
                struct = ex.struct_behind(decl)
            except ExtractError:
                if path.startswith("k8s.io/api/"):
                    raise
                continue
            if struct is None:
                continue
            has_tags = any("protobuf:" in f.tag and 'protobuf:"-"' not in f.tag for f in struct[1])
            if not has_tags:
                continue
            message = ex.add(decl)
            if path.startswith("k8s.io/api/") and _is_kind(decl):
                if pkg.group is None:
                    raise ExtractError(f"{path}: no `const GroupName = ...` in its register.go")
                kinds.append([pkg.group, path.rsplit("/", 1)[1], name, message])
    return ex.messages, sorted(kinds)


def document(
    messages: Mapping[str, Sequence[pb.Field]], kinds: Iterable[Sequence[str]], tag: str
) -> str:
    """The JSON file: deterministic, one message per line (small diffs between versions)."""
    legend = {
        "kinds": {k: getattr(pb, k) for k in KIND_NAMES},
        "flags": {k: getattr(pb, k) for k in FLAG_NAMES},
    }
    lines = [
        "{",
        f'"format": {FORMAT},',
        f'"source": {json.dumps({"k8s.io/api": tag, "k8s.io/apimachinery": tag})},',
        '"generated_by": "python -m tools.protobuf_schema",',
        '"field": ["number", "json_name", "kind", "ref", "flags"],',
        f'"legend": {json.dumps(legend)},',
        '"kinds": [',
        ",\n".join(json.dumps(list(k)) for k in kinds),
        "],",
        '"messages": {',
        ",\n".join(
            f"{json.dumps(name)}: {json.dumps([list(f) for f in fields])}"
            for name, fields in sorted(messages.items())
        ),
        "}",
        "}",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.protobuf_schema",
        description="Extract the protobuf schema of the built-in Kubernetes types from the Go "
        "sources of k8s.io/api and k8s.io/apimachinery (checkouts at the same tag).",
    )
    parser.add_argument("--api", type=Path, required=True, metavar="DIR")
    parser.add_argument("--apimachinery", type=Path, required=True, metavar="DIR")
    parser.add_argument(
        "--tag", required=True, help="the tag both checkouts are at, e.g. v0.36.3 (recorded)"
    )
    parser.add_argument("--out", type=Path, required=True, metavar="PATH")
    args = parser.parse_args(argv)
    try:
        messages, kinds = extract(read_sources(args.api, args.apimachinery))
    except ExtractError as e:
        print(f"protobuf_schema: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(document(messages, kinds, args.tag), encoding="utf-8")
    print(
        f"protobuf_schema: {len(messages)} messages, {len(kinds)} kinds -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
