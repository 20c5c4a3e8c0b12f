"""The rllink suite's message rules as pure functions: an observed frame, reply or exchange in, Decisions out.

Nothing here holds a connection: the phases read the wire (`link`, `session`)
and record what these judges decide, and the same judges can read a recorded
transcript's messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checks.decision import Decision, check, info, missed, passed
from checks.errors import Malformed
from checks.evidence import truncate
from checks.rllink.codec import BodyError, Dialect, NotAMessage, PickleRefused, Undecodable, sniff_dialect
from checks.rllink.options import RLlinkOptions
from checks.rllink.pickle_scan import scan
from checks.rllink.weights import NotJudged, WeightsProblem, check_weights, seq_of

REPLY_TYPES = ("PONG", "SET_CONFIG", "SET_STATE")
RECOVERED = "closed and recovered, or kept answering"


# ---------------------------------------------------------------- frames and reply types


def header_held(header: bytes) -> Decision:
    return passed("rllink.frame.header", actual=f"header {header.decode()}")


def frame_fault(exc: Malformed, dialect: Dialect | None) -> Decision:
    """A reply that did not decode: the header, the body's form, or a slip between them."""
    sniffed = sniff_dialect(exc.data) if isinstance(exc, BodyError) and exc.data else None
    if isinstance(exc, NotAMessage):
        return missed("rllink.body.form", expected="a map with a str `type`", actual=str(exc))
    if isinstance(exc, Undecodable) and sniffed not in (None, dialect):
        return missed("rllink.body.form", expected=f"a {dialect} body", actual=f"a {sniffed} body: {exc}")
    if isinstance(exc, BodyError):
        return missed(
            "rllink.frame.header",
            expected="a body of exactly the announced length that decodes completely",
            actual=str(exc),
        )
    return missed("rllink.frame.header", expected="8 ASCII digits", actual=str(exc))


def pickled_array(exc: PickleRefused) -> Decision:
    return missed(
        "rllink.body.form", expected="msgpack-numpy arrays of plain dtypes", actual=f"{exc} (never unpickled)"
    )


def reply_type(message: Mapping[str, Any], want: str, clause: str, overtaken: str | None = None) -> list[Decision]:
    """A decoded reply where `want` was due: its type is a reply type, and `want` (else `overtaken` or `clause` misses).

    The list ends at the first miss; a reply that holds every rule returns no miss.
    """
    kind = message["type"]
    if kind not in REPLY_TYPES:
        return [
            missed(
                "rllink.body.form",
                expected=f"type one of {', '.join(REPLY_TYPES)}",
                actual=f"type {truncate(kind, 40)!r}",
            )
        ]
    form = passed("rllink.body.form", actual=f"a map of type {kind}")
    if kind != want:
        return [form, came_instead(overtaken or clause, want, kind)]
    return [form]


def came_instead(clause: str, want: str, kind: str) -> Decision:
    """A reply of type `kind` came where `want` was due (a reply overtaken by a later one, or the wrong one)."""
    return missed(clause, expected=want, actual=f"{kind} came instead")


def unasked(kind: str, after_bare_episodes: bool) -> Decision:
    """A reply no request called for: one to a bare EPISODES, a second PONG, or any other extra reply."""
    if after_bare_episodes:
        return missed("rllink.episodes.no-reply", expected="no reply to a bare EPISODES", actual=f"{kind} came")
    if kind == "PONG":
        return missed("rllink.ping.pong", expected="one PONG per PING", actual="a PONG nobody asked for")
    return missed("rllink.order.pipelined", expected="one reply per reply-bearing request", actual=f"{kind} unasked")


def opening_reply(kind: str, dialect: Dialect) -> list[Decision]:
    """The reply to the very first PING: a PONG passes listen, ping and form; another type misses one of them."""
    clause = "rllink.body.form" if kind not in ("SET_CONFIG", "SET_STATE") else "rllink.ping.pong"
    if kind != "PONG":
        return [missed(clause, expected="PONG", actual=f"type {kind!r}")]
    return [
        passed(clause, expected="PONG", actual=f"type {kind!r}"),
        passed("rllink.listen.accepts", actual=f"PONG ({dialect} dialect)"),
        passed("rllink.ping.pong", actual="PING answered with PONG"),
    ]


