"""`make bench`'s generator section (bench/generator.py) runs and reports issue 15's targets.

Performance itself is never asserted here (it is what `make bench` prints); this checks the
section measures what it says: a generated package, the kind with the biggest model module,
its import in a fresh interpreter, and the targets beside the figures.
"""

from __future__ import annotations

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
    assert imp["kind"] == "bench_t.embed.v1.Job"
    assert imp["import_s"] > 0 and imp["first_validate_s"] > 0


def test_section_prints_the_targets_beside_the_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_generator, "RESULTS", tmp_path)
    crd = GOLDEN / "reserved.example.com_fields.yaml"
    assert bench_generator.main(["--crd", str(crd), "--largest", "0", "--no-corpus"]) == 0
    out = capsys.readouterr().out
    assert "reserved.example.com_fields.yaml" in out
    assert "import of one kind <= 0.5 s" in out and "generation <= 15 s" in out
    assert len(list(tmp_path.glob("*-generator.json"))) == 1
