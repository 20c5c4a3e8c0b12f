"""plugrl-server's conforming runs: the reference server until it stops, on a short feedback timeout, featureless."""

from __future__ import annotations

from typing import Any

from checks.conforming import ServerRun

START = "checks.plugrl.reference:start_reference_server"
# Short deadlines: a local reference server answers in milliseconds.
QUICK_OPTIONS: dict[str, Any] = {"timeout": 3.0, "patience": 0.3}
FEEDBACK_TIMEOUT = 1.0

RUNS = (
    # Every phase, the optional stop included: the server stops after enough feedback rows.
    ServerRun(
        name="until-stop", start=START, start_args={"stop_after": 200}, options=QUICK_OPTIONS, include_optional=True
    ),
    # The server gives up on feedback soon, and the suite is told how soon.
    ServerRun(
        name="feedback-timeout",
        start=START,
        start_args={"feedback_timeout": FEEDBACK_TIMEOUT},
        options={**QUICK_OPTIONS, "feedback_timeout": FEEDBACK_TIMEOUT},
        phases=("feedback-timeout",),
    ),
    # No feature offered: a reuse sent anyway must be refused, which a server offering reuse cannot show.
    ServerRun(
        name="without-features",
        start=START,
        start_args={"features": ()},
        options=QUICK_OPTIONS,
        phases=("exchange", "reuse"),
    ),
)
