"""The RLlink zoo: servers that conform except for ONE fault each, in either dialect.

Most are the reference server (`checks/rllink/reference.py`) with one hook
overridden (`faults.py`); two are raw sockets (`raw.py`).
`ZOO` maps a name to what the tests need: the server class, its dialect, the
clause the `rllink` suite must flag, and how to run the suite against it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from checks.rllink.codec import Dialect
from checks.rllink.reference import ReferenceServer, start_reference_server
from tests.zoo.entry import ZooEntry
from tests.zoo.rllink import faults
from tests.zoo.rllink.raw import HttpOnPort, MuteListener, RawServer

# Short deadlines and back-offs: a zoo server answers in milliseconds and recycles in 0.1 s.
ZOO_OPTIONS: dict[str, Any] = {"timeout": 2.0, "recycle_wait": 0.3, "quiet": 0.15, "second_client_wait": 0.5}
FRAGMENT = 32
RECYCLE = 0.1


@dataclass(frozen=True, kw_only=True)
class RLlinkServerEntry(ZooEntry):
    """A broken server: `start` is its class, started by `running(start, dialect)`."""

    dialect: Dialect
    until_stop: bool = False  # run the opt-in destructive phase too (None phases: every default one plus it)


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

ZOO: dict[str, RLlinkServerEntry] = {
    # listening and framing
    "mute-listener": RLlinkServerEntry(MuteListener, "rllink.listen.accepts", dialect="msgpack", may_error=True),
    "http-on-port": RLlinkServerEntry(
        HttpOnPort, "rllink.frame.header", dialect="msgpack", phases=HANDSHAKE, may_error=True
    ),
    "space-padded-header": RLlinkServerEntry(
        faults.SpacePaddedHeader, "rllink.frame.header", dialect="msgpack", phases=HANDSHAKE, may_error=True
    ),
    "char-count-header": RLlinkServerEntry(
        faults.CharCountHeader, "rllink.frame.header", dialect="json", may_error=True
    ),
    "trailing-byte": RLlinkServerEntry(
        faults.TrailingByte, "rllink.frame.header", dialect="msgpack", phases=HANDSHAKE, may_error=True
    ),
    "short-by-one-header": RLlinkServerEntry(
        faults.ShortByOneHeader, "rllink.frame.header", dialect="json", phases=HANDSHAKE, may_error=True
    ),
    # the body's form
    "type-as-bin": RLlinkServerEntry(
        faults.TypeAsBin, "rllink.body.form", dialect="msgpack", phases=HANDSHAKE, may_error=True
    ),
    "json-on-msgpack-port": RLlinkServerEntry(
        faults.JsonOnMsgpackPort,
        "rllink.body.form",
        dialect="msgpack",
        options=MSGPACK_ONLY,
        phases=HANDSHAKE,
        may_error=True,
    ),
    "top-level-array": RLlinkServerEntry(
        faults.TopLevelArray, "rllink.body.form", dialect="json", phases=HANDSHAKE, may_error=True
    ),
    "ping-reply-type": RLlinkServerEntry(
        faults.PingReply, "rllink.body.form", dialect="msgpack", phases=HANDSHAKE, may_error=True
    ),
    # PING
    "double-pong": RLlinkServerEntry(
        faults.DoublePong, "rllink.ping.pong", dialect="json", phases=HANDSHAKE, may_error=True
    ),
    # SET_CONFIG
    "config-as-str": RLlinkServerEntry(faults.ConfigAsStr, "rllink.config.set-config", dialect="msgpack"),
    "steps-as-string": RLlinkServerEntry(faults.StepsAsString, "rllink.config.set-config", dialect="json"),
    # SET_STATE
    "onnx-bad-base64": RLlinkServerEntry(faults.OnnxBadBase64, "rllink.state.shape", dialect="json", may_error=True),
    "onnx-not-gzipped": RLlinkServerEntry(faults.OnnxNotGzipped, "rllink.state.shape", dialect="json", may_error=True),
    "onnx-not-loadable": RLlinkServerEntry(
        faults.OnnxNotLoadable, "rllink.state.shape", dialect="json", may_error=True
    ),
    "onnx-wrong-logits": RLlinkServerEntry(
        faults.OnnxWrongLogits, "rllink.state.shape", dialect="json", may_error=True
    ),
    "short-array-data": RLlinkServerEntry(
        faults.ShortArrayData, "rllink.state.shape", dialect="msgpack", may_error=True
    ),
    "empty-module": RLlinkServerEntry(faults.EmptyModule, "rllink.state.shape", dialect="msgpack", may_error=True),
    # EPISODES, order, liveness
    "acks-episodes": RLlinkServerEntry(faults.AcksEpisodes, "rllink.episodes.no-reply", dialect="json", may_error=True),
    "pong-overtakes": RLlinkServerEntry(
        faults.PongOvertakes, "rllink.order.pipelined", dialect="msgpack", may_error=True
    ),
    "needs-two-fragments": RLlinkServerEntry(
        faults.NeedsTwoFragments, "rllink.liveness.on-policy", dialect="msgpack", may_error=True
    ),
    # weights_seq_no
    "counts-down": RLlinkServerEntry(
        faults.CountsDown, "rllink.seq.monotonic", dialect="json", knock_on=frozenset({"rllink.seq.strict"})
    ),
    "seq-per-connection": RLlinkServerEntry(faults.SeqPerConnection, "rllink.seq.monotonic", dialect="msgpack"),
    "stuck-seq": RLlinkServerEntry(
        faults.StuckSeq, "rllink.seq.monotonic", dialect="msgpack", knock_on=frozenset({"rllink.seq.strict"})
    ),
    "skips-seq": RLlinkServerEntry(faults.SkipsSeq, "rllink.seq.strict", dialect="json"),
    # malformed frames: hung, wedged, died
    "hangs-on-bad-header": RLlinkServerEntry(
        faults.HangsOnBadHeader, "rllink.malformed.recovery", dialect="msgpack", may_error=True
    ),
    # Named: under auto, the msgpack PING that detects the dialect is itself a malformed frame for it.
    "wedges-on-garbage": RLlinkServerEntry(
        faults.WedgesOnGarbage, "rllink.malformed.recovery", dialect="json", options={"dialect": "json"}, may_error=True
    ),
    "closes-for-good": RLlinkServerEntry(
        faults.ClosesForGood, "rllink.malformed.recovery", dialect="msgpack", may_error=True
    ),
    # semantically bad episodes (destructive, opt-in)
    "wedges-on-bad-episodes": RLlinkServerEntry(
        faults.WedgesOnBadEpisodes, "rllink.payload.robustness", dialect="msgpack", until_stop=True, may_error=True
    ),
    "dies-on-bad-episodes": RLlinkServerEntry(
        faults.DiesOnBadEpisodes, "rllink.payload.robustness", dialect="json", until_stop=True, may_error=True
    ),
    # a second client
    "one-client-at-a-time": RLlinkServerEntry(faults.OneClientAtATime, "rllink.client.second", dialect="msgpack"),
}
