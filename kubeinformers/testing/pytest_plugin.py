"""pytest fixtures that give a test its own LocalApiServer.

Installing kubeinformers registers this module as a pytest plugin (the `pytest11` entry point
named "kubeinformers"), so any test can ask for `local_api_server` (plain HTTP, no authentication), `local_api_server_tls`
(HTTPS with a throw-away CA and a random bearer token; `server.api_client()` is configured for
both) or `local_api_server_factory` (build servers with your own options; all are stopped when
the test ends). Each fixture is function-scoped: every test starts from an empty cluster with
the default namespaces. Do not also list the module in `pytest_plugins` (pytest refuses a
plugin registered twice); `-p no:kubeinformers` turns it off.

The server is imported when a fixture is first used, not when pytest starts: a test session
that never starts a server pays nothing, and coverage measurement sees kubeinformers'
modules imported under it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubeinformers.testing.local_api_server import LocalApiServer


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
