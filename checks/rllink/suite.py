"""The rllink suite: plays RLlib's external simulator against an RLlink server and grades the server.

The phases share one connection where they can, because RLlib stops
listening for about five seconds whenever a connection ends. `destructive`,
whose probes kill RLlib's listener for good, is opt-in and last.
"""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.rllink.clauses import CATALOGUE
from checks.rllink.options import RLlinkOptions, RLlinkState
from checks.rllink.phase_batches import batches_phase
from checks.rllink.phase_destructive import destructive_phase
from checks.rllink.phase_handshake import handshake_phase
from checks.rllink.phase_malformed import malformed_phase
from checks.rllink.phase_second_client import second_client_phase
from checks.rllink.phase_tolerance import tolerance_phase

MALFORMED_PROBES = 10

PHASES = (
    Phase(
        "handshake",
        handshake_phase,
        (
            "rllink.listen.accepts",
            "rllink.frame.header",
            "rllink.body.form",
            "rllink.ping.pong",
            "rllink.config.set-config",
            "rllink.config.pickle",
            "rllink.state.shape",
            "rllink.order.pipelined",
            "rllink.seq.monotonic",
        ),
        "PING, GET_CONFIG and GET_STATE one by one, the dialect detected, then pipelined",
        budget=10.0,
        waits=lambda options: 2 * options.recycle_wait + options.quiet,
    ),
    Phase(
        "batches",
        batches_phase,
        (
            "rllink.episodes.no-reply",
            "rllink.order.pipelined",
            "rllink.liveness.on-policy",
            "rllink.seq.monotonic",
            "rllink.seq.strict",
        ),
        "a bare EPISODES, then full on-policy batches at the advertised step count",
        budget=12.0,
        waits=lambda options: options.batches * options.timeout + options.recycle_wait,
    ),
    Phase(
        "malformed",
        malformed_phase,
        ("rllink.malformed.recovery", "rllink.state.shape", "rllink.seq.monotonic"),
        f"{MALFORMED_PROBES} malformed frames, each followed by a fresh connection's PING after the back-off",
        budget=2.0 * MALFORMED_PROBES,
        waits=lambda options: MALFORMED_PROBES * (2 * options.recycle_wait + 2 * options.quiet),
    ),
    Phase(
        "tolerance",
        tolerance_phase,
        ("rllink.types.ignored", "rllink.header.lenient"),
        "unhandled type names and headers only int() reads (informational)",
        budget=8.0,
        waits=lambda options: 3 * (2 * options.recycle_wait + 2 * options.quiet),
    ),
    Phase(
        "second-client",
        second_client_phase,
        ("rllink.client.second", "rllink.ping.pong"),
        "a second connection while the first is served, then a new one after the first left",
        budget=4.0,
        waits=lambda options: options.second_client_wait + 2 * options.recycle_wait,
    ),
    Phase(
        "destructive",
        destructive_phase,
        ("rllink.payload.robustness",),
        "semantically bad EPISODES and a short on-policy batch (RLlib does not survive them): opt-in",
        default=False,
        budget=12.0,
        waits=lambda options: 4 * (2 * options.recycle_wait + 2 * options.quiet),
    ),
)

SUITE = Suite(
    kind="rllink",
    title="RLlink (RLlib external env) server",
    url_schemes=("tcp",),
    options_model=RLlinkOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    spec_version="RLlink 0.0.1 (Ray 2.41-2.60)",
    url_example="tcp://127.0.0.1:5555",
    new_state=RLlinkState,
    close_state=RLlinkState.aclose,
)
