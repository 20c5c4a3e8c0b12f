"""The conforming runs of ors: the reference server, and the keep-alive phase on one expiring idle sessions soon."""

from __future__ import annotations

from typing import Any

from checks.conforming import ServerRun
from checks.registry import RunningServer

# A shorter timeout and fewer /create_session calls than the defaults, which suffice on a local server.
QUICK_OPTIONS: dict[str, Any] = {"timeout": 5, "creates": 6}
# A server that expires idle sessions soon and pings often, so the keep-alive phase takes seconds.
IDLE_EXPIRY, PING_INTERVAL = 1.2, 0.2
# The opt-in keep-alive phase alone, timed for IDLE_EXPIRY and PING_INTERVAL: the reference's slow tool,
# a gap between calls under the expiry, and the margin and ping period it is judged with.
KEEPALIVE_OPTIONS: dict[str, Any] = {
    "slow_tool": "sleep",
    "slow_input": {"seconds": 1.0},
    "keepalive_gap": 0.6,
    "idle_expiry": IDLE_EXPIRY,
    "expiry_margin": 0.3,
    "ping_every": 0.3,
}


async def start_keepalive_server(host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """The reference server expiring idle sessions after `IDLE_EXPIRY` seconds: its keep-alive clauses are decided."""
    from checks.ors.reference import OrsServer, serve_app

    return await serve_app(OrsServer(idle_expiry=IDLE_EXPIRY, ping_interval=PING_INTERVAL), host, port)


RUNS = (
    ServerRun(name="reference", start="checks.ors.reference:start_reference_server", options=QUICK_OPTIONS),
    ServerRun(
        name="keepalive",
        start="checks.ors.conforming:start_keepalive_server",
        options={"timeout": 5, **KEEPALIVE_OPTIONS},
        phases=("keepalive",),
    ),
)
