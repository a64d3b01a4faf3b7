"""Inputs a run must refuse or rename openly, never turn into a broken package: a file that is
not UTF-8 (H17), two CRDs of one kind (H18), two plurals that map to one kind accessor (H19), a
truncated JSON file (H32); a swagger.json and v3 documents of one API are no conflict (H33).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tests.generator.genutil import generate_ok, importable, run_generator

EXIT_INPUT_FAILED = 1


def crd(name: str, group: str, kind: str, plural: str) -> str:
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {name}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: {kind}, plural: {plural}}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {{type: object, properties: {{spec: {{type: object}}}}}}
"""


def test_h17_a_file_that_is_not_utf8_is_an_error_naming_it_and_the_rest_is_generated(
    tmp_path: Path,
) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "good.yaml").write_text(crd("cs.e.example.com", "e.example.com", "C", "cs"))
    latin1 = crds / "latin1-configmap.yaml"
    latin1.write_bytes(
        b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: "caf\xe9"}\n'
    )
    out = tmp_path / "gen"
    run = run_generator("--keep-going", "--crd", crds, "--out", out, "--package", "gen")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    assert f"error: {latin1} at line 4: not UTF-8 text (byte 0xe9" in run.stderr
    assert "cannot read the inputs" not in run.stderr
    assert (out / "e" / "v1" / "c.py").is_file()
    # without --keep-going: the same error, nothing written
    run = run_generator("--crd", crds, "--out", tmp_path / "none", "--package", "none")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    assert f"error: {latin1} at line 4: not UTF-8" in run.stderr
    assert not (tmp_path / "none").exists()


def test_h18_two_crds_of_one_kind_are_an_error_naming_both_and_neither_is_generated(
    tmp_path: Path,
) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "cs.yaml").write_text(crd("cs.e.example.com", "e.example.com", "C", "cs"))
    (crds / "ds.yaml").write_text(crd("ds.e.example.com", "e.example.com", "C", "ds"))
    (crds / "other.yaml").write_text(crd("bs.e.example.com", "e.example.com", "B", "bs"))
    out = tmp_path / "gen"
    run = run_generator("--crd", crds, "--out", out, "--package", "gen")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    both = (
        f"CRD cs.e.example.com in {crds / 'cs.yaml'} (document 0) and CRD ds.e.example.com in "
        f"{crds / 'ds.yaml'} (document 0)"
    )
    assert errors == [
        f"error: {crds / name} (document 0) at spec.names.kind: kind C of group e.example.com "
        f"is declared by {both}; a server accepts only one of them (the other is refused: "
        "NamesAccepted=False), so neither is generated; give each CRD its own kind, or leave "
        "one out"
        for name in ("cs.yaml", "ds.yaml")
    ]
    assert not out.exists()
    # --keep-going: the other kind is generated, and the package holds no half of kind C
    run = run_generator("--keep-going", "--crd", crds, "--out", out, "--package", "gen")
    assert run.returncode == EXIT_INPUT_FAILED, run.output
    assert not (out / "e" / "v1" / "c.py").exists()
    with importable(tmp_path, "gen"):
        accessors = importlib.import_module("gen.e.v1.informers").EV1Informers
        assert hasattr(accessors, "bs")
        assert not hasattr(accessors, "cs") and not hasattr(accessors, "ds")
        importlib.import_module("gen.e.v1.listers")


def test_h19_a_new_kind_never_renames_another_kinds_classes_or_takes_its_accessor(
    tmp_path: Path,
) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "b.yaml").write_text(
        crd("dnsrecords.pl.example.com", "pl.example.com", "DNSRecord", "dnsrecords")
    )
    generate_ok(tmp_path, "gen", "--crd", crds)
    # the new kind's file sorts first: the input order must not matter
    (crds / "a.yaml").write_text(
        crd("dns-records.pl.example.com", "pl.example.com", "DnsEntry", "dns-records")
    )
    run = generate_ok(tmp_path, "gen", "--crd", crds)
    assert (
        "note: pl.example.com/v1: kinds DNSRecord (plural dnsrecords) and DnsEntry (plural "
        "dns-records) both map to accessor dns_records(); DNSRecord keeps it, DnsEntry's is "
        "dns_records2()"
    ) in run.stderr
    with importable(tmp_path, "gen"):
        record = importlib.import_module("gen.pl.v1.dns_record")
        entry = importlib.import_module("gen.pl.v1.dns_entry")
        informers = importlib.import_module("gen.pl.v1.informers")
        assert record.DNSRecordLister and entry.DnsEntryLister
        assert informers.DNSRecordInformer and informers.DnsEntryInformer
        accessors = informers.PlV1Informers
        assert accessors.dns_records.__annotations__["return"] in {
            "DNSRecordInformer",
            informers.DNSRecordInformer,
        }
        assert accessors.dns_records2.__annotations__["return"] in {
            "DnsEntryInformer",
            informers.DnsEntryInformer,
        }


