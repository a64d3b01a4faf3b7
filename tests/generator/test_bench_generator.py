"""`make bench`'s generator section (bench/generator.py) runs and reports issue 15's and
issue 30's targets.

Performance itself is never asserted here (it is what `make bench` prints); this checks the
section measures what it says: a generated package, the kind with the biggest model module,
its import in a fresh interpreter, and the targets beside the figures.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import generator as bench_generator
from tests.generator.genutil import GOLDEN


def test_section_times_generation_and_the_import_of_the_biggest_kind(tmp_path: Path) -> None:
    crd = GOLDEN / "embed.example.com_jobs.yaml"
    gen = bench_generator.generate([crd], tmp_path, "bench_t")
    assert gen["seconds"] > 0 and gen["files"] >= 5 and gen["classes"] >= 4
    imp = bench_generator.import_time(tmp_path, "bench_t", runs=1)
    assert imp is not None
    assert imp["kind"] == "bench_t.embed.v1.job.Job"
    assert imp["import_s"] > 0 and imp["first_validate_s"] > 0


def test_section_prints_the_targets_beside_the_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_generator, "RESULTS", tmp_path)
    crd = GOLDEN / "reserved.example.com_fields.yaml"
    argv = ["--crd", str(crd), "--largest", "0", "--no-corpus", "--no-providers"]
    assert bench_generator.main(argv) == 0
    out = capsys.readouterr().out
    assert "reserved.example.com_fields.yaml" in out
    assert "import of one kind <= 0.5 s" in out and "generation <= 15 s" in out
    assert len(list(tmp_path.glob("*-generator.json"))) == 1


def test_provider_rows_measure_generation_rerun_mypy_and_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30's section, on a stand-in provider (the golden CRDs): every row beside its
    target, and the re-run rewrote nothing (H13)."""
    monkeypatch.setattr(bench_generator, "RESULTS", tmp_path / "results")
    provider = tmp_path / "providers" / "golden" / "package" / "crds"
    shutil.copytree(GOLDEN, provider)
    argv = ["--largest", "0", "--no-corpus", "--provider", str(provider)]
    assert bench_generator.main(argv) == 0
    out = capsys.readouterr().out
    assert "provider golden (13 CRD files" in out
    for row in ("generate", "peak RSS", "re-run, unchanged input", "mypy --strict, 3 kinds"):
        assert row in out
    assert "0 rewritten" in out and "<= 60 s" in out and "<= 15 s" in out
    (result,) = (tmp_path / "results").glob("*-generator.json")
    (row,) = json.loads(result.read_text())["providers"]
    assert row["rerun"]["rewritten"] == 0 and row["mypy"]["ok"], row["mypy"]["output"]
    assert row["generate"]["rss_mb"] > 10 and row["generate"]["cpu_s"] > 0


def test_without_a_provider_the_section_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_generator, "RESULTS", tmp_path)
    monkeypatch.setattr(bench_generator, "PROVIDERS", tmp_path / "absent")
    crd = GOLDEN / "reserved.example.com_fields.yaml"
    assert bench_generator.main(["--crd", str(crd), "--largest", "0", "--no-corpus"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("provider")]
    assert lines == [
        f"providers: none at {tmp_path / 'absent'}/*/package/crds (and no --provider): skipped"
    ]
