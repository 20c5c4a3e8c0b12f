"""The plugrl-server suite's judges: what a PlugRL server's frames, messages and closes must be.

Each judge is a pure function of what was observed (a frame, a decoded
message, a close, a silence) and returns `Decision`s, with why the exchange
cannot go on where it cannot. `Probe` does the wire and records what these
decide; the phases name the clause at stake. None needs a live connection, so
the same judges decide a recorded transcript.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from checks.decision import Decision, Judged, check, error, missed, passed
from checks.errors import NoReply, PeerClosed, Refused
from checks.evidence import summarize, truncate
from checks.plugrl.codec import CodecError
from checks.plugrl.protocol import GOING_AWAY, RESYNC_REASON

HANDSHAKE = "plugrl.1.websocket-handshake"
SPEAKS_FIRST = "plugrl.5.1.speaks-first"
ALONGSIDE = "plugrl.6.concurrent-clients"
ANSWERED = "plugrl.5.3.answered-with-action"
METADATA_ONCE = "plugrl.4.1.metadata-once"
BINARY = "plugrl.2.binary-frames"
MSGPACK = "plugrl.2.msgpack-map"
NDARRAY = "plugrl.3.2.ndarray-form"

# Decided on every connection: its handshake, every frame it receives and its metadata.
CONNECTION_CLAUSES = (
    HANDSHAKE,
    SPEAKS_FIRST,
    BINARY,
    MSGPACK,
    NDARRAY,
    "plugrl.5.1.features-list",
    "plugrl.5.1.declared-ints",
    "plugrl.10.protocol-version",
)
# Decided on every answered infer.
ACTION_CLAUSES = (
    METADATA_ONCE,
    ANSWERED,
    "plugrl.5.3.action-array",
    "plugrl.5.3.action-numeric",
    "plugrl.5.3.time-major",
    "plugrl.5.3.horizon-positive",
    "plugrl.5.3.env-ids-form",
    "plugrl.4.3.env-ids-order",
    "plugrl.5.1.declared-horizon",
    "plugrl.5.1.declared-dim",
    "plugrl.5.3.same-dtype",
    "plugrl.5.3.same-shape",
    "plugrl.5.3.finite-values",
)


class ActionForm(NamedTuple):
    """The dtype and (H, *da) of a connection's first action, which every later one must keep."""

    dtype: np.dtype
    layout: tuple[int, ...]


def describe_close(closed: PeerClosed) -> str:
    if closed.by == "network":
        return "the connection dropped without a close frame"
    who = "the server" if closed.by == "peer" else "the checker"
    return f"{who} closed it with code {closed.code}, reason {truncate(closed.reason, 80)!r}"


def is_close(closed: PeerClosed, reason: str) -> bool:
    """Whether the server itself closed with 1001 and `reason`."""
    return closed.by == "peer" and closed.code == GOING_AWAY and closed.reason == reason


def _positive_int(value: Any) -> bool:
    return type(value) is int and value > 0


# ---------------------------------------------------------------- connections and frames


def handshake(refused: Refused | None, alongside: bool = False) -> Judged[None]:
    """The WebSocket handshake: completed (None) or refused; alongside another open connection or not."""
    if refused is None:
        return Judged(None, [passed(HANDSHAKE)])
    clause = ALONGSIDE if alongside else HANDSHAKE
    expected = "a WebSocket handshake" + (" while another connection is open" if alongside else "")
    decision = missed(clause, expected=expected, actual=f"it did not complete: {refused}")
    return Judged(None, [decision], f"the WebSocket handshake failed: {refused}")


def frame(data: bytes | str, decoded: dict[str, Any] | CodecError | None, what: str) -> Judged[dict[str, Any] | None]:
    """A received frame: binary, one msgpack map, arrays in the ndarray form. `decoded` is the
    codec's reading of a binary frame; the value is the message, None when there is none."""
    if isinstance(data, str):
        text = missed(BINARY, expected="a binary frame", actual=f"a text frame: {truncate(data, 120)!r}")
        return Judged(None, [text], "the server sent a text frame")
    decisions = [passed(BINARY)]
    if isinstance(decoded, CodecError) or decoded is None:
        clause = NDARRAY if isinstance(decoded, CodecError) and decoded.part == "array" else MSGPACK
        decisions.append(missed(clause, expected=f"{what} the codec can read", actual=str(decoded)))
        return Judged(None, decisions, "the server sent an undecodable frame")
    # The codec has checked every array in it.
    return Judged(decoded, [*decisions, passed(MSGPACK), passed(NDARRAY)])


def no_frame(
    at_stake: str, what: str, problem: PeerClosed | NoReply, frame_cap: int, refused: PeerClosed | None = None
) -> Judged[None]:
    """Nothing came where `what` was due: a close, or silence. `refused`: the checker had already
    closed the connection (an oversized or invalid frame) and was waiting for the server's answer."""
    closed = problem if isinstance(problem, PeerClosed) else refused
    if closed is not None and closed.by == "checker" and closed.code == 1009:
        decision = error(at_stake, f"the server sent a frame over the checker's frame_cap of {frame_cap} bytes")
    elif closed is not None:
        decision = missed(at_stake, expected=what, actual=describe_close(closed))
    else:
        decision = missed(at_stake, expected=f"{what} within {seconds(problem)}", actual="nothing arrived")
    if isinstance(problem, PeerClosed):
        return Judged(None, [decision], f"{describe_close(problem)} instead of sending {what}")
    return Judged(None, [decision], f"no {what} arrived within {seconds(problem)}")


