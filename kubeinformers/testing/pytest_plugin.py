"""pytest fixtures that give a test its own LocalApiServer.

Enable them in your project's root conftest.py:

    pytest_plugins = ["kubeinformers.testing.pytest_plugin"]

then ask for `local_api_server` (plain HTTP, no authentication), `local_api_server_tls`
(HTTPS with a throw-away CA and a random bearer token; `server.api_client()` is configured for
both) or `local_api_server_factory` (build servers with your own options; all are stopped when
the test ends). Each fixture is function-scoped: every test starts from an empty cluster with
the default namespaces.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubeinformers.testing.local_api_server import LocalApiServer


@pytest.fixture
def local_api_server_factory() -> Iterator[Callable[..., LocalApiServer]]:
    """A callable taking LocalApiServer's arguments; returns a started server."""
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
    with LocalApiServer() as server:
        yield server


@pytest.fixture
def local_api_server_tls() -> Iterator[LocalApiServer]:
    """An HTTPS LocalApiServer with a random admin bearer token."""
    with LocalApiServer(tls=True, token=secrets.token_urlsafe(16)) as server:
        yield server
