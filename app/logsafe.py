"""Logging for `rlconform serve` and `rlconform worker`: the service's own messages, and no credential.

httpx logs every request's URL at INFO, password and webhook path included, and the clients and the
dashboard log a line per request or frame; those loggers start at WARNING unless the level is debug,
so the service's own messages are not buried. Every message any logger formats has its URLs redacted
(`redaction.redact_text`), at every level.
"""

from __future__ import annotations

import logging

from app.redaction import redact_text

LOG_LEVELS = ("debug", "info", "warning", "error")
QUIET_LOGGERS = (
    "httpx",
    "httpcore",
    "websockets",
    "urllib3",
    "grpc",
    "uvicorn.access",
    "multipart",
    "procrastinate",
)
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactedLogRecord(logging.LogRecord):
    def getMessage(self) -> str:  # noqa: N802 - logging's name
        return redact_text(super().getMessage())


def configure_logging(level: str = "info") -> None:
    numeric = logging.getLevelNamesMapping()[level.upper()]
    logging.basicConfig(level=numeric, format=LOG_FORMAT)
    logging.getLogger().setLevel(numeric)  # also when something configured the root logger first
    quiet = logging.DEBUG if level == "debug" else max(logging.WARNING, numeric)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
    logging.setLogRecordFactory(RedactedLogRecord)
