"""pytest fixtures that give a test its own LocalApiServer, or a real kube-apiserver.

Opt-in, as envtest is: installing kubeinformers adds nothing to anyone's test sessions. A
suite turns it on with ``pytest_plugins = ["kubeinformers.testing.pytest_plugin"]`` in its
top-level conftest.py (or ``-p kubeinformers.testing.pytest_plugin``). Its tests can then ask
for `local_api_server` (plain HTTP, no authentication), `local_api_server_tls` (HTTPS with a
throw-away CA and a random bearer token; `server.api_client()` is configured for both) or
`local_api_server_factory` (build servers with your own options; all are stopped when the test
ends). Each fixture is function-scoped: every test starts from an empty cluster with the
default namespaces.

`real_apiserver` is a session-scoped RealApiServer (a real etcd + kube-apiserver, shared by
the session's tests: give each test its own namespace), `real_apiserver_factory` starts
private ones (for destructive fault tests; stopped when the test ends). Both skip the test
with one line when no binaries are found. Mark such tests `real_apiserver` (registered here)
so `-m "not real_apiserver"` leaves them out.

The server is imported when a fixture is first used, not when pytest starts: a test session
that never starts a server pays nothing, and coverage measurement sees kubeinformers'
modules imported under it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubeinformers.testing.local_api_server import LocalApiServer
    from kubeinformers.testing.real_apiserver import RealApiServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_apiserver: runs against a real kube-apiserver + etcd (RealApiServer); "
        "skipped where no binaries are found",
    )


@pytest.fixture
def local_api_server_factory() -> Iterator[Callable[..., LocalApiServer]]:
    """A callable taking LocalApiServer's arguments; returns a started server."""
    from kubeinformers.testing.local_api_server import LocalApiServer

    started: list[LocalApiServer] = []

    def make(*args: Any, **kwargs: Any) -> LocalApiServer:
        server = LocalApiServer(*args, **kwargs).start()
        started.append(server)
        return server

    yield make
    for server in reversed(started):
        server.stop()


@pytest.fixture
def local_api_server() -> Iterator[LocalApiServer]:
    """A plain-HTTP LocalApiServer without authentication."""
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer() as server:
        yield server


@pytest.fixture
def local_api_server_tls() -> Iterator[LocalApiServer]:
    """An HTTPS LocalApiServer with a random admin bearer token."""
    from kubeinformers.testing.local_api_server import LocalApiServer

    with LocalApiServer(tls=True, token=secrets.token_urlsafe(16)) as server:
        yield server


@pytest.fixture(scope="session")
def real_apiserver_assets() -> Path:
    """The directory holding kube-apiserver and etcd; skips the test when there is none."""
    from kubeinformers.testing.real_apiserver import (
        find_real_apiserver_assets,
        missing_assets_message,
    )

    assets = find_real_apiserver_assets()
    if assets is None:
        pytest.skip(f"real kube-apiserver: {missing_assets_message()}")
    return assets


@pytest.fixture(scope="session")
def real_apiserver(real_apiserver_assets: Path) -> Iterator[RealApiServer]:
    """One real etcd + kube-apiserver for the whole session (use a namespace of your own)."""
    from kubeinformers.testing.real_apiserver import RealApiServer

    with RealApiServer(real_apiserver_assets) as server:
        yield server


@pytest.fixture
def real_apiserver_factory(real_apiserver_assets: Path) -> Iterator[Callable[..., RealApiServer]]:
    """A callable taking RealApiServer's keyword arguments; returns a started private server."""
    from kubeinformers.testing.real_apiserver import RealApiServer

    assets = real_apiserver_assets
    started: list[RealApiServer] = []

    def make(**kwargs: Any) -> RealApiServer:
        server = RealApiServer(assets, **kwargs)
        started.append(server)
        return server.start()

    yield make
    for server in reversed(started):
        server.stop()
