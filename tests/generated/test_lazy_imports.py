"""Model modules are imported on first use: `import kubeinformers.generated` and walking the
accessors stay cheap, and asking for one kind's informer loads only its group-version's
models (and meta/v1).

Each check runs in a fresh interpreter so that nothing imported by other tests counts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
def loaded():
    return sorted(m for m in sys.modules if m.startswith("kubeinformers.generated"))
steps = {}
import kubeinformers.generated
steps["import"] = loaded()
from kubeinformers.generated.informers import SharedInformerFactory
from kubernetes.client import ApiClient
version = SharedInformerFactory(ApiClient()).apps().v1()
steps["accessors"] = loaded()
deployments = version.deployments()
steps["accessor"] = loaded()
deployments.informer()
steps["kind"] = loaded()
from kubeinformers.generated.core.v1 import Pod
steps["model"] = loaded()
print(json.dumps(steps))
"""


def _steps() -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def test_models_are_imported_only_when_a_kind_is_used() -> None:
    steps = _steps()
    assert steps["import"] == ["kubeinformers.generated"]
    assert not [m for m in steps["accessors"] if m.endswith((".models", ".listers"))]
    # the factory and the accessors of the one group and version asked for (H12: in
    # `informers` modules, never in a package `__init__`)
    assert [m for m in steps["accessors"] if m.endswith(".informers")] == [
        "kubeinformers.generated.apps.informers",
        "kubeinformers.generated.apps.v1.informers",
        "kubeinformers.generated.informers",
    ]
    # a kind's informer class names its model for the type checker only: no model module yet
    assert not [m for m in steps["accessor"] if m.endswith(".models")]
    kind_models = {m for m in steps["kind"] if m.endswith(".models")}
    assert kind_models == {
        "kubeinformers.generated.apps.v1.models",
        "kubeinformers.generated.core.v1.models",  # the pod template of a Deployment
        "kubeinformers.generated.meta.v1.models",
    }
    new_for_pod = set(steps["model"]) - set(steps["kind"])
    assert not [m for m in new_for_pod if m.endswith(".models")]  # core/v1 was loaded already
    assert not [m for m in steps["model"] if ".batch." in m or ".storage." in m]


def test_h12_a_name_a_group_version_does_not_export_is_a_mypy_error(tmp_path: Path) -> None:
    """H12: a group-version package imports its names on first use through a module
    `__getattr__` that only the interpreter sees, so mypy checks every import from it: the
    models and the explicit re-exports type-check, a name that is not there (the accessor
    class lives in `.informers`) is an error rather than a silent `Any`."""
    from tests.generator.genutil import mypy_errors

    usage = tmp_path / "gv_imports.py"
    usage.write_text(
        "from kubeinformers.generated.core.v1 import Pod, PodInformer, PodLister\n"
        "from kubeinformers.generated.core.v1 import CoreV1Informers\n"
        "from kubeinformers.generated.core.v1.informers import CoreV1Informers as Accessors\n"
    )
    errors = mypy_errors(usage)
    assert len(errors) == 1 and "CoreV1Informers" in errors[0] and ":2:" in errors[0], errors
