"""The RLlink zoo: servers that conform except for ONE fault each, in either dialect.

Most are the reference server (`checks/rllink/reference.py`) with one hook
overridden (`rllink_faults.py`); two are raw sockets (`rllink_raw.py`).
`ZOO` maps a name to what the tests need: the server class, its dialect, the
clause the `rllink` suite must flag, and how to run the suite against it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from checks.rllink.codec import Dialect
from checks.rllink.reference import ReferenceServer, start_reference_server
from tests.zoo import rllink_faults as faults
from tests.zoo.rllink_raw import HttpOnPort, MuteListener, RawServer

# Short deadlines and back-offs: a zoo server answers in milliseconds and recycles in 0.1 s.
ZOO_OPTIONS: dict[str, Any] = {"timeout": 2.0, "recycle_wait": 0.3, "quiet": 0.15, "second_client_wait": 0.5}
FRAGMENT = 32
RECYCLE = 0.1


@dataclass(frozen=True)
class ZooEntry:
    """One broken server and how the suite must see it."""

    factory: type[ReferenceServer] | type[RawServer]
    dialect: Dialect
    clause: str  # the clause the suite must flag (fail for MUST, warn for SHOULD)
    options: dict[str, Any] = field(default_factory=dict)  # suite options over ZOO_OPTIONS
    phases: tuple[str, ...] | None = None  # None: every default phase (plus destructive when until_stop)
    until_stop: bool = False  # run the opt-in destructive phase too
    knock_on: frozenset[str] = frozenset()  # other clauses the same fault may also fail
    may_error: bool = False  # the fault stops phases early, leaving some clauses `error`


@contextlib.asynccontextmanager
async def running(factory: type[ReferenceServer] | type[RawServer], dialect: Dialect) -> AsyncIterator[Any]:
    """The server started on 127.0.0.1 and a free port, closed on the way out whatever happened."""
    server: Any
    if issubclass(factory, RawServer):
        server = factory()
        await server.start()
    else:
        server = await start_reference_server(
            dialect=dialect, fragment_length=FRAGMENT, recycle=RECYCLE, server_class=factory
        )
    try:
        yield server
    finally:
        await server.close()


MSGPACK_ONLY = {"dialect": "msgpack"}
HANDSHAKE = ("handshake",)

ZOO: dict[str, ZooEntry] = {
    # listening and framing
    "mute-listener": ZooEntry(MuteListener, "msgpack", "rllink.listen.accepts", may_error=True),
    "http-on-port": ZooEntry(HttpOnPort, "msgpack", "rllink.frame.header", phases=HANDSHAKE, may_error=True),
    "space-padded-header": ZooEntry(
        faults.SpacePaddedHeader, "msgpack", "rllink.frame.header", phases=HANDSHAKE, may_error=True
    ),
    "char-count-header": ZooEntry(faults.CharCountHeader, "json", "rllink.frame.header", may_error=True),
    "trailing-byte": ZooEntry(faults.TrailingByte, "msgpack", "rllink.frame.header", phases=HANDSHAKE, may_error=True),
    "short-by-one-header": ZooEntry(
        faults.ShortByOneHeader, "json", "rllink.frame.header", phases=HANDSHAKE, may_error=True
    ),
    # the body's form
    "type-as-bin": ZooEntry(faults.TypeAsBin, "msgpack", "rllink.body.form", phases=HANDSHAKE, may_error=True),
    "json-on-msgpack-port": ZooEntry(
        faults.JsonOnMsgpackPort, "msgpack", "rllink.body.form", options=MSGPACK_ONLY, phases=HANDSHAKE, may_error=True
    ),
    "top-level-array": ZooEntry(faults.TopLevelArray, "json", "rllink.body.form", phases=HANDSHAKE, may_error=True),
    "ping-reply-type": ZooEntry(faults.PingReply, "msgpack", "rllink.body.form", phases=HANDSHAKE, may_error=True),
    # PING
    "double-pong": ZooEntry(faults.DoublePong, "json", "rllink.ping.pong", phases=HANDSHAKE, may_error=True),
    # SET_CONFIG
    "config-as-str": ZooEntry(faults.ConfigAsStr, "msgpack", "rllink.config.set-config"),
    "steps-as-string": ZooEntry(faults.StepsAsString, "json", "rllink.config.set-config"),
    # SET_STATE
    "onnx-bad-base64": ZooEntry(faults.OnnxBadBase64, "json", "rllink.state.shape", may_error=True),
    "onnx-not-gzipped": ZooEntry(faults.OnnxNotGzipped, "json", "rllink.state.shape", may_error=True),
    "onnx-not-loadable": ZooEntry(faults.OnnxNotLoadable, "json", "rllink.state.shape", may_error=True),
    "onnx-wrong-logits": ZooEntry(faults.OnnxWrongLogits, "json", "rllink.state.shape", may_error=True),
    "short-array-data": ZooEntry(faults.ShortArrayData, "msgpack", "rllink.state.shape", may_error=True),
    "empty-module": ZooEntry(faults.EmptyModule, "msgpack", "rllink.state.shape", may_error=True),
    # EPISODES, order, liveness
    "acks-episodes": ZooEntry(faults.AcksEpisodes, "json", "rllink.episodes.no-reply", may_error=True),
    "pong-overtakes": ZooEntry(faults.PongOvertakes, "msgpack", "rllink.order.pipelined", may_error=True),
    "needs-two-fragments": ZooEntry(faults.NeedsTwoFragments, "msgpack", "rllink.liveness.on-policy", may_error=True),
    # weights_seq_no
    "counts-down": ZooEntry(
        faults.CountsDown, "json", "rllink.seq.monotonic", knock_on=frozenset({"rllink.seq.strict"})
    ),
    "seq-per-connection": ZooEntry(faults.SeqPerConnection, "msgpack", "rllink.seq.monotonic"),
    "stuck-seq": ZooEntry(
        faults.StuckSeq, "msgpack", "rllink.seq.monotonic", knock_on=frozenset({"rllink.seq.strict"})
    ),
    "skips-seq": ZooEntry(faults.SkipsSeq, "json", "rllink.seq.strict"),
    # malformed frames: hung, wedged, died
    "hangs-on-bad-header": ZooEntry(faults.HangsOnBadHeader, "msgpack", "rllink.malformed.recovery", may_error=True),
    # Named: under auto, the msgpack PING that detects the dialect is itself a malformed frame for it.
    "wedges-on-garbage": ZooEntry(
        faults.WedgesOnGarbage, "json", "rllink.malformed.recovery", options={"dialect": "json"}, may_error=True
    ),
    "closes-for-good": ZooEntry(faults.ClosesForGood, "msgpack", "rllink.malformed.recovery", may_error=True),
    # semantically bad episodes (destructive, opt-in)
    "wedges-on-bad-episodes": ZooEntry(
        faults.WedgesOnBadEpisodes, "msgpack", "rllink.payload.robustness", until_stop=True, may_error=True
    ),
    "dies-on-bad-episodes": ZooEntry(
        faults.DiesOnBadEpisodes, "json", "rllink.payload.robustness", until_stop=True, may_error=True
    ),
    # a second client
    "one-client-at-a-time": ZooEntry(faults.OneClientAtATime, "msgpack", "rllink.client.second"),
}