def send_failed(at_stake: str, problem: PeerClosed | NoReply) -> Judged[None]:
    """The checker could not send: the connection closed, or the server stopped reading."""
    if isinstance(problem, PeerClosed):
        shown = describe_close(problem)
        decision = missed(at_stake, expected="the connection to stay open", actual=shown)
        return Judged(None, [decision], f"{shown} while the checker was sending")
    decision = missed(at_stake, expected="the server to read what it is sent", actual="sending stalled")
    return Judged(None, [decision], "sending stalled")


def seconds(problem: PeerClosed | NoReply) -> str:
    timeout = problem.timeout if isinstance(problem, NoReply) else None
    return f"{timeout:g}s" if timeout is not None else "the deadline"


# ---------------------------------------------------------------- metadata


def metadata_message(message: dict[str, Any], at_stake: str) -> Judged[dict[str, Any] | None]:
    """The first message of a connection: a metadata message whose data is a map, then its fields."""
    data = message.get("data")
    if message.get("message_type") != "metadata" or not isinstance(data, dict):
        decision = missed(
            at_stake,
            expected='first message {"message_type": "metadata", "data": {...}}',
            actual=f"the first message was {summarize(message, 160)}",
        )
        return Judged(None, [decision], "the server sent no metadata")
    return Judged(data, [passed(at_stake), *metadata_fields(data)])


def metadata_fields(data: dict[str, Any]) -> list[Decision]:
    """protocol_version, features, action_horizon and action_dim, each judged when sent."""
    decisions: list[Decision] = []
    if "protocol_version" in data:
        version = data["protocol_version"]
        decisions.append(
            check(
                type(version) is int and version == 1,
                "plugrl.10.protocol-version",
                expected="protocol_version 1",
                actual=f"protocol_version {truncate(repr(version), 60)}",
            )
        )
    if "features" in data:
        features = data["features"]
        decisions.append(
            check(
                isinstance(features, list) and all(isinstance(f, str) for f in features),
                "plugrl.5.1.features-list",
                expected="a list of strings",
                actual=f"features {summarize(features, 120)}",
            )
        )
    for key in ("action_horizon", "action_dim"):
        if key in data:
            value = data[key]
            decisions.append(
                check(
                    _positive_int(value),
                    "plugrl.5.1.declared-ints",
                    expected=f"{key} a positive integer",
                    actual=f"{key} {truncate(repr(value), 60)}",
                )
            )
    return decisions


def offers(metadata: dict[str, Any], feature: str) -> bool:
    features = metadata.get("features")
    return isinstance(features, list) and feature in features


# ---------------------------------------------------------------- actions


class ActionReading(NamedTuple):
    """What an action message held: the action array (None when it is not one) and the
    connection's action form after it (its first action's, once there is one)."""

    action: np.ndarray | None
    form: ActionForm | None


def action_message(
    message: dict[str, Any],
    envs: list[int],
    at_stake: str,
    metadata: dict[str, Any],
    form: ActionForm | None,
) -> Judged[ActionReading]:
    """The answer to an infer for `envs`: an action message, its env_ids and its action array.

    `form` is the connection's first action form, None before its first action.
    """
    kind = message.get("message_type")
    if kind == "metadata":
        decision = missed(METADATA_ONCE, expected="an action", actual="a second metadata message")
        return Judged(ActionReading(None, form), [decision], "the server sent metadata again")
    decisions = [passed(METADATA_ONCE)]
    data = message.get("data")
    if kind != "action" or not isinstance(data, dict):
        shown = f"message_type {truncate(repr(kind), 40)}" if kind == "action" else summarize(message, 160)
        decisions.append(missed(ANSWERED, expected='{"message_type": "action", "data": {...}}', actual=shown))
        return Judged(ActionReading(None, form), decisions, "an infer was not answered with an action")
    decisions += [passed(ANSWERED), passed(at_stake), *env_ids(envs, data.get("env_ids"))]
    array = action_array(len(envs), data.get("action"), metadata, form)
    return Judged(array.value, decisions + array.decisions)


def env_ids(envs: list[int], ids: Any) -> list[Decision]:
    """The action's env_ids: an <i8 [n] array (its form), equal to the infer's envs in order (its values)."""
    is_array = isinstance(ids, np.ndarray)
    shown_form = summarize(ids, 120) if ids is not None else "no env_ids"
    form = check(
        is_array and ids.dtype.str == "<i8" and ids.shape == (len(envs),),
        "plugrl.5.3.env-ids-form",
        expected=f"an ndarray <i8 [{len(envs)}]",
        actual=shown_form,
    )
    # The order is judged on the values whatever their form, which env-ids-form judges.
    readable = (is_array and ids.dtype.kind in "iuf" and ids.size == len(envs)) or (
        isinstance(ids, list) and all(type(v) is int for v in ids)
    )
    shown = ids.ravel().tolist() if is_array and readable else ids
    order = check(
        readable and shown == envs,
        "plugrl.4.3.env-ids-order",
        expected=f"env_ids {envs}",
        actual=summarize(shown, 120) if ids is not None else "no env_ids",
    )
    return [form, order]


