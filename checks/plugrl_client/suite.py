"""The plugrl-client suite: rlconform plays a PlugRL server, the env client connects and is graded.

Each scenario is a phase with a client session of its own: after a stop (or the
text frame) a conforming client exits, so later scenarios ask for it to be
started again through the run's announcements. The passive clauses are declared
with their judges and listed under basic, but decided on every frame of every scenario.
"""

from __future__ import annotations

from typing import Any

from checks.core import ListenPolicy, Phase, Suite
from checks.listen import WebSocketListener
from checks.plugrl_client.clauses import CATALOGUE
from checks.plugrl_client.judging import PASSIVE_CLAUSES
from checks.plugrl_client.options import PlugRLClientOptions, RunState
from checks.plugrl_client.phase_basic import basic_phase
from checks.plugrl_client.phase_resync import RECONNECT_GRACE, resync_phase
from checks.plugrl_client.phase_reuse import reuse_phase
from checks.plugrl_client.phase_text import text_phase


def _session_wait(options: Any) -> float:
    """A phase waits for its client to (re)start, then for every exchange of the scenario."""
    return float(options.connect_deadline + options.reconnect_window + 2 * options.steps * options.timeout)


async def _listen(options: Any, policy: ListenPolicy) -> WebSocketListener:
    return await WebSocketListener.start(options, policy)


PHASES = (
    Phase(
        "basic",
        basic_phase,
        (
            "plugrl-client.1.1.no-compression",
            "plugrl-client.1.1.large-frame",
            "plugrl-client.5.1.metadata-first",
            "plugrl-client.5.1.unknown-keys",
            "plugrl-client.5.3.reads-env-ids",
            "plugrl-client.7.1.no-reconnect-after-stop",
            *PASSIVE_CLAUSES,
        ),
        "a 2 MiB unknown metadata key, no deflate, float64 position-coded actions, then a stop after which "
        "the client should exit",
        budget=4.0,
        waits=_session_wait,
    ),
    Phase(
        "resync",
        resync_phase,
        (
            "plugrl-client.7.2.reconnects-after-resync",
            "plugrl-client.7.6.fresh-infer-after-reconnect",
            "plugrl-client.7.6.no-stale-feedback",
        ),
        "closed with plugrl-server-resync right after an action: the client reconnects and starts with an infer",
        budget=6.0,
        waits=lambda options: _session_wait(options) + RECONNECT_GRACE,
    ),
    Phase(
        "reuse",
        reuse_phase,
        ("plugrl-client.10.1.reuse-held-only", "plugrl-client.10.1.reuse-used"),
        "the metadata lists reuse-feedback-obs: reused rows must be observations the server holds",
        budget=4.0,
        waits=_session_wait,
    ),
    Phase(
        "text",
        text_phase,
        ("plugrl-client.7.4.text-fatal",),
        "the first infer is answered by a text frame: the client closes and sends nothing more",
        budget=4.0,
        waits=lambda options: float(options.connect_deadline),
    ),
)

SUITE = Suite(
    kind="plugrl-client",
    title="PlugRL env client",
    url_schemes=(),
    options_model=PlugRLClientOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    spec_version="1",
    url_example="127.0.0.1:0 (the address to listen on)",
    new_state=RunState,
    listener=_listen,
    reference_client="plugrl",
)
