"""Step 3b: give each listable kind's model its lister (`__kube_lister__`, one line per class).

Kept apart from model generation (datamodel-code-generator's output is patched afterwards)
so that how models are split into modules can change without touching this: it only needs
the model's source, the class name and the lister's "module:Class". See
`kubeinformers.runtime.api.kinds` for why the value is a lazy reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["attach_listers"]

_IMPORTS = (
    "from typing import TYPE_CHECKING as _TYPE_CHECKING\n"
    "from typing import ClassVar as _ClassVar\n\n"
    "from kubeinformers.runtime.api.kinds import lister_ref as _lister_ref\n"
)


def attach_listers(code: str, listers: Mapping[str, tuple[str, str]]) -> str:
    """`code` with `__kube_lister__` in each class of `listers` ({model class: (listers
    module, lister class)}) and the imports that needs; unchanged when none is in it."""
    present = {
        cls: ref for cls, ref in listers.items() if re.search(rf"^class {cls}\(", code, re.M)
    }
    if not present:
        return code
    lines = code.split("\n")
    out: list[str] = []
    i = 0
    pattern = re.compile(r"^class (\w+)\(.*\):$")
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        match = pattern.match(line)
        if not match or match.group(1) not in present:
            continue
        doc = lines[i].strip() if i < len(lines) else ""
        if len(doc) > 6 and doc.startswith('"""') and doc.endswith('"""'):  # one-line docstring
            out.append(lines[i])
            i += 1
            out.append("")
            if i < len(lines) and lines[i] == "":
                i += 1
        elif doc == '"""':  # skip the class docstring
            out.append(lines[i])
            i += 1
            while i < len(lines) and lines[i].strip() != '"""':
                out.append(lines[i])
                i += 1
            out.append(lines[i])
            i += 1
            out.append("")
            if i < len(lines) and lines[i] == "":
                i += 1
        module, lister = present[match.group(1)]
        out.append(f'    __kube_lister__: _ClassVar[type["{lister}"]] = _lister_ref(')
        out.append(f'        "{module}:{lister}"')
        out.append("    )")
        if i < len(lines) and lines[i].strip():
            out.append("")
    code = "\n".join(out)
    # Imports: after the header's last top-level import block (before the first class).
    first_class = code.index("\nclass ")
    head, body = code[:first_class], code[first_class:]
    by_module: dict[str, set[str]] = {}
    for module, lister in present.values():
        by_module.setdefault(module, set()).add(lister)
    type_imports = "".join(
        f"    from {module} import {', '.join(sorted(names))}\n"
        for module, names in sorted(by_module.items())
    )
    head = head.rstrip("\n") + "\n\n" + _IMPORTS + "\nif _TYPE_CHECKING:\n" + type_imports + "\n"
    return head + body
