"""The fault injector: random faults from a seeded RNG, and the undoing of timed ones.

Each `fire()` injects one fault. Faults with a duration (latency, a stalled watch-list
bookmark) schedule their own undo, run by `tick()` once due; `clear()` undoes everything at
once before a checkpoint.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tests.soak.recorder import Recorder
from tests.soak.world import KINDS, World

# Above every resourceVersion handed out before an "etcd restore": see _restart_renumbered.
RESTORE_BUMP = 100_000


@dataclass
class Fault:
    name: str
    weight: float
    fire: Callable[[], None]


@dataclass
class Injector:
    world: World
    rng: random.Random
    recorders: Sequence[Recorder]
    raisers: Sequence[Recorder]
    blockers: Sequence[Recorder]
    downtime: float = 0.3
    counts: Counter[str] = field(default_factory=Counter)
    _undo: list[tuple[float, Callable[[], None]]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)

    def __post_init__(self) -> None:
        f = Fault
        self.faults = [
            f("drop-watches", 10, self._drop),
            f("drop-watches-clean", 5, self._drop_clean),
            f("compact-410", 8, self._compact),
            f("compact-lists-only", 3, self._compact_lists),
            f("stall-initial-events-end", 5, self._stall),
            f("429-retry-after", 6, self._throttle),
            f("500s", 7, self._server_errors),
            f("latency", 5, self._latency),
            f("corrupt-watch-line", 7, self._corrupt),
            f("truncate-watch-line", 7, self._truncate),
            f("restart-keep-rv", 4, self._restart_keep),
            f("restart-lose-watch-cache", 3, self._restart_lose_history),
            f("restart-renumbered-rv", 2, self._restart_renumbered),
            f("deletes-while-disconnected", 5, self._deletes_while_disconnected),
            f("rbac-flap-403", 2, self._forbid_briefly),
            f("handler-raises", 7, self._handler_raises),
            f("handler-blocks", 4, self._handler_blocks),
        ]

    @property
    def server(self):  # type: ignore[no-untyped-def]
        return self.world.server

    # --- driving ---------------------------------------------------------------------------

    def fire(self) -> str:
        fault = self.rng.choices(self.faults, [x.weight for x in self.faults])[0]
        fault.fire()
        self.counts[fault.name] += 1
        return fault.name

    def _later(self, seconds: float, undo: Callable[[], None]) -> None:
        self._undo.append((time.monotonic() + seconds, undo))

    def tick(self) -> None:
        now = time.monotonic()
        due = [u for u in self._undo if u[0] <= now]
        self._undo = [u for u in self._undo if u[0] > now]
        for _, undo in due:
            undo()

    def clear(self) -> None:
        """Undo every timed fault now (before a checkpoint)."""
        undo, self._undo = self._undo, []
        for _, fn in undo:
            fn()
        self.server.set_latency(0)
        self.server.stall_initial_events_end(False)
        self.server.allow("pods")

    # --- the faults --------------------------------------------------------------------------

    def _drop(self) -> None:
        self.server.drop_watches()

    def _drop_clean(self) -> None:
        self.server.drop_watches(clean=True)

    def _compact(self) -> None:
        """History compacted, then watches cut: re-watches from an old RV get 410 (relist)."""
        self.server.compact()
        self.server.drop_watches()

    def _compact_lists(self) -> None:
        """Only lists at older RVs answer 410; watches resume from the watch cache."""
        self.server.compact(watch_cache=False)
        if self.rng.random() < 0.5:
            self.server.drop_watches()

    def _stall(self) -> None:
        """The watch-list end bookmark is held back, then released; the informers relist
        (compaction) into the stalled watch-list or its LIST fallback."""
        self.server.stall_initial_events_end(True)
        self.server.compact()
        self.server.drop_watches()
        self._later(self.rng.uniform(0.5, 2.5), lambda: self.server.stall_initial_events_end(False))

    def _throttle(self) -> None:
        self.server.fail_next(self.rng.randint(1, 4), status=429, retry_after=1)
        self.server.drop_watches()

    def _server_errors(self) -> None:
        status = self.rng.choice((500, 500, 503))
        verbs = self.rng.choice((None, ["watch"], ["list"]))
        self.server.fail_next(self.rng.randint(1, 5), status=status, verbs=verbs)
        self.server.drop_watches()

    def _latency(self) -> None:
        self.server.set_latency(self.rng.uniform(0.02, 0.3))
        self._later(self.rng.uniform(0.3, 2.0), lambda: self.server.set_latency(0))
        if self.rng.random() < 0.5:
            self.server.drop_watches()

    def _corrupt(self) -> None:
        self.server.corrupt_next_watch_line(self.rng.randint(1, 2))

    def _truncate(self) -> None:
        self.server.truncate_next_watch_line(1)

    def _restart_keep(self) -> None:
        self.server.restart(keep_resource_versions=True, downtime=self._downtime())

    def _restart_lose_history(self) -> None:
        """An API server restart: same etcd, but the watch cache starts empty (KEP-1904)."""
        self.server.restart(keep_resource_versions=True, downtime=self._downtime())
        self.server.compact()

    def _restart_renumbered(self) -> None:
        """etcd restored from a backup: every object gets a new resourceVersion, history is gone.

        Restored as `etcdutl snapshot restore --bump-revision --mark-compacted` does (the
        documented way): the new revisions lie above every one handed out before and all older
        ones are compacted, so every watcher gets 410 and relists. A restore *without* the bump
        (`restart(keep_resource_versions=False)`, revisions restart low) cannot be survived by
        any client: a watch from a resourceVersion the server has not reached yet starts
        silently at that version (kube-apiserver's watch cache does the same), missing every
        change up to it. LocalApiServer's fault API has no bump, so this reaches into its store.
        """
        with self.world.lock:
            store = self.server._state.store
            store.renumber(start=self.server.resource_version + RESTORE_BUMP)
            self.server.restart(keep_resource_versions=True, downtime=self._downtime())
            self.world.renumbered()

    def _deletes_while_disconnected(self) -> None:
        """Watches fail for a while; objects are deleted meanwhile and history is compacted:
        the relist must report those deletions as tombstones."""
        self.server.fail_next(self.rng.randint(2, 6), status=503, verbs=["watch", "list"])
        self.server.drop_watches()
        for _ in range(self.rng.randint(2, 6)):
            self.world.delete(self.rng.choice(KINDS))
        self.server.compact()

    def _forbid_briefly(self) -> None:
        """RBAC takes list/watch on pods away for a moment (403), then gives it back."""
        self.server.forbid("pods", ["list", "watch"])
        self.server.drop_watches()
        self._later(self.rng.uniform(0.2, 1.5), lambda: self.server.allow("pods"))

    def _handler_raises(self) -> None:
        self.rng.choice(self.raisers).arm_raise(self.rng.randint(1, 5))

    def _handler_blocks(self) -> None:
        self.rng.choice(self.blockers).arm_block(self.rng.uniform(1.0, 3.0))

    def _downtime(self) -> float:
        return self.rng.choice((0.0, self.rng.uniform(0.05, self.downtime)))