def misses(decisions: Sequence[Decision]) -> bool:
    return any(decision.missed for decision in decisions)


# ---------------------------------------------------------------- SET_CONFIG and SET_STATE


@dataclass(frozen=True)
class ConfigJudgement:
    decisions: list[Decision]
    fragment_length: int | None = None  # what the SET_CONFIG states readably, if anything
    fragment_source: str = ""


def config(message: Mapping[str, Any], dialect: Dialect) -> ConfigJudgement:
    """rllink.config.set-config (and, for msgpack, what the pickled config says: rllink.config.pickle)."""
    clause = "rllink.config.set-config"
    if dialect == "json":
        steps, on_policy = message.get("env_steps_per_sample"), message.get("force_on_policy")
        ok = isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1 and isinstance(on_policy, bool)
        decision = check(
            ok,
            clause,
            expected="env_steps_per_sample an int >= 1, force_on_policy a bool",
            actual=f"env_steps_per_sample={steps!r}, force_on_policy={on_policy!r}",
        )
        if ok and isinstance(steps, int):
            return ConfigJudgement([decision], steps, f"env_steps_per_sample = {steps} from SET_CONFIG")
        return ConfigJudgement([decision])
    blob = message.get("config")
    decision = check(
        isinstance(blob, bytes), clause, expected="`config` as bin", actual=f"`config` is {type(blob).__name__}"
    )
    if not isinstance(blob, bytes):
        return ConfigJudgement([decision])
    facts = scan(blob)
    value, how = facts.fragment_length()
    pickle = info(
        "rllink.config.pickle",
        actual=f"a {facts.size}-byte pickle, {facts.opcodes} opcodes, classes named "
        f"{', '.join(facts.globals_named[:5]) or 'none'}; {how}",
    )
    return ConfigJudgement([decision, pickle], value, how)


@dataclass(frozen=True)
class StateJudgement:
    decisions: list[Decision]
    seq: int | None  # None: the weights or the seq are unusable, and nothing after this SET_STATE can be judged


def state(
    message: Mapping[str, Any], dialect: Dialect, options: RLlinkOptions, seqs: Sequence[int], after: str
) -> StateJudgement:
    """rllink.state.shape, then rllink.seq.monotonic against the sequence numbers seen before (`seqs`)."""
    try:
        seq = seq_of(dict(message), dialect)
        found = check_weights(dict(message), dialect, options)
    except WeightsProblem as exc:
        return StateJudgement(
            [missed("rllink.state.shape", expected="usable weights and a seq", actual=str(exc))], None
        )
    except NotJudged as exc:
        shape = info("rllink.state.shape", actual=f"not judged, because {exc}")
        seq = seq_of(dict(message), dialect)
    else:
        shape = passed("rllink.state.shape", actual=f"weights_seq_no {seq}; {found}")
    return StateJudgement([shape, seq_not_lower(seq, seqs, after)], seq)


def seq_not_lower(seq: int, seqs: Sequence[int], after: str) -> Decision:
    highest = max(seqs, default=0)
    return check(
        seq >= highest,
        "rllink.seq.monotonic",
        expected=f"weights_seq_no >= {highest}",
        actual=f"{seq} after {after} (earlier: {list(seqs[-5:])})",
    )


def batch_rises(previous: int, rises: Sequence[int]) -> list[Decision]:
    """Over K full batches the sequence rises by at least K-1 (RLlib's stale-state race may repeat one), +1 each."""
    rise, least = rises[-1] - previous, len(rises) - 1
    steps_seen = [b - a for a, b in zip([previous, *rises], rises, strict=False)]
    return [
        check(
            rise >= least,
            "rllink.seq.monotonic",
            expected=f"a rise of at least {least} over {len(rises)} full batches",
            actual=f"from {previous}: {list(rises)} (a rise of {rise})",
        ),
        check(
            all(step == 1 for step in steps_seen),
            "rllink.seq.strict",
            expected="weights_seq_no +1 per batch",
            actual=f"from {previous}: {list(rises)}",
        ),
    ]


# ---------------------------------------------------------------- exchanges


def episodes_silence(extra: bytes | None, closed: str | None) -> Decision | None:
    """After a bare EPISODES: a close or any reply misses rllink.episodes.no-reply; silence decides nothing yet."""
    if closed is not None:
        return missed("rllink.episodes.no-reply", expected="no reply", actual=closed)
    if extra is not None:
        return missed("rllink.episodes.no-reply", expected="no reply", actual=f"it answered: {extra!r}")
    return None


