"""The test CRD both servers are driven with: widgets.example.com (LocalApiServer's CRUD
tests and the differential check against the real server)."""

from __future__ import annotations

import copy
from typing import Any

_WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1},
                                    "color": {"type": "string", "enum": ["red", "blue"]},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"phase": {"type": "string"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget_crd(*, with_v1beta1: bool = False) -> dict[str, Any]:
    """A fresh copy of the CRD: v1 (a schema with a required, bounded spec.size and an enum
    spec.color, a status subresource), and with `with_v1beta1` a second, schemaless served
    version."""
    crd = copy.deepcopy(_WIDGET_CRD)
    if with_v1beta1:
        crd["spec"]["versions"].append(
            {
                "name": "v1beta1",
                "served": True,
                "storage": False,
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }
        )
    return crd
