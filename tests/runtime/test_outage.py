"""An API server outage is reported once, calmly (issue 13 item 6): the first failure as one
WARNING, the rest at DEBUG, the recovery as one INFO; a lasting outage is repeated at WARNING
so it never goes silent. urllib3's per-resend warnings for our own requests go to DEBUG.
(The real apiserver restart is in tests/e2e/test_real_faults.py.)"""

from __future__ import annotations

import logging
import ssl

import pytest
import urllib3

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.client.transport import NO_RETRIES
from kubeinformers.runtime.reflector.outage import OutageLog, is_server_unavailable, storage_failure
from kubeinformers.runtime.reflector.support import VeryShortWatchError

LOGGER = logging.getLogger("kubeinformers.test-outage")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _tls_failure() -> ConnectionError:
    try:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed")
        except ssl.SSLError as inner:
            raise ConnectionError("cannot list pods: unreachable") from inner
    except ConnectionError as outer:
        return outer


@pytest.mark.parametrize(
    ("err", "outage"),
    [
        (ApiStatusError(503, "ServiceUnavailable", "before all known HTTP paths"), True),
        (ApiStatusError(429, "TooManyRequests", "storage is (re)initializing"), True),
        (ApiStatusError(429, "TooManyRequests", "too many requests, please try again"), False),
        (ConnectionRefusedError("cannot watch pods: unreachable"), True),
        (ConnectionError("Response ended prematurely"), True),
        (VeryShortWatchError("pods"), True),
        (ApiStatusError(500, "InternalError", "etcd is sad"), False),
        (
            ApiStatusError(404, "NotFound", "the server could not find the requested resource"),
            False,
        ),
        (ApiStatusError(401, "Unauthorized", "no"), False),
        (ApiStatusError(403, "Forbidden", "no"), False),
        (ApiStatusError(410, "Expired", "too old resource version"), False),
        (_tls_failure(), False),
        (ValueError("bad object"), False),
    ],
)
def test_what_counts_as_the_server_being_away(err: BaseException, outage: bool) -> None:
    assert is_server_unavailable(err) is outage


def test_an_outage_is_one_warning_then_debug_then_one_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    log = OutageLog("pods", LOGGER, repeat_after=60.0, clock=clock)
    caplog.set_level(logging.DEBUG, logger=LOGGER.name)
    log.recovered()  # no outage: nothing to say
    for _ in range(5):
        log.failed("watch of Pod", ConnectionRefusedError("refused"))
        clock.now += 1.0
    log.recovered()
    levels = [r.levelno for r in caplog.records]
    assert levels == [logging.WARNING] + [logging.DEBUG] * 4 + [logging.INFO]
    assert (
        "pods: the API server is unavailable (watch of Pod: refused)"
        in caplog.records[0].getMessage()
    )
    assert (
        caplog.records[-1].getMessage()
        == "pods: the API server is back after 5.0 s (5 failed attempts)"
    )
    assert not log.in_outage

    # the next outage is reported again
    caplog.clear()
    log.failed("list of Pod", ApiStatusError(503, "ServiceUnavailable", "try again"))
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


def test_a_lasting_outage_is_repeated_at_warning(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    log = OutageLog("pods", LOGGER, repeat_after=60.0, clock=clock)
    caplog.set_level(logging.DEBUG, logger=LOGGER.name)
    for _ in range(30):  # one failure every 5 s for 150 s
        log.failed("list of Pod", ConnectionRefusedError("refused"))
        clock.now += 5.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3, warnings  # at 0 s, 60 s and 120 s
    assert "still unavailable after 60 s" in warnings[1]
    assert "still unavailable after 120 s" in warnings[2]


def test_urllib3_resend_warnings_for_our_requests_go_to_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool_log = logging.getLogger("urllib3.connectionpool")
    ours = NO_RETRIES.increment(
        "GET", "/api/v1/pods", error=urllib3.exceptions.ProtocolError("reset")
    )
    theirs = urllib3.Retry(total=3).increment(
        "GET", "/x", error=urllib3.exceptions.ProtocolError("reset")
    )
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        pool_log.warning("Retrying (%r) after connection broken by '%r': %s", ours, "reset", "/a")
        pool_log.warning("Retrying (%r) after connection broken by '%r': %s", theirs, "reset", "/b")
    assert [r.getMessage().rsplit(" ", 1)[-1] for r in caplog.records] == ["/b"]
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="urllib3"):
        pool_log.warning("Retrying (%r) after connection broken by '%r': %s", ours, "reset", "/a")
    assert [(r.levelno, r.getMessage()[-2:]) for r in caplog.records] == [(logging.DEBUG, "/a")]


def test_d16_a_resource_whose_storage_fails_to_fill_is_worded_as_such(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """kube-apiserver 1.36 answers a list of a custom resource whose conversion webhook cannot
    be reached with 429 "storage is (re)initializing: failed to list ...": retried as an
    outage, but the server is up; the WARNING says the resource cannot be served and why."""
    clock = Clock()
    log = OutageLog("gizmos.conv.example.com", LOGGER, repeat_after=60.0, clock=clock)
    caplog.set_level(logging.DEBUG, logger=LOGGER.name)
    cause = (
        "failed to list conv.example.com/v2, Kind=Gizmo: conversion webhook for "
        'conv.example.com/v1, Kind=Gizmo failed: Post "https://nope.default.svc:443/convert": '
        'service "nope" not found'
    )
    err = ApiStatusError(429, "TooManyRequests", f"storage is (re)initializing: {cause}")
    assert is_server_unavailable(err) and storage_failure(err) == cause
    for _ in range(14):  # one failure every 5 s for 70 s
        log.failed("list of Gizmo", err)
        clock.now += 5.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert "cannot serve this resource: it fails to fill its cache" in warnings[0]
    assert 'service "nope" not found' in warnings[0] and "unavailable" not in warnings[0]
    assert "still cannot serve this resource after 60 s" in warnings[1]
    # A restart's 429 names no cause: an outage as before.
    restart = ApiStatusError(429, "TooManyRequests", "storage is (re)initializing")
    assert storage_failure(restart) is None
