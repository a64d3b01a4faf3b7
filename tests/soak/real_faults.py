"""The faults a real kube-apiserver + etcd can be given (`make soak` with `--server real`).

A real server has no fault hooks, so the faults are what happens to a real cluster: the
informers' connections go through a TCP proxy (tests/support/tcp_proxy.py) that resets them,
refuses new ones for a while (an outage) or slows them; the apiserver is restarted (SIGTERM,
or SIGKILL as a crash, sometimes staying down a moment) while etcd keeps the data; etcd is
compacted; a restart plus a compaction loses the watch history (the re-watch gets 410, the
informers relist); objects are deleted while the informers are cut off and the history is
lost (the relist reports them as tombstones); handlers raise or block; the service-account
token the informers read from a file is rotated, its old Secret deleted so the old token dies
(issue 27: nothing may be lost, no refusal may last); once, mid-run, the Widget CRD the
informers watch is upgraded incompatibly ("upgrade-crd", issue 27: a new `size` enum value,
`replicas` an integer that becomes a string, `parts` a list that becomes a map) and the
writer writes Widgets in the new shape from then on (the runner checks K11/K12 on every
checkpoint after it). LocalApiServer's
protocol faults (429/500 answers, corrupt or truncated watch lines, a stalled watch-list
bookmark, a renumbered restore, an RBAC flap) have no real-server equivalent here.

The writer is paused around an apiserver restart, so no write of the world's is in flight
when it goes down (RealCluster would retry it, but the world's history must stay exact).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.soak.faults import Fault, Injector
from tests.soak.world import KINDS, WIDGETS, upgraded_widget_crd
from tests.support.cluster import RealCluster, StatusError
from tests.support.sa_tokens import ServiceAccountTokens, write_token

ROTATION_NAMESPACE = "soak-auth"
WIDGET_CRD_NAME = "widgets.demo.kubeinformers.io"


@dataclass
class TokenRotation:
    """The informers' token file and the ServiceAccount (cluster-admin) its tokens are for."""

    tokens: ServiceAccountTokens
    path: Path
    secrets: list[str]  # the soak's list of credentials that must never be logged
    current: str = ""  # the Secret the file's token is bound to
    rotations: int = field(default=0)

    @classmethod
    def start(cls, cluster: RealCluster, folder: Path, secrets: list[str]) -> TokenRotation:
        cluster.namespace(ROTATION_NAMESPACE)
        tokens = ServiceAccountTokens(
            cluster, ROTATION_NAMESPACE, name="soak-informers", cluster_admin=True
        )
        rotation = cls(tokens, folder / "token", secrets)
        rotation.rotate(revoke_first=False)
        return rotation

    def rotate(self, *, revoke_first: bool) -> Callable[[], None] | None:
        """A new token. The kubelet's order (`revoke_first=False`): the file gets it, then the
        old Secret is deleted. Otherwise the old Secret goes first and the returned function
        (run a moment later) writes the new token: requests meanwhile may be refused."""
        token, secret = self.tokens.new_token()
        self.secrets.append(token)
        old, self.current = self.current, secret
        self.rotations += 1
        if not revoke_first:
            write_token(self.path, token)
            if old:
                self.tokens.revoke(old)
            return None
        if old:
            self.tokens.revoke(old)

        def write_if_still_current() -> None:
            # A rotation since then revoked this token's Secret: writing it now would leave
            # the informers a dead token for good (two rotations a moment apart did).
            if self.current == secret:
                write_token(self.path, token)

        return write_if_still_current


