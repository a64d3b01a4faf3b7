"""The soak's short variant (issue 8): 50 injected faults, the same invariants as `make soak`;
and 30 against a real kube-apiserver + etcd (issue 13, on a private server: it is restarted).

Informers of pods (all namespaces), configmaps (one namespace), a CRD kind (label-selected),
configmaps metadata-only, the CRD kind again with the ordered queue (RealFIFO, C-2) and
eager decoding, and pods again with the atomic queue (C-3); three handlers each (one raises, one blocks when armed),
while a writer churns objects and faults fire from a seeded RNG (tests/soak/faults.py, and
tests/soak/real_faults.py for the real server: apiserver restarts by SIGTERM and SIGKILL, etcd
compactions, connections reset or refused through a TCP proxy).
Every checkpoint: caches and every handler's replayed view equal the server's state for their
selection (keys and resourceVersions) after relists (D8, D14), watch-list stalls and fallbacks
(D17-D20) and backoffs (D3, D4, D11); every callback is checked against what the handler saw
before; afterwards no thread or socket of ours is left and no log record holds the token.
Mid-run on the real server the Widget CRD is upgraded incompatibly ("upgrade-crd", issue 27):
every checkpoint after it reads the drifted Widgets (K11, K12) and the log holds one ERROR
per bad object version, no traceback.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

import pytest

from kubeinformers.testing.real_apiserver import RealApiServer
from tests.soak import SoakConfig, run_soak
from tests.soak.runner import leaked, open_sockets

SEED = 8
# A seed whose 30 real-server faults include a SIGTERM and a SIGKILL restart of the apiserver,
# etcd compactions, reset connections, deletions while disconnected and token rotations (the
# fault sequence depends on the seed only, not on timing).
REAL_SEED = 3


@pytest.mark.slow
def test_short_soak_converges_with_no_lost_phantom_or_stale_events() -> None:
    result = run_soak(SoakConfig(seed=SEED, faults=50, checkpoint_every=25))
    assert result.violations == [], result.summary()
    assert result.faults == result.survived == 50
    assert (result.lost, result.phantom, result.stale_updates, result.bad_callbacks) == (0, 0, 0, 0)
    assert result.objects_compared > 0 and result.writes > 0
    # relists after compaction meet objects deleted meanwhile: DeletedFinalStateUnknown (A5)
    assert result.tombstones > 0


@pytest.mark.slow
@pytest.mark.real_apiserver
def test_short_soak_against_a_real_apiserver(
    real_apiserver_factory: Callable[..., RealApiServer],
) -> None:
    real = real_apiserver_factory()
    result = run_soak(
        SoakConfig(seed=REAL_SEED, faults=30, checkpoint_every=15, server="real", real=real)
    )
    assert result.violations == [], result.summary()
    assert result.faults == result.survived == 30
    assert (result.lost, result.phantom, result.stale_updates, result.bad_callbacks) == (0, 0, 0, 0)
    assert result.objects_compared > 0 and result.writes > 0
    for fault in (
        "apiserver-restart-term",
        "apiserver-crash-kill",
        "etcd-compaction",
        "rotate-token",
    ):
        assert result.fault_counts.get(fault, 0) >= 1, result.fault_counts
    assert result.tombstones > 0
    # Issue 27: the Widget CRD was upgraded incompatibly mid-run (fault 15) and Widgets written
    # in the new shape were cached at the server's version, their changed fields raising
    # InvalidFieldError, the rest read, a new enum value read (K11, K12), each reported once.
    assert result.fault_counts["upgrade-crd"] == 1
    assert result.drifted_checked > 0


def _handshake_reset() -> None:
    sock = socket.socket()  # as ssl.SSLSocket._create's `self` when the peer resets it
    sock.setblocking(False)
    raise ConnectionResetError(104, "Connection reset by peer")


def test_a_socket_left_open_is_reported_with_what_holds_it() -> None:
    # The real-server soak once failed with "socket left open" alone: sockets of reset TLS
    # handshakes, kept by a stopped informer's last error (D3), kept by K21's table of
    # classes. The report now gives the chain of referrers up to what is alive.
    threads, sockets = set(threading.enumerate()), open_sockets()
    kept: list[BaseException] = []
    try:
        _handshake_reset()
    except OSError as e:
        kept.append(e)
    (problem,) = leaked(threads, sockets, timeout=0.0)
    assert problem.startswith("socket left open: socket:[")
    chain = problem.split("held by: ", 1)[1].split(" <- ")
    assert chain[0] == "socket.socket"
    assert chain[1].startswith("frame _handshake_reset (test_soak_short.py:")
    assert chain[2:5] == [
        "traceback of _handshake_reset",
        "traceback of test_a_socket_left_open_is_reported_with_what_holds_it",
        "exception ConnectionResetError: [Errno 104] Connection reset by peer",
    ]
    # `kept`, a local variable of this running test, which the collector does not see.
    assert chain[5].startswith("list of 1 (nothing the collector sees holds the last: a local")
    kept.clear()
    assert leaked(threads, sockets, timeout=0.0) == []
