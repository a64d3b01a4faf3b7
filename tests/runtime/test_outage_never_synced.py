"""Before an informer has ever synced, each distinct cause of failure is one WARNING (issue 18);
afterwards the outage rules hold (one WARNING per outage, DEBUG while it lasts)."""

from __future__ import annotations

import errno
import logging
import ssl

import pytest

from kubeinformers.runtime.api.errors import ApiStatusError
from kubeinformers.runtime.reflector.outage import OutageLog, failure_cause

LOGGER = logging.getLogger("kubeinformers.test-outage-never-synced")


def _refused() -> ConnectionError:
    """What the transport raises for a closed port: ours, caused by the socket's refusal."""
    try:
        try:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
        except OSError as inner:
            raise ConnectionError("cannot list pods: https://127.0.0.1:1 unreachable") from inner
    except ConnectionError as outer:
        return outer


def _untrusted() -> ConnectionError:
    try:
        try:
            raise ssl.SSLCertVerificationError(1, "certificate verify failed")
        except ssl.SSLError as inner:
            raise ConnectionError("cannot list pods: https://127.0.0.1:6443 unreachable") from inner
    except ConnectionError as outer:
        return outer


@pytest.mark.parametrize(
    ("err", "cause"),
    [
        (_refused(), "connection refused"),
        (ApiStatusError(503, "ServiceUnavailable", "not ready"), "HTTP 503 ServiceUnavailable"),
        (TimeoutError("read timed out"), "timed out"),
        (_untrusted(), "TLS failure: certificate verify failed"),
    ],
)
def test_the_cause_is_named_in_a_few_words(err: BaseException, cause: str) -> None:
    assert failure_cause(err) == cause


def test_a_never_synced_informer_warns_once_per_distinct_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[BaseException] = []
    log = OutageLog("pods", LOGGER, on_failure=seen.append)
    caplog.set_level(logging.DEBUG, logger=LOGGER.name)
    refused = _refused()
    unready = ApiStatusError(503, "ServiceUnavailable", "not ready")
    for err in (refused, refused, refused, unready, unready, refused):
        log.failed("list of Pod", err)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3, warnings
    assert "cause: connection refused" in warnings[0]
    assert "now because of HTTP 503 ServiceUnavailable" in warnings[1]
    assert "now because of connection refused" in warnings[2]
    assert [r.levelno for r in caplog.records].count(logging.DEBUG) == 3
    assert seen == [refused, refused, refused, unready, unready, refused]


def test_after_the_first_sync_a_change_of_cause_stays_quiet_within_one_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = OutageLog("pods", LOGGER)
    log.recovered()  # the first list succeeded
    caplog.set_level(logging.DEBUG, logger=LOGGER.name)
    log.failed("watch of Pod", _refused())
    log.failed("list of Pod", ApiStatusError(503, "ServiceUnavailable", "not ready"))
    log.recovered()
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.DEBUG, logging.INFO]