def test_h32_a_truncated_json_document_is_called_truncated(tmp_path: Path) -> None:
    whole = (
        '{\n  "openapi": "3.0.0",\n  "info": {"title": "Kubernetes", "version": "unversioned"},\n'
        '  "paths": {},\n  "components": {"schemas": {"io.k8s.api.x.v1.Foo": {\n'
        '    "description": "a truncated description that never ends",\n'
        '    "type": "object"}}}\n}\n'
    )
    cut_in_a_string = tmp_path / "a.json"
    cut_in_a_string.write_text(whole[: whole.index("never ends")])
    cut_between_keys = tmp_path / "b.json"
    cut_between_keys.write_text(whole[: whole.index('"type"')])
    broken_inside = tmp_path / "c.json"
    broken_inside.write_text(whole.replace('"paths": {},', '"paths": {},,'))
    truncated = (
        "; the text ends before the JSON document does: the file looks truncated, copy or "
        "download it again"
    )
    for path, reason, cut in (
        (cut_in_a_string, "a string starts there and is never closed", truncated),
        (cut_between_keys, "Expecting property name enclosed in double quotes", truncated),
        (broken_inside, "Expecting property name enclosed in double quotes", ""),
    ):
        run = run_generator("--openapi", path, "--out", tmp_path / "o", "--package", "o")
        assert run.returncode == EXIT_INPUT_FAILED, run.output
        errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, run.stderr
        assert errors[0].startswith(f"error: {path} (document 0) at line "), errors[0]
        assert errors[0].endswith(f": not JSON: {reason}{cut}"), errors[0]
        assert "Traceback" not in run.stderr


def _foo_documents(v3_count_type: str) -> tuple[dict[str, object], dict[str, object]]:
    """One schema as a swagger.json and as a v3 document write it (the v3 one with a `$ref` in a
    one-item allOf beside its description, and defaults); its `count` typed `v3_count_type`."""
    v2: dict[str, object] = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": {},
        "definitions": {
            "io.k8s.api.x.v1.Bar": {"type": "object", "properties": {"a": {"type": "string"}}},
            "io.k8s.api.x.v1.Foo": {
                "type": "object",
                "properties": {
                    "bar": {"$ref": "#/definitions/io.k8s.api.x.v1.Bar", "description": "b"},
                    "count": {"type": "integer", "description": "n"},
                },
            },
        },
    }
    v3: dict[str, object] = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": {},
        "components": {
            "schemas": {
                "io.k8s.api.x.v1.Bar": {
                    "type": "object",
                    "properties": {"a": {"type": "string", "default": ""}},
                },
                "io.k8s.api.x.v1.Foo": {
                    "type": "object",
                    "properties": {
                        "bar": {
                            "allOf": [{"$ref": "#/components/schemas/io.k8s.api.x.v1.Bar"}],
                            "default": {},
                            "description": "b",
                        },
                        "count": {"type": v3_count_type, "default": 0, "description": "n"},
                    },
                },
            }
        },
    }
    return v2, v3


def test_h33_a_swagger_json_and_v3_documents_of_one_api_agree(tmp_path: Path) -> None:
    from kubeinformers.generator import schema
    from kubeinformers.generator.load import Source, openapi_from_document

    for count_type, conflicts in (("integer", False), ("string", True)):
        v2, v3 = _foo_documents(count_type)
        documents = [
            *openapi_from_document(v2, Source(str(tmp_path / "swagger.json"), 0)).documents,
            *openapi_from_document(v3, Source(str(tmp_path / "v3.json"), 0)).documents,
        ]
        prep = schema.Prepared()
        merged = schema.merge_documents(documents, prep)
        assert [str(e) for e in prep.errors] == (
            [
                f"{tmp_path / 'v3.json'} (document 0) at components.schemas.io.k8s.api.x.v1.Foo: "
                "differs from the schema of the same name in "
                f"{tmp_path / 'swagger.json'} (at properties.count.type: 'integer' in "
                f"{tmp_path / 'swagger.json'}, 'string' in this document); this document is "
                "left out — generate the rest with --keep-going, or choose groups with --group"
            ]
            if conflicts
            else []
        )
        assert sorted(merged) == ["io.k8s.api.x.v1.Bar", "io.k8s.api.x.v1.Foo"]
        if not conflicts:
            assert prep.notes == [
                "2 schema(s) are both in a swagger.json and in an OpenAPI v3 document, which "
                "agree on them but for how each format writes them ($refs, defaults, "
                "descriptions); the first document's copy is used"
            ]