def action_array(n: int, action: Any, metadata: dict[str, Any], form: ActionForm | None) -> Judged[ActionReading]:
    """The action of an answer for n envs: a numeric [H, n, *da] array, as declared, keeping the first one's form."""
    if not (isinstance(action, np.ndarray) and action.ndim >= 2):
        decision = missed("plugrl.5.3.action-array", expected="an ndarray [H, n, *da]", actual=summarize(action, 120))
        return Judged(ActionReading(None, form), [decision])
    shape = list(action.shape)
    decisions = [
        passed("plugrl.5.3.action-array", expected="an ndarray [H, n, *da]", actual=summarize(action, 120)),
        check(
            action.dtype.kind in "iuf",
            "plugrl.5.3.action-numeric",
            expected="an integer or float dtype",
            actual=f"dtype {action.dtype.str}",
        ),
        check(action.shape[0] >= 1, "plugrl.5.3.horizon-positive", expected="H >= 1", actual=f"shape {shape}"),
    ]
    layout_kept = action.shape[1] == n
    decisions.append(
        check(layout_kept, "plugrl.5.3.time-major", expected=f"shape [H, {n}, *da]", actual=f"shape {shape}")
    )
    if not layout_kept:  # a wrong layout makes the horizon and width checks meaningless
        return Judged(ActionReading(action, form), decisions)
    decisions += declared(action, metadata)
    form = form or ActionForm(action.dtype, (action.shape[0], *action.shape[2:]))
    decisions += same_form(action, form)
    if action.dtype.kind == "f":
        decisions.append(
            check(
                bool(np.isfinite(action).all()),
                "plugrl.5.3.finite-values",
                expected="finite values",
                actual=f"{int(np.count_nonzero(~np.isfinite(action)))} NaN or infinite values",
            )
        )
    return Judged(ActionReading(action, form), decisions)


def same_form(action: np.ndarray, first: ActionForm) -> list[Decision]:
    """Every action of a connection keeps the dtype and (H, *da) of its first."""
    layout = (action.shape[0], *action.shape[2:])
    return [
        check(
            action.dtype == first.dtype,
            "plugrl.5.3.same-dtype",
            expected=f"dtype {first.dtype.str}, as in the first action",
            actual=f"dtype {action.dtype.str}",
        ),
        check(
            layout == first.layout,
            "plugrl.5.3.same-shape",
            expected=f"H and da {list(first.layout)}, as in the first action",
            actual=f"H and da {list(layout)}",
        ),
    ]


def declared(action: np.ndarray, metadata: dict[str, Any]) -> list[Decision]:
    """The action's horizon and width against the metadata's action_horizon and action_dim, when declared."""
    decisions: list[Decision] = []
    horizon = metadata.get("action_horizon")
    if _positive_int(horizon):
        decisions.append(
            check(
                action.shape[0] == horizon,
                "plugrl.5.1.declared-horizon",
                expected=f"H = {horizon}, as declared",
                actual=f"H = {action.shape[0]}",
            )
        )
    width = metadata.get("action_dim")
    if _positive_int(width):
        actual = math.prod(action.shape[2:]) if action.ndim > 2 else 1
        decisions.append(
            check(
                actual == width,
                "plugrl.5.1.declared-dim",
                expected=f"{width} values per env and step, as declared",
                actual=f"{actual} (shape {list(action.shape)})",
            )
        )
    return decisions


# ---------------------------------------------------------------- resyncs


def stray_metadata() -> Decision:
    """A metadata message on a connection that already had one."""
    return missed(METADATA_ONCE, expected="one metadata message per connection", actual="a second metadata message")


def resync_expected(what: str) -> str:
    return f"after {what}: close 1001 {RESYNC_REASON!r}"


def resync(clause: str, what: str, outcome: PeerClosed | NoReply) -> Decision:
    """After a fault (`what`), the server must close the connection with 1001 plugrl-server-resync."""
    expected = resync_expected(what)
    if isinstance(outcome, NoReply):
        return missed(clause, expected=expected, actual=f"the connection stayed open for {seconds(outcome)}")
    return check(is_close(outcome, RESYNC_REASON), clause, expected=expected, actual=describe_close(outcome))


def answered_instead_of_resync(clause: str, what: str, kind: str, shown: str) -> Decision:
    """After a fault, the server sent a frame (`kind`, summarised as `shown`) instead of closing."""
    return missed(
        clause,
        expected=resync_expected(what),
        actual=f"the server answered with a {kind} frame: {truncate(shown, 160)}",
    )


def text_frame(data: str) -> Decision:
    return missed(BINARY, expected="a binary frame", actual=f"a text frame: {truncate(data, 120)!r}")
