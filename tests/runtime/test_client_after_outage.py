"""Read your writes after an API server outage (M1, D4): the first write once the server is
back returns as soon as the cache has it, not after the reflector's backoff (up to 30 s,
longer than the default 10 s read-your-writes timeout)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.generated.informers import SharedInformerFactory
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.reflector import reflector as reflector_module
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.testing.local_api_server import LocalApiServer
from tests.support.tcp_proxy import TcpProxy

backing_off = threading.Event()


class _LongBackoff(Backoff):
    """Every delay 10 minutes (an outage's later steps); says when one is asked for."""

    def next_delay(self) -> float:
        backing_off.set()
        return 600.0


@pytest.mark.parametrize("face", ["sync", "async"])
def test_m1_d4_the_first_write_after_an_outage_returns_once_cached_not_after_the_backoff(
    monkeypatch: pytest.MonkeyPatch, face: str
) -> None:
    monkeypatch.setattr(reflector_module, "Backoff", _LongBackoff)
    backing_off.clear()
    with LocalApiServer() as server, TcpProxy(("127.0.0.1", server.port)) as proxy:
        server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
        from kubernetes import client as k8s

        cfg = server.configuration()
        cfg.host = f"http://127.0.0.1:{proxy.port}"  # the factory and its client, through the proxy
        with SharedInformerFactory(k8s.ApiClient(cfg), namespace="n") as factory:
            lister = factory.core().v1().config_maps().lister().config_maps("n")
            factory.start()
            assert all(factory.wait_for_cache_sync(timeout=30).values())
            proxy.refuse(True)  # the server is away: the watch drops, reconnects are refused
            assert backing_off.wait(30)  # the reflector waits out its (10-minute) backoff
            proxy.refuse(False)  # the server is back
            mine = ConfigMap(metadata=ObjectMeta(name="after", namespace="n"), data={"a": "1"})
            if face == "sync":
                written = factory.client(read_your_writes_timeout=60).create(mine)
            else:

                async def create() -> ConfigMap:
                    return await factory.async_client(read_your_writes_timeout=60).create(mine)

                written = asyncio.run(create())
            # Returned (no ReadYourWritesTimeout after 60 s), with the write in the cache.
            assert written.metadata is not None and lister.get("after").metadata is not None
            cached = lister.get("after").metadata
            assert cached is not None
            assert cached.resource_version == written.metadata.resource_version
