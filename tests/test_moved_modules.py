"""Old module paths (the 0.1 flat layout) still import for one release, with a warning.

Each old path answers with the module now at its new path — the same object, so a patch
through either name is seen through both — and warns with a DeprecationWarning naming the
new home (issue 14).
"""

from __future__ import annotations

import importlib
import sys

import pytest

from kubeinformers._moved import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_module_path_imports_the_new_module_with_a_deprecation_warning(
    old: str, new: str
) -> None:
    old_name, new_name = f"kubeinformers.{old}", f"kubeinformers.{new}"
    sys.modules.pop(old_name, None)
    with pytest.warns(DeprecationWarning, match=f"{old_name} moved to {new_name}"):
        module = importlib.import_module(old_name)
    assert module is importlib.import_module(new_name)
    assert module.__spec__ is not None and module.__spec__.name == new_name


def test_old_modules_that_became_packages_still_export_their_names() -> None:
    from kubeinformers.runtime.labels import parse, to_selector
    from kubeinformers.runtime.reflector import Reflector, error_from_status
    from kubeinformers.runtime.workqueue import FakeClock, RateLimitingQueue, set_provider

    assert parse("a=b").matches({"a": "b"}) and to_selector(None).empty()
    assert callable(error_from_status) and callable(set_provider)
    assert Reflector.__module__ == "kubeinformers.runtime.reflector.reflector"
    assert RateLimitingQueue.__module__ == "kubeinformers.runtime.workqueue.queue"
    assert FakeClock.__module__ == "kubeinformers.runtime.clock"


def test_an_unknown_old_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kubeinformers.runtime.no_such_module")
