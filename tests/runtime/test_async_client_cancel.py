"""M10: a cancelled `AsyncClient` call ends its request at once: the socket of a request the
server does not answer is shut down, a wait for a Retry-After is cut short. Before, the
request went on in its worker thread for up to its timeout (60 s), or its Retry-After
retries (minutes), a cancelled write could still be sent, and `asyncio.run` waited for that
thread at exit."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest
from kubernetes import client

from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.runtime.client.typed import AsyncClient
from tests.runtime.test_async_api import run_debug
from tests.runtime.test_client_core import _ApiClient, _Resp, _status

TIMEOUT = 10.0  # the old behaviour held the thread 30-60 s: a wait this long tells them apart


def test_m10_a_cancelled_call_shuts_the_socket_of_a_request_never_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server accepts the connection and reads the request, and never answers: the call
    is cancelled (its `wait_for` times out); the client hangs up at once."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    received = threading.Event()
    hung_up = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(65536):
                if b"\r\n\r\n" in data:
                    received.set()
            hung_up.set()  # b"": the client shut its socket down

    threading.Thread(target=serve, daemon=True, name="test-silent-server").start()
    configuration = client.Configuration(host=f"http://127.0.0.1:{server.getsockname()[1]}")
    api = client.ApiClient(configuration)

    async def main() -> None:
        call = asyncio.create_task(AsyncClient(api).get(ConfigMap, "c", namespace="n"))
        assert await asyncio.to_thread(received.wait, TIMEOUT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await asyncio.to_thread(hung_up.wait, TIMEOUT), "the request went on"

    try:
        run_debug(main, caplog)
    finally:
        server.close()
        api.close()  # type: ignore[no-untyped-call]


def test_m10_a_cancelled_call_does_not_wait_out_a_retry_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server answers 429 with Retry-After: 30; the call is cancelled while it waits
    to send again: the worker thread ends at once (the loop's executor shuts down in time)
    and the request is not sent again."""
    throttled = _Resp(429, _status(429, "TooManyRequests", "slow down"), {"Retry-After": "30"})
    api: Any = _ApiClient([throttled, throttled])
    pool = api.rest_client.pool_manager

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sent = asyncio.Event()
        request = pool.request

        def counted(method: str, url: str, **kw: Any) -> _Resp:
            answer: _Resp = request(method, url, **kw)
            loop.call_soon_threadsafe(sent.set)
            return answer

        pool.request = counted
        call = asyncio.create_task(AsyncClient(api).get(ConfigMap, "c", namespace="n"))
        await asyncio.wait_for(sent.wait(), TIMEOUT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(loop.shutdown_default_executor(), TIMEOUT)
        assert len(pool.sent) == 1

    run_debug(main, caplog)
