"""The `ors` target kind: an Open Reward Standard environment server at its base URL (http://host:port)."""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.ors.clauses import CATALOGUE
from checks.ors.options import OrsOptions, OrsState
from checks.ors.phase_calls import CALLS_CLAUSES, calls_phase
from checks.ors.phase_discovery import DISCOVERY_CLAUSES, discovery_phase
from checks.ors.phase_errors import ERRORS_CLAUSES, errors_phase
from checks.ors.phase_finished import FINISHED_CLAUSES, finished_phase
from checks.ors.phase_keepalive import KEEPALIVE_CLAUSES, keepalive_phase, keepalive_waits
from checks.ors.phase_sessions import SESSIONS_CLAUSES, sessions_phase
from checks.ors.routes import close_state

PHASES = (
    Phase(
        "discovery",
        discovery_phase,
        DISCOVERY_CLAUSES,
        "health, environments, tools, splits, tasks and the index API",
        budget=20.0,
    ),
    Phase(
        "sessions",
        sessions_phase,
        SESSIONS_CLAUSES,
        "/create_session ids, /create, the X-Session-ID header, prompt, ping and delete",
        budget=40.0,
    ),
    Phase(
        "calls",
        calls_phase,
        CALLS_CLAUSES,
        "tool calls over SSE: events, chunks, the result, refusals, resume by task_id",
        budget=40.0,
    ),
    Phase("finished", finished_phase, FINISHED_CLAUSES, "a call after finished: true", budget=12.0),
    Phase("errors", errors_phase, ERRORS_CLAUSES, 'error answers carry "detail"; a broken body is a 4xx'),
    Phase(
        "keepalive",
        keepalive_phase,
        KEEPALIVE_CLAUSES,
        "slow: keep-alive bytes during a slow tool, idle expiry, pings that keep a session",
        default=False,
        named_only=True,
        budget=20.0,
        waits=keepalive_waits,
    ),
)

SUITE = Suite(
    kind="ors",
    title="Open Reward Standard environment server",
    url_schemes=("http", "https"),
    options_model=OrsOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    new_state=OrsState,
    close_state=close_state,
    spec_version="ORS 2026 (ors-sdk 0.1.0)",
    url_example="http://127.0.0.1:8080",
)
