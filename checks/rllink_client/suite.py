"""The rllink-client suite: rlconform plays RLlib's external-inference server, the external client connects.

`session` serves the handshake and `batches` on-policy batches, judging every
frame and episode; `reconnect` then ends the connection the way RLlib recycles
its listener (closed, not listening for `recycle` seconds) and watches whether
the client comes back and repeats the handshake.
"""

from __future__ import annotations

from typing import Any

from checks.core import ListenPolicy, Phase, Suite
from checks.listen import TcpListener
from checks.rllink_client.clauses import CATALOGUE
from checks.rllink_client.options import RLlinkClientOptions, RunState
from checks.rllink_client.phase_reconnect import reconnect_phase
from checks.rllink_client.phase_session import session_phase


def _session_wait(options: Any) -> float:
    """The client may take the whole deadline to connect; each batch step is then one exchange."""
    return float(options.connect_deadline + options.batches * (options.timeout + options.reply_delay))


async def _listen(options: Any, policy: ListenPolicy) -> TcpListener:
    return await TcpListener.start(options, policy)


PHASES = (
    Phase(
        "session",
        session_phase,
        (
            "rllink-client.connect.speaks",
            "rllink-client.dialect",
            "rllink-client.handshake.ping-first",
            "rllink-client.handshake.config-state-first",
            "rllink-client.frame.header",
            "rllink-client.frame.type",
            "rllink-client.req-resp.waits",
            "rllink-client.req-resp.episodes-no-reply",
            "rllink-client.batch.size",
            "rllink-client.batch.timesteps",
            "rllink-client.episode.fields",
            "rllink-client.episode.shape",
            "rllink-client.values.spaces",
            "rllink-client.values.logp",
            "rllink-client.onpolicy.weights",
            "rllink-client.chunk.continuity",
        ),
        "the handshake, then `batches` on-policy batches: frames, episodes and dist inputs checked against "
        "the checker's own forward pass of the weights it sent",
        budget=8.0,
        waits=_session_wait,
    ),
    Phase(
        "reconnect",
        reconnect_phase,
        ("rllink-client.connect.retries", "rllink-client.disconnect.handles-close"),
        "the server closes the connection and stops listening for `recycle` seconds, as RLlib does; a client that "
        "comes back must repeat the handshake",
        budget=8.0,
        waits=lambda options: float(
            options.connect_deadline + options.recycle + options.reconnect_window + options.reply_delay * 4
        ),
    ),
)

SUITE = Suite(
    kind="rllink-client",
    title="RLlink external env client",
    url_schemes=(),
    options_model=RLlinkClientOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    spec_version="RLlink 0.0.1 (Ray 2.41-2.60)",
    url_example="127.0.0.1:0 (the address to listen on)",
    new_state=RunState,
    listener=_listen,
    reference_client="rllink",
)