def ping_alone(extra: bytes | None, quiet: float) -> Decision | None:
    """After the opening PONG: more bytes miss rllink.ping.pong."""
    if extra is None:
        return None
    return missed(
        "rllink.ping.pong", expected=f"one PONG, then silence for {quiet:g}s", actual=f"more bytes: {extra!r}"
    )


def recovery(clause: str, what: str, outcome: str, detail: str, recovered: bool) -> Decision:
    """rllink.malformed.recovery / rllink.payload.robustness after a bad input: recovered, or how it was not."""
    if recovered:
        return passed(clause, actual=f"after {what}: {outcome}")
    return missed(clause, expected=RECOVERED, actual=f"after {what}: {outcome}: {detail}")


def second_client(seen: str, wait: float) -> Decision | None:
    """A second client left hanging (or answered wrongly) misses rllink.client.second; refused or served waits."""
    if seen not in ("hanging", "answered wrongly"):
        return None
    return missed(
        "rllink.client.second",
        expected="the second client refused or served",
        actual=f"its PING got no PONG within {wait:g}s: left {seen}",
    )


def no_reply(clause: str, want: str, wait: float, closed: str | None) -> Decision:
    """Where `want` was due within `wait` seconds: silence (`closed` None), or the connection ended (how)."""
    if closed is None:
        return missed(clause, expected=f"{want} within {wait:g}s", actual="nothing arrived")
    return missed(clause, expected=want, actual=f"the connection ended ({closed})")


def opening_unanswered(timeout: float, closed: str | None) -> Decision:
    """Every opening PING: the port was open, but nothing answered it (`closed` None) or the server closed."""
    if closed is None:
        return missed(
            "rllink.listen.accepts",
            expected=f"a PONG within {timeout:g}s",
            actual="connected, but nothing answered the PING",
        )
    return missed("rllink.listen.accepts", expected="a PONG", actual=f"the server closed the connection ({closed})")


def replies_in_order(replies: str) -> Decision:
    """Pipelined requests whose replies (`replies`) each came where it was due: in request order."""
    return passed("rllink.order.pipelined", actual=f"{replies} in request order")


def pong_after(what: str) -> Decision:
    """A PING after `what` got its PONG."""
    return passed("rllink.ping.pong", actual=f"a PING after {what} got its PONG")


def episodes_unanswered(request: str, reply: str) -> Decision:
    """A bare EPISODES met silence: the next frame was `reply`, answering the `request` sent after it."""
    return passed("rllink.episodes.no-reply", actual=f"silence, then the {request}'s {reply}")


def fragment_unknown() -> list[Decision]:
    """The clauses that need the server's fragment length, when neither the server nor the options gave it."""
    why = "not judged, because the server's fragment length is unknown: set the fragment_length option"
    return [info("rllink.liveness.on-policy", actual=why), info("rllink.seq.strict", actual=why)]


def batches_answered(batches: int, steps: int, source: str) -> Decision:
    """Every on-policy batch of exactly the fragment length got its SET_STATE in time."""
    return passed(
        "rllink.liveness.on-policy",
        actual=f"{batches} batches of exactly {steps} steps ({source}) each got SET_STATE",
    )


def served_after_first_left(seen: str, problem: str | None) -> Decision:
    """After the first client left: a new client was served (`problem` None), or how it was not."""
    if problem is not None:
        return missed("rllink.client.second", expected="a new client served after the first left", actual=problem)
    return passed("rllink.client.second", actual=f"second client {seen}; after the first left a new client was served")


def types_ignored(after: str, recovery: str = "") -> Decision:
    """What followed a PING sent after unhandled type names: `after` ("PONG", another type, or a failure)."""
    if after == "PONG":
        return info("rllink.types.ignored", actual="GET_ACTION, PONG, LOG_RETURNS ignored; the next PING got its PONG")
    return info("rllink.types.ignored", actual=f"after unhandled types the PING got {after}; {recovery}")


def headers_lenient(seen: Sequence[str]) -> Decision:
    """How the server took headers only a lenient int() reads."""
    return info("rllink.header.lenient", actual="; ".join(seen))
