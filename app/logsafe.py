"""Logging for `rlconform serve` and `rlconform worker`: no credential reaches a log line.

httpx logs every request's URL at INFO, password and webhook path included, so
third-party request loggers start at WARNING; every message any logger formats
has its URLs redacted (`redaction.redact_text`).
"""

from __future__ import annotations

import logging

from app.redaction import redact_text

QUIET_LOGGERS = ("httpx", "httpcore", "websockets", "urllib3", "grpc")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactedLogRecord(logging.LogRecord):
    def getMessage(self) -> str:  # noqa: N802 - logging's name
        return redact_text(super().getMessage())


def configure_logging(level: int = logging.INFO) -> None:
    logging.basicConfig(level=level, format=LOG_FORMAT)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.setLogRecordFactory(RedactedLogRecord)
