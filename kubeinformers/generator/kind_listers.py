"""Step 3b: each listable kind's model learns its lister (`factory.lister(Pod) -> PodLister`),
and each kind served without list and watch its resource (`client.create(TokenReview(...))`).

The lister classes are appended to the module of their models (template `model_listers.py.j2`):
a group-version's `models.py` for built-ins, each kind's own module for CRDs (so importing one
kind still loads only that kind). Each kind's model gets one line in its class body,
`__kube_lister__: ClassVar[type["PodLister"]]`, set at the end of the module. Both live in one
module because the model must name its lister and the lister its model: two modules would
import each other. `.listers` re-exports the classes. Kept apart from model generation: it only
needs the models' source and the kinds.

A kind the server serves without list and watch (TokenReview, SubjectAccessReview, Binding:
create only) has no informer and no lister; its model gets
`__kube_resource__: ClassVar[APIResource]` instead, set at the end of the module, which is all
the typed client needs to write it. A kind created only as a subresource of another object
(Eviction as pods/<name>/eviction, TokenRequest as serviceaccounts/<name>/token) gets
`__kube_subresource__: ClassVar[SubresourceKind]` the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubeinformers.generator import layout

__all__ = ["attach_listers"]

_IMPORTS = """from typing import ClassVar as _ClassVar

from kubeinformers.runtime.api.resource import APIResource as _APIResource
{protobuf}{listers}
"""
_CLASS = re.compile(r"^class (\w+)\(.*\):$")


def _formatted(block: str) -> str:
    """The rendered block, laid out as black would by construction (see `layout`); black when
    a line is too long after all (model modules are not formatted as a whole)."""
    if layout.fits(block):
        return block
    import black

    mode = black.Mode(line_length=100, target_versions={black.mode.TargetVersion.PY311})
    return black.format_str(block, mode=mode)


def attach_listers(
    code: str,
    listers: Mapping[str, str],
    block: str,
    scopes: set[str],
    resources: Mapping[str, str] | None = None,
    subresources: Mapping[str, str] | None = None,
) -> str:
    """`code` with a `__kube_lister__` line in each class of `listers` ({model class: lister
    class}) and a `__kube_resource__` line in each class of `resources` ({model class: its
    APIResource literal, `_APIResource(...)`, laid out after `Model.__kube_resource__ = `: a
    kind without list and watch}), the lister `block` and the resources' assignments appended
    and their imports (`scopes`: "namespaced" and/or "cluster") added; unchanged when no class
    of either is in it. `subresources` ({model class: its SubresourceKind literal, laid out
    after `Model.__kube_subresource__ = `}) likewise give `__kube_subresource__`."""
    resources = resources or {}
    subresources = subresources or {}
    markers = {
        **{cls: f'    __kube_lister__: _ClassVar[type["{name}"]]' for cls, name in listers.items()},
        **{
            cls: "    __kube_resource__: _ClassVar[_ReadableResource]"
            if literal.startswith("_ReadableResource(")
            else "    __kube_resource__: _ClassVar[_APIResource]"
            for cls, literal in resources.items()
        },
        **{cls: "    __kube_subresource__: _ClassVar[_SubresourceKind]" for cls in subresources},
    }
    present = {cls for cls in markers if re.search(rf"^class {cls}\(", code, re.M)}
    if not present:
        return code
    served = [
        f"{cls}.__kube_resource__ = {resources[cls]}" for cls in sorted(resources) if cls in present
    ] + [
        f"{cls}.__kube_subresource__ = {subresources[cls]}"
        for cls in sorted(subresources)
        if cls in present
    ]
    if served:
        block = (
            block.rstrip("\n")
            + "\n\n\n# --- kinds without list and watch: where the typed client writes them ---\n\n"
            + "\n".join(served)
            + "\n"
        )
    lines = code.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        match = _CLASS.match(line)
        if not match or match.group(1) not in present:
            continue
        doc = lines[i].strip() if i < len(lines) else ""
        if len(doc) > 6 and doc.startswith('"""') and doc.endswith('"""'):  # one-line docstring
            out.append(lines[i])
            i += 1
        elif doc == '"""':  # a multi-line docstring
            out.append(lines[i])
            i += 1
            while i < len(lines) and lines[i].strip() != '"""':
                out.append(lines[i])
                i += 1
            out.append(lines[i])
            i += 1
        if out[-1] != line:
            out.append("")
        while i < len(lines) and lines[i] == "":
            i += 1
        out.append(markers[match.group(1)])
        if i < len(lines) and lines[i].strip():
            out.append("")
    code = "\n".join(out).rstrip("\n") + "\n\n\n" + _formatted(block).strip("\n") + "\n"
    imports = []
    if "cluster" in scopes:
        imports.append(
            "from kubeinformers.runtime.cache.listers import ClusterLister as _ClusterLister"
        )
    if "namespaced" in scopes:
        imports.append(
            "from kubeinformers.runtime.cache.listers import NamespacedLister as _NamespacedLister"
        )
        imports.append(
            "from kubeinformers.runtime.cache.listers import (\n"
            "    SingleNamespaceLister as _SingleNamespaceLister,\n)"
        )
    first_class = code.index("\nclass ")
    head, body = code[:first_class], code[first_class:]
    head = (
        head.rstrip("\n")
        + "\n\n"
        + _IMPORTS.format(
            protobuf=(
                "from kubeinformers.runtime.api.resource import ProtobufKind as _ProtobufKind\n"
                if "_ProtobufKind(" in block
                else ""
            )
            + (
                "from kubeinformers.runtime.api.resource import ReadableResource as _ReadableResource\n"
                if "_ReadableResource(" in block
                else ""
            )
            + (
                "from kubeinformers.runtime.api.resource import SubresourceKind as _SubresourceKind\n"
                if "_SubresourceKind(" in block
                else ""
            ),
            listers="\n".join(imports),
        ).rstrip("\n")
        + "\n\n"
    )
    return head + body
