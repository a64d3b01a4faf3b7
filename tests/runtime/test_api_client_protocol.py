"""H15: the runtime names the kubernetes ApiClient through a Protocol, so type-checking a
program that uses kubeinformers does not analyse the kubernetes package, and a real
`kubernetes.client.ApiClient` is still what the factories and the lease lock accept."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.generator.genutil import REPO, mypy_rejects_each

PYPROJECT = REPO / "pyproject.toml"

USER_FILE = """\
from __future__ import annotations

from kubeinformers import LeaseLock, LeaderElector, SharedIndexInformer
from kubeinformers.generated.core.v1 import Pod
from kubeinformers.generated.informers import SharedInformerFactory


def pods(factory: SharedInformerFactory) -> list[str]:
    informer: SharedIndexInformer[Pod] = factory.core().v1().pods().informer()
    factory.start()
    return [p.metadata.name or "" for p in informer.get_store().list() if p.metadata]


def lock(factory: SharedInformerFactory) -> LeaseLock:
    return LeaseLock(factory.api_client, "default", "me", identity="me")


__all__ = ["LeaderElector", "lock", "pods"]
"""


def test_h14_type_checking_code_using_kubeinformers_does_not_analyse_kubernetes(
    tmp_path: Path,
) -> None:
    """H15: a cold mypy --strict run over a file that builds a factory, an informer and a
    lease lock parses no module of the kubernetes package."""
    usage = tmp_path / "uses_kubeinformers.py"
    usage.write_text(USER_FILE)
    config = ["--config-file", str(PYPROJECT), "--cache-dir", str(tmp_path / "mypy-cache")]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "-v", *config, str(usage)],
        cwd=tmp_path,
        env=dict(os.environ, MYPYPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    # -v logs "Parsing <file> (<module>)" for every module the run reads.
    parsed = set(re.findall(r"Parsing \S+ \(([\w.]+)\)", done.stderr))
    assert "kubeinformers.runtime.cache.factory" in parsed, done.stderr[-2000:]
    assert "kubeinformers.runtime.leaderelection.elector" in parsed
    assert not sorted(m for m in parsed if m.split(".")[0] == "kubernetes")


HEADER = """\
from __future__ import annotations

from kubernetes.client import ApiClient, Configuration, CoreV1Api

from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.runtime.cache.dynamic import DynamicSharedInformerFactory
from kubeinformers.runtime.leaderelection.elector import LeaseLock


def accepted(api: ApiClient) -> None:
    SharedInformerFactory(api)
    DynamicSharedInformerFactory(api)
    LeaseLock(api, "default", "lock", identity="me")
"""


def test_h14_a_kubernetes_api_client_is_accepted_structurally_and_other_objects_are_not(
    tmp_path: Path,
) -> None:
    """H15: `kubernetes.client.ApiClient` satisfies the runtime's ApiClient Protocol; an API
    group's class or a Configuration passed in its place is a type error."""
    expected = 'expected "ApiClient"'
    mypy_rejects_each(
        tmp_path / "api_client_usage.py",
        HEADER,
        {
            "typed_api": ("SharedInformerFactory(CoreV1Api())", expected),
            "configuration": ("DynamicSharedInformerFactory(Configuration())", expected),
        },
        "",
    )


def test_h14_lease_lock_wraps_an_api_client_and_names_anything_else() -> None:
    """H15: LeaseLock wraps a kubernetes ApiClient in CoordinationV1Api (a LeaseApi is used as
    it is: the tests' FakeLeaseApi), and refuses anything else at once, naming the lock and
    what it expected, instead of talking to the default configuration's server."""
    from kubernetes.client import ApiClient, Configuration, CoordinationV1Api

    from kubeinformers.runtime.leaderelection.elector import LeaseLock

    configuration = Configuration()
    configuration.host = "https://127.0.0.1:1"
    api_client = ApiClient(configuration)
    try:
        wrapped: object = LeaseLock(api_client, "default", "lock", "me")._api
        assert isinstance(wrapped, CoordinationV1Api)
        # N22: a copy of the client whose Lease requests urllib3 sends once.
        assert wrapped.api_client.configuration.host == configuration.host
        assert wrapped.api_client.configuration.retries is False
        assert configuration.retries is None  # the user's client is left as it was
    finally:
        api_client.close()  # type: ignore[no-untyped-call]
    with pytest.raises(TypeError, match=r"LeaseLock default/lock: api must be .* not object"):
        LeaseLock(object(), "default", "lock", "me")  # type: ignore[arg-type]
