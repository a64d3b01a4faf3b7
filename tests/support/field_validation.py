"""A Widget patched under each `fieldValidation` mode (M16): the same flow on the real
kube-apiserver and on LocalApiServer."""

from __future__ import annotations

import logging

import pytest

from examples.informers.demo.v1.widget import Widget
from kubeinformers.runtime.api.errors import Invalid
from kubeinformers.runtime.client.typed import Client, FieldValidation


def said(caplog: pytest.LogCaptureFixture, field: str) -> list[logging.LogRecord]:
    """The client's log records of the server's warning about the unknown `field`."""
    return [
        r
        for r in caplog.records
        if r.name == "kubeinformers.client" and f'unknown field "{field}"' in r.getMessage()
    ]


def patch_under_each_mode(
    client: Client, created: Widget, caplog: pytest.LogCaptureFixture
) -> Widget:
    """Patch the Widget `created` with a misspelt spec field under each mode, inside the
    caller's `caplog.at_level(DEBUG)`: Strict is refused as kube-apiserver refuses a patch
    (Invalid, 422, its cause on `patch`) and writes nothing; Warn and None (the server's
    default) drop the field and its warning is logged once; Ignore drops it and nothing is
    said. Returns what the Ignore patch wrote."""
    meta = created.metadata
    assert meta is not None and meta.name is not None and meta.namespace is not None
    name, ns = meta.name, meta.namespace

    def patch(field: str, mode: FieldValidation | None) -> Widget:
        return client.patch(Widget, name, {"spec": {field: 3}}, namespace=ns, field_validation=mode)

    with pytest.raises(Invalid) as strict:
        patch("sizee", "Strict")
    assert 'strict decoding error: unknown field "spec.sizee"' in str(strict.value)
    assert [cause.field for cause in strict.value.causes] == ["patch"]
    unchanged = client.get(Widget, name, namespace=ns)
    assert unchanged.metadata is not None and unchanged.spec is not None
    assert unchanged.metadata.resource_version == meta.resource_version
    assert "sizee" not in (unchanged.spec.model_extra or {})
    assert not said(caplog, "spec.sizee")

    warned: list[tuple[str, FieldValidation | None]] = [("sizee", "Warn"), ("colr", None)]
    for field, mode in warned:
        written = patch(field, mode)
        assert written.spec is not None and field not in (written.spec.model_extra or {})
        (record,) = said(caplog, f"spec.{field}")
        assert record.levelno == logging.WARNING
        assert record.getMessage().startswith(
            f'patch widgets.demo.kubeinformers.io "{name}" in namespace "{ns}" at '
        )

    ignored = patch("sise", "Ignore")
    assert ignored.spec is not None and "sise" not in (ignored.spec.model_extra or {})
    assert not said(caplog, "spec.sise")
    return ignored
