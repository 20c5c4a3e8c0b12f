"""A run's lifecycle, kept apart from its verdicts: `queued -> running -> finished | cancelled | interrupted`.

Its own module so that the tables (`app.models`) and the history shapes (`app.models_history`) both use it
without importing each other.
"""

from __future__ import annotations

import enum


class RunStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
