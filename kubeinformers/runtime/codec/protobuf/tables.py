"""Finding a built-in kind's protobuf schema: the generated table a `ProtobufKind` names.

The table is generated code (`kubeinformers.generated.protobuf_schema` for the built-ins this
package ships; a user's own generated package may carry its own). The runtime never imports
generated code by name; it imports the module the resource description names, once, when the
first informer of such a kind starts.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from typing import Any

from kubeinformers.runtime.api.resource import ProtobufKind

__all__ = ["ProtobufSchemaError", "messages_for", "table_version"]

_lock = threading.Lock()
_loaded: dict[str, Mapping[str, Any]] = {}
_versions: dict[str, tuple[int, int] | None] = {}


class ProtobufSchemaError(LookupError):
    """A resource names a protobuf schema that cannot be found (a broken generated package)."""


def messages_for(kind: ProtobufKind) -> Mapping[str, Any]:
    """The `MESSAGES` table that describes `kind.message` (imported once per module)."""
    with _lock:
        messages = _loaded.get(kind.schema_module)
        if messages is None:
            try:
                module = importlib.import_module(kind.schema_module)
            except ImportError as exc:
                raise ProtobufSchemaError(
                    f"cannot import the protobuf schema module {kind.schema_module!r} of "
                    f'{kind.message}: {exc}; regenerate the package, or use wire_format="json"'
                ) from exc
            messages = getattr(module, "MESSAGES", None)
            if not isinstance(messages, Mapping):
                raise ProtobufSchemaError(
                    f"{kind.schema_module} has no MESSAGES table; regenerate the package, or use "
                    'wire_format="json"'
                )
            _loaded[kind.schema_module] = messages
            version = getattr(module, "KUBERNETES_VERSION", None)
            _versions[kind.schema_module] = (
                version
                if isinstance(version, tuple)
                and len(version) == 2
                and all(type(n) is int for n in version)
                else None
            )
    if kind.message not in messages:
        raise ProtobufSchemaError(
            f"{kind.schema_module}.MESSAGES does not describe {kind.message}; regenerate the "
            'package, or use wire_format="json"'
        )
    return messages


def table_version(kind: ProtobufKind) -> tuple[int, int] | None:
    """The Kubernetes release (1, 36) whose API the table of `kind` describes; None when its
    module does not say (generated before tables said so)."""
    messages_for(kind)
    with _lock:
        return _versions.get(kind.schema_module)
