"""Lazy public names: a package's `__getattr__` imports the defining module on first use.

Why: `import kubeinformers` (and a subpackage's face) must not import the runtime, pydantic or
the test servers before a name is used. Each face keeps a table `name -> defining module` and a
`TYPE_CHECKING` block importing the same names, so type checkers see real types.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def load(package: str, exports: Mapping[str, str], name: str) -> Any:
    """The object `name` of `package`'s face (a module path naming `name` itself is returned
    as the module), cached in the package so the next lookup skips `__getattr__`."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if module.endswith(f".{name}") else getattr(imported, name)
    setattr(sys.modules[package], name, value)
    return value
