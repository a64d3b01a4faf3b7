"""The test CRDs both servers are driven with: widgets.example.com (LocalApiServer's CRUD
tests and the differential check against the real server) and things.structural.example.com
(what a server stores of a custom resource: pruning and defaulting)."""

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


_STRUCTURAL_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.structural.example.com"},
    "spec": {
        "group": "structural.example.com",
        "scope": "Namespaced",
        "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
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
                                "properties": {
                                    "replicas": {"type": "integer", "default": 1},
                                    "mode": {"type": "string", "default": "fast"},
                                    "nullable": {
                                        "type": "string",
                                        "nullable": True,
                                        "default": "n",
                                    },
                                    "plain": {"type": "string"},
                                    "nested": {
                                        "type": "object",
                                        "default": {},
                                        "properties": {
                                            "inner": {"type": "string", "default": "x"},
                                            "other": {"type": "integer"},
                                        },
                                    },
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer"},
                                            },
                                        },
                                    },
                                    "tags": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    },
                                    "absentParent": {
                                        "type": "object",
                                        "properties": {"inner": {"type": "string", "default": "y"}},
                                    },
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "name": {"type": "string"},
                                                "weight": {"type": "integer", "default": 5},
                                            },
                                        },
                                    },
                                    "byName": {
                                        "type": "object",
                                        "additionalProperties": {
                                            "type": "object",
                                            "properties": {
                                                "v": {"type": "string", "default": "dv"}
                                            },
                                        },
                                    },
                                    "free": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                    "embedded": {
                                        "type": "object",
                                        "x-kubernetes-embedded-resource": True,
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                    "embeddedShaped": {
                                        "type": "object",
                                        "x-kubernetes-embedded-resource": True,
                                        "properties": {
                                            "spec": {
                                                "type": "object",
                                                "properties": {
                                                    "a": {"type": "string", "default": "A"}
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "phase": {"type": "string", "default": "New"},
                                    "conditions": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["type"],
                                        "items": {
                                            "type": "object",
                                            "required": ["type"],
                                            "properties": {
                                                "type": {"type": "string"},
                                                "status": {"type": "string"},
                                            },
                                        },
                                    },
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def structural_crd() -> dict[str, Any]:
    """A CRD whose schema defaults (in objects, list items, map values), allows a null,
    preserves unknown fields, embeds resources and has lists merged by key (`spec.ports`,
    `status.conditions`) and by value (`spec.tags`) (a copy)."""
    return copy.deepcopy(_STRUCTURAL_CRD)
