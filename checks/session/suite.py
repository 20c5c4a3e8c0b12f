"""The `session-server` target kind: a miles-style session server (TITO recorder) at http://host:port."""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.openai.suite import PHASES as OPENAI_PHASES
from checks.session.clauses import CATALOGUE
from checks.session.options import SessionOptions, SessionState
from checks.session.phase_concurrency import concurrency_phase
from checks.session.phase_failures import failures_phase
from checks.session.phase_health import health_phase
from checks.session.phase_lifecycle import lifecycle_phase
from checks.session.phase_proxy import proxy_phase_for
from checks.session.phase_records import records_phase
from checks.session.phase_retry import retry_phase
from checks.session.phase_samples import samples_phase

PHASES = (
    Phase("health", health_phase, ("session.ss01.health",), "GET /health twice"),
    Phase(
        "lifecycle",
        lifecycle_phase,
        ("session.ss02.create", "session.ss03.lifecycle"),
        "create sessions, read a new one, delete one and call it again",
    ),
    Phase(
        "records",
        records_phase,
        (
            "session.ss04.one-record-per-call",
            "session.ss05.record-matches-reply",
            "session.ss06.tito",
            "session.ss07.forced-fields",
            "session.ss14.tool-call-ids",
        ),
        "four weather-agent turns, the third streamed, then compare records with replies",
    ),
    Phase(
        "failures",
        failures_phase,
        ("session.ss08.failed-not-recorded",),
        "a prompt the backend refuses, then a new first turn",
    ),
    Phase(
        "retry",
        retry_phase,
        ("session.ss09.retry-topology", "session.ss10.truncation"),
        "the parity test's retry schedule, a deep divergence (v1) and a truncated generation",
        budget=10.0,
    ),
    Phase(
        "concurrency",
        concurrency_phase,
        ("session.ss11.concurrency",),
        "parallel sessions with nonces, two chats from one parent, a DELETE during a chat",
    ),
    Phase("samples", samples_phase, ("session.ss12.samples",), "POST /samples read with safetensors"),
    # The openai-chat phases through a session's proxy: their clause lists are that suite's, kept in one place.
    *(
        Phase(
            f"proxy-{p.name}",
            proxy_phase_for(p),
            p.clauses,
            f"via a session proxy: {p.description}",
            budget=p.budget + 1,
        )
        for p in OPENAI_PHASES
    ),
)

SUITE = Suite(
    kind="session-server",
    title="miles-style session server (records for RL training)",
    url_schemes=("http", "https"),
    options_model=SessionOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    new_state=SessionState,
    spec_version="miles session server v1/v2",
    url_example="http://127.0.0.1:30000",
)
