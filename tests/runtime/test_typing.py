"""mypy makes users handle tombstones: wrong variants of tests/typing/usage_informer.py fail."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

REPO = Path(__file__).resolve().parents[2]
USAGE = REPO / "tests" / "typing" / "usage_informer.py"

GOOD_DELETE_FUNC = "def on_delete(obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:"
GOOD_DELETE_METHOD = """    def on_delete(self, obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:
        on_delete(obj)"""


def run_mypy(path: Path) -> tuple[int, str]:
    stdout, stderr, status = mypy_api.run(
        ["--config-file", str(REPO / "pyproject.toml"), "--no-error-summary", str(path)]
    )
    return status, stdout + stderr


def variant(tmp_path: Path, old: str, new: str) -> Path:
    text = USAGE.read_text()
    assert old in text, "the usage file changed; update this test's replacement"
    out = tmp_path / "usage_variant.py"
    out.write_text(text.replace(old, new))
    return out


def test_usage_file_is_mypy_strict_clean() -> None:
    status, output = run_mypy(USAGE)
    assert status == 0, output


def test_on_delete_typed_as_model_only_is_rejected(tmp_path: Path) -> None:
    path = variant(tmp_path, GOOD_DELETE_FUNC, "def on_delete(obj: Pod) -> None:")
    status, output = run_mypy(path)
    assert status == 1, output
    assert 'Argument "on_delete" to "add_event_handler"' in output, output
    assert "DeletedFinalStateUnknown[Pod]" in output


def test_handler_object_whose_on_delete_takes_only_the_model_is_rejected(tmp_path: Path) -> None:
    path = variant(
        tmp_path,
        GOOD_DELETE_METHOD,
        "    def on_delete(self, obj: Pod) -> None:\n        print(obj)",
    )
    status, output = run_mypy(path)
    assert status == 1, output
    assert '"PodHandler"' in output and "on_delete" in output, output


def test_on_delete_using_metadata_without_checking_for_a_tombstone_is_rejected(
    tmp_path: Path,
) -> None:
    body = (
        GOOD_DELETE_FUNC
        + "\n    print(obj.metadata)\n\n\ndef _previous_on_delete(obj: Pod | DeletedFinalStateUnknown[Pod]) -> None:"
    )
    path = variant(tmp_path, GOOD_DELETE_FUNC, body)
    status, output = run_mypy(path)
    assert status == 1, output
    assert (
        'DeletedFinalStateUnknown[Pod]" of "Pod | DeletedFinalStateUnknown[Pod]" has no attribute "metadata"'
        in output
    ), output
