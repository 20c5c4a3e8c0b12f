"""The conforming run of plugrl-client: the reference client's sessions, restarted as a person would."""

from __future__ import annotations

from typing import Any

from checks.conforming import ClientRun

# Short waits keep the run quick; the client's restart delay must exceed the reconnect window.
QUICK_OPTIONS: dict[str, Any] = {"timeout": 3.0, "connect_deadline": 5.0, "reconnect_window": 0.4, "steps": 8}
RESTART_DELAY = 0.6
SESSIONS = 6


async def drive(url: str, sessions: int = SESSIONS, restart_delay: float = RESTART_DELAY) -> None:
    """The reference client's `sessions` against the listening run at `url`, until it is gone."""
    from checks.plugrl_client.reference import ReferenceClient, run_sessions

    await run_sessions(ReferenceClient, url, sessions, restart_delay)


RUNS = (ClientRun(name="reference", drive="checks.plugrl_client.conforming:drive", options=QUICK_OPTIONS),)