@dataclass
class RealInjector(Injector):
    real: Any = None  # RealApiServer
    proxy: Any = None  # TcpProxy
    pause_writes: Callable[[], None] = lambda: None
    resume_writes: Callable[[], None] = lambda: None
    rotation: TokenRotation | None = None
    # The "upgrade-crd" fault replaces the random pick of this fault number (1-based; 0:
    # never): one CRD upgrade per run, taking nothing from the RNG, so a seed's other faults
    # stay what they were, one place later.
    upgrade_crd_at: int = 0
    _fired: int = 0

    def fire(self) -> str:
        self._fired += 1
        if self._fired == self.upgrade_crd_at:
            self._upgrade_crd()
            self.counts["upgrade-crd"] += 1
            return "upgrade-crd"
        return super().fire()

    def __post_init__(self) -> None:
        f = Fault
        self.faults = [
            f("drop-connections", 10, self._drop),
            f("outage-refused", 5, self._outage),
            f("latency", 4, self._slow),
            f("etcd-compaction", 8, self._compact),
            f("apiserver-restart-term", 2, self._restart_term),
            f("apiserver-crash-kill", 2, self._crash),
            f("restart-lose-watch-history", 2, self._restart_lose_history),
            f("deletes-while-disconnected", 3, self._deletes_while_disconnected),
            f("handler-raises", 7, self._handler_raises),
            f("handler-blocks", 4, self._handler_blocks),
        ]
        if self.rotation is not None:
            self.faults.append(f("rotate-token", 4, self._rotate_token))

    def clear(self) -> None:
        undo, self._undo = self._undo, []
        for _, fn in undo:
            fn()
        self.proxy.refuse(False)
        self.proxy.latency = 0.0

    # --- the faults --------------------------------------------------------------------------

    def _drop(self) -> None:
        self.proxy.drop_all()

    def _rotate_token(self) -> None:
        """Issue 27: the informers' token rotates; half the time the old one is revoked before
        the file has the new one (the server's token cache keeps it ~10 s either way)."""
        assert self.rotation is not None
        write_later = self.rotation.rotate(revoke_first=self.rng.random() < 0.5)
        if write_later is not None:
            self._later(self.rng.uniform(0.5, 3.0), write_later)
        if self.rng.random() < 0.5:
            self.proxy.drop_all()

    def _upgrade_crd(self) -> None:
        """Issue 27 (K11, K12): the Widget CRD is upgraded on the server before the models
        are regenerated. With the writer paused, the CRD is replaced; one Widget is rewritten
        in the new shape as soon as the server accepts it (it validates with the old schema a
        moment longer: 422), and the writer goes on in the new shape."""
        self.pause_writes()
        try:
            cluster = self.world.server
            crd = cluster.get(
                "apiextensions.k8s.io/v1", "CustomResourceDefinition", WIDGET_CRD_NAME
            )
            upgraded = cluster.replace(upgraded_widget_crd(crd))
            self.world.upgraded_at = int(upgraded["metadata"]["resourceVersion"])
            self.world.widgets_upgraded = True  # the writer is paused: nothing else writes
            write = self.world.update if self.world.live[WIDGETS.kind] else self.world.create
            deadline = time.monotonic() + 30
            tick = threading.Event()
            while True:
                try:
                    write(WIDGETS)
                    break
                except StatusError as err:
                    if err.status != 422 or time.monotonic() > deadline:
                        raise
                    tick.wait(0.1)
        finally:
            self.resume_writes()

    def _outage(self) -> None:
        self.proxy.refuse(True)
        self._later(self.rng.uniform(0.2, 2.0), lambda: self.proxy.refuse(False))

    def _slow(self) -> None:
        self.proxy.latency = self.rng.uniform(0.02, 0.3)
        self._later(self.rng.uniform(0.3, 2.0), self._fast)
        if self.rng.random() < 0.5:
            self.proxy.drop_all()

    def _fast(self) -> None:
        self.proxy.latency = 0.0

    def _compact(self) -> None:
        """etcd compacted; the watch cache still serves recent resourceVersions."""
        self.real.compact_etcd()
        if self.rng.random() < 0.5:
            self.proxy.drop_all()

    def _restart(self, kill: bool) -> None:
        self.pause_writes()
        try:
            down = self.rng.choice((0.0, self.rng.uniform(0.05, 1.0)))
            self.real.restart_apiserver(kill=kill, down_seconds=down)
        finally:
            self.resume_writes()

    def _restart_term(self) -> None:
        self._restart(kill=False)

    def _crash(self) -> None:
        self._restart(kill=True)

    def _restart_lose_history(self) -> None:
        """A restart empties the watch cache and the compaction removes what etcd had: a
        re-watch from before the restart is 410 Expired."""
        self._restart(kill=self.rng.random() < 0.5)
        self.real.compact_etcd()

    def _deletes_while_disconnected(self) -> None:
        """Informers cut off; objects deleted; history lost: the relist must report those
        deletions as tombstones."""
        self.proxy.refuse(True)
        for _ in range(self.rng.randint(2, 6)):
            self.world.delete(self.rng.choice(KINDS))
        self._restart_lose_history()
        self._later(self.rng.uniform(0.1, 1.0), lambda: self.proxy.refuse(False))
