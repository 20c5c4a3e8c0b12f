"""The PlugRL tap: both sides of every connection judged at once, by the plugrl-server and
plugrl-client suites' own judges (`checks.plugrl.judging`, `checks.plugrl_client.judging`,
`checks.plugrl.validation.read_infer` through the client's infer judge).

What a passive copy can decide: the handshake and compression, every frame's envelope and
arrays, metadata first and once, the alternation, each infer's and feedback's form, each
action against its infer and the metadata, feedback only for envs holding an action. What
needs the checker to send something of its own (faults, resyncs, big frames, the probe env,
timeouts, capacity) is `skip` "needs an active run".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.decision import Decision
from checks.errors import Refused
from checks.plugrl import judging as server_judging
from checks.plugrl import judging_phases
from checks.plugrl.clauses import CATALOGUE as SERVER_CATALOGUE
from checks.plugrl.codec import CodecError, unpack
from checks.plugrl_client import judging as client_judging
from checks.plugrl_client.clauses import CATALOGUE as CLIENT_CATALOGUE
from checks.report import Catalogue
from checks.tap.copies import Copy
from checks.tap.http1 import Head
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec
from checks.tap.watcher import Connection, ConnectionWatcher
from checks.tap.wsframes import BINARY, CLOSE, TEXT, FrameReader, WsMessage

FRAME_CAP = 64 * 1024 * 1024
REUSE = "reuse-feedback-obs"
CLIENT_FRAME = ("plugrl-client.2.binary-frames", "plugrl-client.2.msgpack-map", "plugrl-client.3.2.ndarray-form")
SERVER_FRAME = (server_judging.BINARY, server_judging.MSGPACK, server_judging.NDARRAY)
# Every clause a copy of the traffic decides; the rest of both catalogues needs an active run.
PASSIVE = frozenset(
    {
        server_judging.HANDSHAKE,
        "plugrl.1.1.no-compression",
        *SERVER_FRAME,
        *server_judging.CONNECTION_CLAUSES,
        *server_judging.ACTION_CLAUSES,
        *CLIENT_FRAME,
        "plugrl-client.1.1.no-compression",
        "plugrl-client.5.1.metadata-first",
        "plugrl-client.4.2.alternation",
        "plugrl-client.5.2.infer-form",
        "plugrl-client.5.2.observation-form",
        "plugrl-client.10.1.reuse-only-offered",
        "plugrl-client.10.1.reuse-held-only",
        "plugrl-client.5.4.feedback-form",
        "plugrl-client.5.4.rewards-float32",
        "plugrl-client.4.3.feedback-envs-held",
        "plugrl-client.8.one-feedback-per-action",
    }
)
# Judged per connection but not from a copy: another client alongside is the traffic's business.
PASSIVE -= {server_judging.ALONGSIDE}


def both_catalogues() -> Catalogue:
    catalogue = Catalogue()
    for clause in (*SERVER_CATALOGUE, *CLIENT_CATALOGUE):
        catalogue.add(clause.id, clause.level, clause.statement)
    return catalogue


@dataclass
class PlugrlConnection(Connection):
    """What one connection has shown so far, as the judges need it."""

    offered: list[str] = field(default_factory=list)  # Sec-WebSocket-Extensions the client offered
    metadata: dict[str, Any] | None = None
    client_spoke: bytes | None = None  # a client frame before the metadata
    expected: str = "infer"  # the client message due next
    envs: list[int] | None = None  # the infer awaiting its action
    holding: dict[int, Any] = field(default_factory=dict)  # envs holding an action
    held: dict[int, bool] = field(default_factory=dict)  # envs fed back: whether that ended the episode
    form: server_judging.ActionForm | None = None


def _decoded(data: bytes | str) -> dict[str, Any] | CodecError | None:
    if isinstance(data, str):
        return None
    try:
        return unpack(data, FRAME_CAP)
    except CodecError as exc:
        return exc


def _shown(message: WsMessage, data: bytes | str) -> str:
    kind = "text" if message.opcode == TEXT else "binary"
    return f"{kind} {message.size} bytes"


class PlugrlWatcher(ConnectionWatcher[PlugrlConnection]):
    def new_connection(self) -> PlugrlConnection:
        return PlugrlConnection()

    def readers(self) -> tuple[FrameReader, FrameReader]:
        return FrameReader(), FrameReader()

    def copied(self, copy: Copy, state: PlugrlConnection, ledger: Ledger) -> None:
        item = copy.item
        if isinstance(item, Head):
            self._head(copy, state, item, ledger)
        elif isinstance(item, WsMessage):
            self._message(copy, state, item, ledger)

    def _head(self, copy: Copy, state: PlugrlConnection, head: Head, ledger: Ledger) -> None:
        ledger.note(copy.connection, f"{copy.sender}: {head.start}")
        extensions = [v for value in head.values("sec-websocket-extensions") for v in [value.strip()] if v]
        if copy.sender == "client":
            state.offered = extensions
            ledger.decide(copy.connection, [client_judging.no_compression(extensions)])
            return
        upgraded = head.status() == 101
        handshake = server_judging.handshake(None if upgraded else _refusal(head))
        ledger.decide(copy.connection, handshake.decisions)
        if upgraded and "permessage-deflate" in _extension_names(state.offered):
            ledger.decide(copy.connection, [judging_phases.compression(_extension_names(extensions))])

    def _message(self, copy: Copy, state: PlugrlConnection, message: WsMessage, ledger: Ledger) -> None:
        if message.opcode == CLOSE:
            code, reason = message.close_code()
            ledger.note(copy.connection, f"{copy.sender}: close {code} {reason!r}")
            return
        if message.opcode not in (TEXT, BINARY):
            return  # ping and pong: the WebSocket layer's, no PlugRL message
        payload = message.payload()
        data: bytes | str = payload.decode("utf-8", "replace") if message.opcode == TEXT else payload
        decoded = _decoded(data)
        kind = decoded.get("message_type") if isinstance(decoded, dict) else None
        ledger.note(copy.connection, f"{copy.sender}: {kind or 'frame'} ({_shown(message, data)})")
        if copy.sender == "server":
            self._server_message(copy.connection, state, data, decoded, ledger)
        else:
            self._client_message(copy.connection, state, data, decoded, ledger)

    def _server_message(
        self, connection: int, state: PlugrlConnection, data: bytes | str, decoded: Any, ledger: Ledger
    ) -> None:
        framed = server_judging.frame(data, decoded, "a server message")
        ledger.decide(connection, framed.decisions)
        message = framed.value
        if message is None:
            return
        if state.metadata is None and state.order_lost:  # the first server message may have gone unjudged
            is_metadata = message.get("message_type") == "metadata" and isinstance(message.get("data"), dict)
            state.metadata = message["data"] if is_metadata else {}
            if is_metadata:
                ledger.decide(connection, server_judging.metadata_fields(state.metadata))
                return
        if state.metadata is None:
            judged = server_judging.metadata_message(message, server_judging.SPEAKS_FIRST)
            decisions = list(judged.decisions)
            if state.client_spoke is not None:
                # Only a frame that reached the tap before the metadata proves the client spoke first;
                # one after it may still have left the client before the metadata arrived there.
                decisions += client_judging.metadata_first(state.client_spoke, 0.0).decisions
            ledger.decide(connection, decisions)
            state.metadata = judged.value if judged.value is not None else {}
            return
        if state.envs is None:  # nothing asked: only a stray metadata can be judged
            if message.get("message_type") == "metadata":
                ledger.decide(connection, [server_judging.stray_metadata()])
            return
        envs, state.envs = state.envs, None
        if not ledger.judge(connection, server_judging.ACTION_CLAUSES, lambda: self._action(state, message, envs)):
            state.order_lost = True  # what the judge would have remembered is gone

    def _action(self, state: PlugrlConnection, message: dict[str, Any], envs: list[int]) -> list[Decision]:
        judged = server_judging.action_message(message, envs, server_judging.ANSWERED, state.metadata or {}, state.form)
        state.form = judged.value.form
        for env in envs:
            state.holding[env] = True
        return judged.decisions

    def _client_message(
        self, connection: int, state: PlugrlConnection, data: bytes | str, decoded: Any, ledger: Ledger
    ) -> None:
        if state.metadata is None and state.client_spoke is None:
            state.client_spoke = data.encode() if isinstance(data, str) else data
        framed = client_judging.frame(data, decoded)
        ledger.decide(connection, framed.decisions)
        message = framed.value
        if message is None:
            return
        kind = str(message.get("message_type"))
        if not state.order_lost:
            ledger.decide(connection, client_judging.sequence(kind, state.expected, False, []).decisions)
        if kind == "infer":
            judged = ledger.judge(connection, INFER_CLAUSES, lambda: self._infer(state, message))
        else:
            judged = ledger.judge(connection, FEEDBACK_CLAUSES, lambda: self._feedback(state, message))
        state.order_lost = state.order_lost or not judged

    def _infer(self, state: PlugrlConnection, message: dict[str, Any]) -> list[Decision]:
        reuse = server_judging.offers(state.metadata or {}, REUSE)
        judged = client_judging.infer_message(message, reuse_offered=reuse, held=state.held)
        decisions = list(judged.decisions)
        envs = judged.value.envs
        if judged.value.broken != "infer-form" and not state.order_lost:
            # lost = every env: only the one-feedback rule is judged, there is no probe t to continue
            decisions += client_judging.infer_continuity(
                envs, dict.fromkeys(envs, 0), state.holding, {}, {}, set(envs), True
            )
        state.envs = envs if judged.value.broken != "infer-form" else None
        state.expected = "feedback"
        return decisions

    def _feedback(self, state: PlugrlConnection, message: dict[str, Any]) -> list[Decision]:
        judged = client_judging.feedback_message(message)
        decisions = list(judged.decisions)
        state.expected = "infer"
        reading = judged.value
        if reading is None:
            return decisions
        for row, env in enumerate(reading.envs):
            held = state.holding.pop(env, None) is not None
            if held or not state.order_lost:
                decisions.append(client_judging.feedback_env(env, held, stale=False))
            state.held[env] = bool(np.asarray(reading.terminated)[row] or np.asarray(reading.truncated)[row])
        return decisions


INFER_CLAUSES = (
    "plugrl-client.5.2.infer-form",
    "plugrl-client.5.2.observation-form",
    "plugrl-client.10.1.reuse-only-offered",
    "plugrl-client.10.1.reuse-held-only",
    "plugrl-client.8.one-feedback-per-action",
)
FEEDBACK_CLAUSES = (
    "plugrl-client.5.4.feedback-form",
    "plugrl-client.5.4.rewards-float32",
    "plugrl-client.4.3.feedback-envs-held",
)


def _extension_names(values: list[str]) -> list[str]:
    """The extensions a Sec-WebSocket-Extensions header names, without their parameters."""
    return [name for value in values for offer in value.split(",") if (name := offer.split(";")[0].strip())]


def _refusal(head: Head) -> Refused:
    return Refused(f"the server answered {head.start!r}", status=head.status())


def spec() -> TapSpec:
    catalogue = both_catalogues()
    active = frozenset(clause.id for clause in catalogue if clause.id not in PASSIVE)
    return TapSpec(catalogue, active, frozenset(), PlugrlWatcher)
