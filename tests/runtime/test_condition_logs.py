"""D22: a failure that is not an outage (401/403, 404) is said once per informer and condition,
repeats go to DEBUG, and the recovery is one INFO line, as an outage is (issue 25). Before,
every retry logged "falling back to LIST/WATCH" at INFO, and once the informer had synced,
every retry logged the 403 again."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.reflector.backoff import Backoff
from kubeinformers.runtime.reflector.outage import OutageLog
from kubeinformers.runtime.reflector.reflector import Reflector
from tests.runtime.test_reflector import (
    FakeClock,
    RecordingStore,
    ScriptedLW,
    ScriptedWatch,
    page,
)

LOGGER = logging.getLogger("kubeinformers.test-condition-logs")


def _forbidden() -> ApiStatusError:
    return ApiStatusError(403, "Forbidden", 'pods is forbidden: User "bob" cannot list pods')


def _reflector(lw: ScriptedLW, clock: FakeClock) -> Reflector[Any]:
    return Reflector(
        lw,
        dict,
        RecordingStore(),
        name="pods-informer",
        type_description="pods",
        use_watch_list=True,
        backoff=Backoff(initial=0.001, rand=lambda: 0.0),
        wait=lambda event, seconds: event.is_set(),
        clock=clock,
    )


def _loud(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno > logging.DEBUG]


@pytest.mark.parametrize("synced_before", [False, True])
def test_d22_a_lasting_403_is_one_line_per_condition_and_its_end_one_info(
    caplog: pytest.LogCaptureFixture, synced_before: bool
) -> None:
    stop = threading.Event()
    retries = 6
    lists: list[Any] = [_forbidden() for _ in range(retries)] + [page("1")]
    # each round: the watch-list is refused (-> LIST), the LIST is refused (-> handler)
    watches: list[Any] = [_forbidden() for _ in range(retries + 1)] + [ScriptedWatch([])]
    clock = FakeClock()  # the last watch lasts 5 s of it: a normal close, not an outage
    lw = ScriptedLW(stop, lists, watches, clock=clock)
    r = _reflector(lw, clock)
    if synced_before:
        r.outage.recovered()  # the informer had synced; then its RBAC was revoked
    with caplog.at_level(logging.DEBUG, logger="kubeinformers.reflector"):
        r.run(stop)
    assert len(lw.list_calls) == retries + 1
    loud = _loud(caplog)
    assert [level for level, _ in loud] == [
        "WARNING" if synced_before else "INFO",  # falling back to LIST/WATCH, once
        "ERROR",  # access to pods denied, once
        "INFO",  # works again, once
    ], loud
    assert "falling back to LIST/WATCH" in loud[0][1]
    assert "access to pods denied (HTTP 403 Forbidden)" in loud[1][1]
    assert loud[2][1].startswith("pods-informer: list and watch work again after ")
    assert loud[2][1].endswith("(the failure was: HTTP 403 Forbidden)")
    repeats = [r for r in caplog.records if r.levelno == logging.DEBUG and "denied" in r.message]
    assert len(repeats) == retries - 1  # every retry still visible at DEBUG


def test_d22_a_new_cause_is_said_and_a_lasting_error_is_repeated_after_a_while(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    log = OutageLog("pods", LOGGER, repeat_after=60.0, clock=lambda: now[0])
    log.recovered()
    not_found = ApiStatusError(404, "NotFound", "the server could not find the resource")
    levels = []
    for t, err in [(0, _forbidden()), (5, _forbidden()), (10, not_found), (15, _forbidden())]:
        now[0] = t
        levels.append(log.condition_level(logging.ERROR, err, "error"))
    assert levels == [logging.ERROR, logging.DEBUG, logging.ERROR, logging.DEBUG]
    now[0] = 61.0  # a minute after it was last said: said again, then quiet again
    assert log.condition_level(logging.ERROR, _forbidden(), "error") == logging.ERROR
    assert log.condition_level(logging.ERROR, _forbidden(), "error") == logging.DEBUG
    # an INFO-level condition (a watch-list fallback) is said once, never repeated
    assert log.condition_level(logging.INFO, _forbidden(), "watch-list fallback") == logging.INFO
    now[0] = 1000.0
    assert log.condition_level(logging.INFO, _forbidden(), "watch-list fallback") == logging.DEBUG
    with caplog.at_level(logging.DEBUG, logger=LOGGER.name):
        log.watching()
        log.watching()  # nothing left to report
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "INFO",
            "pods: list and watch work again after 1000.0 s "
            "(the failure was: HTTP 403 Forbidden; HTTP 404 NotFound)",
        )
    ]
    # after the recovery the same condition is news again
    assert log.condition_level(logging.ERROR, _forbidden(), "error") == logging.ERROR
