"""What apply configurations cost a user (M8): import time and cold mypy --strict time.

    python -m bench.apply_configurations [--rounds 3]

Each measurement runs in a fresh process, the two contenders alternated within a round
(forward, then reversed), median of the rounds with [min-max]; mypy is timed in CPU seconds
(user + system of the child), which a loaded machine disturbs less than wall time.

- import: `DeploymentApply` and a CRD kind's `WidgetApply` against the `Deployment` and
  `Widget` models they return (a client imports the model when the answer arrives);
- mypy: a file applying a Deployment, a ConfigMap and a Widget, written once with apply
  configurations and once with the models, each checked with an empty cache.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

IMPORTS = {
    "DeploymentApply": "from kubeinformers.generated.apps.v1.apply import DeploymentApply",
    "Deployment model": "from kubeinformers.generated.apps.v1.models import Deployment",
    "WidgetApply": "from examples.informers.demo.v1.apply.widget import WidgetApply",
    "Widget model": "from examples.informers.demo.v1.widget import Widget",
}

USER_FILES = {
    "configurations": """
        from examples.informers.demo.v1.apply.widget import WidgetApply
        from kubeinformers.generated.apps.v1.apply import DeploymentApply
        from kubeinformers.generated.core.v1.apply import ConfigMapApply
        from kubeinformers import Client


        def use(client: Client) -> None:
            client.apply(WidgetApply(metadata={"name": "w", "namespace": "d"}, spec={"replicas": 2}))
            client.apply(
                DeploymentApply(metadata={"name": "web", "namespace": "d"}, spec={"replicas": 3})
            )
            client.apply(ConfigMapApply(metadata={"name": "c", "namespace": "d"}, data={"a": "b"}))
        """,
    "models": """
        from examples.informers.demo.v1.widget import Widget, WidgetSpec
        from kubeinformers.generated.apps.v1 import Deployment
        from kubeinformers.generated.core.v1 import ConfigMap
        from kubeinformers.generated.meta.v1 import ObjectMeta
        from kubeinformers import Client


        def use(client: Client) -> None:
            meta = ObjectMeta(name="w", namespace="d")
            client.apply(Widget(metadata=meta, spec=WidgetSpec(size="small", replicas=2)))
            client.get(Deployment, "web", namespace="d")
            client.apply(ConfigMap(metadata=meta, data={"a": "b"}))
        """,
}


def _import_seconds(statement: str) -> float:
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip())


def _mypy_cpu_seconds(source: str, folder: Path) -> float:
    user = folder / "user_file.py"
    user.write_text(textwrap.dedent(source).lstrip())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(folder / "cache"),
            str(user),
        ],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _summary(values: list[float], unit: str, scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return f"{statistics.median(v):.3f} {unit} [{min(v):.3f}-{max(v):.3f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    imports: dict[str, list[float]] = {name: [] for name in IMPORTS}
    mypy: dict[str, list[float]] = {name: [] for name in USER_FILES}
    for round_ in range(args.rounds):
        order = list(IMPORTS) if round_ % 2 == 0 else list(reversed(IMPORTS))
        for name in order:
            imports[name].append(_import_seconds(IMPORTS[name]))
        names = list(USER_FILES) if round_ % 2 == 0 else list(reversed(USER_FILES))
        for name in names:
            with tempfile.TemporaryDirectory() as folder:
                mypy[name].append(_mypy_cpu_seconds(USER_FILES[name], Path(folder)))
    print(f"apply configurations, {args.rounds} rounds, fresh processes, median [min-max]")
    for name, values in imports.items():
        print(f"  import {name:<18} {_summary(values, 'ms', 1000)}")
    for name, values in mypy.items():
        print(f"  mypy --strict, cold, 3 kinds with {name:<14} {_summary(values, 's CPU')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
