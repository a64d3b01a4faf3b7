"""M18: field ownership as kube-apiserver keeps it (`testing.apiserver.ownership`), by itself."""

from __future__ import annotations

from typing import Any

from kubeinformers.testing.apiserver import ownership


def _cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}


def _apply(live: dict[str, Any], manager: str, now: str, **data: str) -> dict[str, Any]:
    out, managed = ownership.apply(live, _cm(**data), manager, False, "v1", now, "", False)
    out["metadata"]["managedFields"] = managed
    return out


def test_m18_entries_sort_by_operation_then_the_second_of_their_time_then_manager() -> None:
    live = _apply({"metadata": {"name": "c"}}, "z", "2026-01-01T00:00:01Z", a="1")
    live = _apply(live, "b", "2026-01-01T00:00:02Z", b="1")  # a later second: after z
    live = _apply(live, "a", "2026-01-01T00:00:02Z", c="1")  # the same second: by name
    live["metadata"]["managedFields"] = ownership.updated(
        live,
        dict(live, data=dict(live["data"], d="1")),
        "e",
        "v1",
        "2026-01-01T00:00:00Z",
        "",
        False,
    )
    entries = [(e["manager"], e["operation"]) for e in live["metadata"]["managedFields"]]
    assert entries == [("z", "Apply"), ("a", "Apply"), ("b", "Apply"), ("e", "Update")]


def test_m18_an_apply_that_changes_no_value_has_no_time_and_comes_first() -> None:
    live = _apply({"metadata": {"name": "c"}}, "a", "2026-01-01T00:00:01Z", k="1")
    live = _apply(live, "b", "2026-01-01T00:00:05Z", k="1")  # the same value: shared
    first, second = live["metadata"]["managedFields"]
    assert (first["manager"], "time" in first) == ("b", False)
    assert (second["manager"], second["time"]) == ("a", "2026-01-01T00:00:01Z")
    assert first["fieldsV1"] == second["fieldsV1"] == {"f:data": {"f:k": {}}}


_PORTS = {
    "properties": {
        "spec": {
            "properties": {
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"properties": {"name": {}, "port": {}}},
                }
            }
        }
    }
}


def test_m18_an_item_no_longer_applied_goes_whole_and_one_another_manager_holds_keeps_its_key() -> (
    None
):
    def thing(*ports: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "x/v1",
            "kind": "T",
            "metadata": {"name": "t"},
            "spec": {"ports": list(ports)},
        }

    def apply(live: dict[str, Any], manager: str, config: dict[str, Any]) -> dict[str, Any]:
        out, managed = ownership.apply(
            live, config, manager, False, "x/v1", "2026-01-01T00:00:01Z", "", False, _PORTS
        )
        out["metadata"]["managedFields"] = managed
        return out

    http, metrics = {"name": "http", "port": 80}, {"name": "metrics", "port": 9090}
    live = apply({"metadata": {"name": "t"}}, "a", thing(http, metrics))
    assert apply(live, "a", thing(metrics))["spec"]["ports"] == [metrics]  # http gone whole
    # b also sets http's port (the same value): http stays, with its key, when a drops it.
    shared = apply(live, "b", thing({"name": "http", "port": 80}))
    assert apply(shared, "a", thing(metrics))["spec"]["ports"] == [http, metrics]
