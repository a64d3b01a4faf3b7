"""Old module paths of the 0.1 layout, kept importable for one release (issue 14).

The runtime was regrouped into concept packages (`kubeinformers.runtime.cache`, `.reflector`,
`.workqueue`, ...) and the local API server's parts into `kubeinformers.testing.apiserver`.
A finder on `sys.meta_path` answers each old path with the module at its new path (the same
module object, so patches and isinstance checks see one module) and warns once per path with
a DeprecationWarning naming the new home. Public names are best imported from `kubeinformers`.

Renamed names (two that clashed with others) work the same way: the module's `__getattr__`
calls `renamed_attribute`, which warns and answers with the new name's object.

Three old modules are packages now and need no alias: `runtime.labels`, `runtime.reflector`
and `runtime.workqueue` re-export what the old modules exported.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

# old path -> new path, both relative to `kubeinformers.`
MOVED: dict[str, str] = {
    "runtime.backoff": "runtime.reflector.backoff",
    "runtime.controller": "runtime.cache.controller",
    "runtime.controller_runner": "runtime.reconcile",
    "runtime.delta_fifo": "runtime.cache.delta_fifo",
    "runtime.dynamic": "runtime.cache.dynamic",
    "runtime.errors": "runtime.api.errors",
    "runtime.factory": "runtime.cache.factory",
    "runtime.handlers": "runtime.cache.handlers",
    "runtime.informer": "runtime.cache.informer",
    "runtime.keys": "runtime.cache.keys",
    "runtime.label_parser": "runtime.labels.parser",
    "runtime.lazy": "runtime.codec",
    "runtime.listers": "runtime.cache.listers",
    "runtime.listwatch": "runtime.api.listwatch",
    "runtime.model": "runtime.api.model",
    "runtime.pager": "runtime.client.pager",
    "runtime.processor": "runtime.cache.processor",
    "runtime.rate_limiters": "runtime.workqueue.rate_limiters",
    "runtime.real_fifo": "runtime.cache.real_fifo",
    "runtime.reflector_initial": "runtime.reflector.watch_list",
    "runtime.reflector_support": "runtime.reflector.support",
    "runtime.resource": "runtime.api.resource",
    "runtime.store": "runtime.cache.store",
    "runtime.timestamps": "runtime.api.timestamps",
    "runtime.transforms": "runtime.cache.transforms",
    "runtime.transport": "runtime.client.transport",
    "runtime.watch_handler": "runtime.reflector.watch",
    "runtime.wire": "runtime.codec.wire",
    "runtime.workqueue_metrics": "runtime.workqueue.metrics",
    "testing._server_api": "testing.apiserver.api",
    "testing._server_errors": "testing.apiserver.errors",
    "testing._server_http": "testing.apiserver.http",
    "testing._server_objects": "testing.apiserver.objects",
    "testing._server_registry": "testing.apiserver.registry",
    "testing._server_render": "testing.apiserver.render",
    "testing._server_schema": "testing.apiserver.schema",
    "testing._server_selectors": "testing.apiserver.selectors",
    "testing._server_state": "testing.apiserver.state",
    "testing._server_store": "testing.apiserver.store",
    "testing._server_tls": "testing.apiserver.tls",
    "testing._server_watch_stream": "testing.apiserver.watch_stream",
    "testing._server_write": "testing.apiserver.write",
}

# (module, old name) -> new name; module relative to `kubeinformers.`
RENAMED: dict[tuple[str, str], str] = {
    # the reconcile loop, not client-go's cache.Controller (runtime.cache.controller)
    ("runtime.reconcile", "Controller"): "ReconcileLoop",
    # a one-namespace view, not the generated lister of Namespace objects
    ("runtime.cache.listers", "NamespaceLister"): "SingleNamespaceLister",
}

_PREFIX = "kubeinformers."

TYPE_CHECKING = False  # typing is not imported at run time: `import kubeinformers` stays cheap
if TYPE_CHECKING:
    from typing import Any


class _MovedModuleLoader:
    # Duck-typed importlib.abc.Loader (importing importlib.abc costs ~7 ms).

    """Loads an old path as the module at its new path (no copy: the same object)."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new_name}; the old path will be removed in the next "
            "release (public names: import them from kubeinformers)",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.new_name)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set `__spec__` to the old path's spec: give the module its own back.
        module.__spec__ = self._spec


class _MovedModuleFinder:
    """A meta-path finder for the old paths only (importlib.abc is not imported: it costs
    ~7 ms, more than the rest of `import kubeinformers`)."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        new = MOVED.get(fullname[len(_PREFIX) :])
        if new is None:
            return None
        loader = _MovedModuleLoader(_PREFIX + new)
        return importlib.machinery.ModuleSpec(fullname, loader)  # type: ignore[arg-type]


def install() -> None:
    """Put the finder on `sys.meta_path` once (kubeinformers/__init__ calls this)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def renamed_attribute(module_name: str, name: str) -> Any:
    """A module `__getattr__`'s answer for `name`: the renamed object, with a warning."""
    new = RENAMED.get((module_name.removeprefix(_PREFIX), name))
    if new is None:
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    warnings.warn(
        f"{module_name}.{name} is now {new}; the old name will be removed in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(sys.modules[module_name], new)
