"""The plugrl-client suite's judges: what a PlugRL env client's frames and messages must be.

Pure functions of what was observed, returning `Decision`s (and why the
exchange cannot go on, where it cannot): the passive clauses on every frame,
the message rules (one infer judge with the reference server, in
`checks.plugrl.validation`), and the probe clauses (SPEC 8.1) against what the
run sent. `Session` does the wire and keeps the run's memory; it hands these
judges the memory they need, so a recorded exchange is judged the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from checks.decision import Decision, Judged, check, info, missed, passed
from checks.errors import Malformed
from checks.evidence import summarize
from checks.plugrl.codec import CodecError
from checks.plugrl.validation import InferReading, InferRule, check_feedback, observation_problem, read_infer
from checks.plugrl_client.probe import describe_applied, episode_length, probe_states

# The client clause each infer rule is judged under, and what it expects.
INFER_RULES: dict[InferRule, tuple[str, str]] = {
    "infer-form": ("plugrl-client.5.2.infer-form", "a well-formed infer"),
    "reuse-offered": (
        "plugrl-client.10.1.reuse-only-offered",
        "no reuse key: the server does not list reuse-feedback-obs",
    ),
    "reuse-held": ("plugrl-client.10.1.reuse-held-only", "reuse of held observations"),
    "observation-form": ("plugrl-client.5.2.observation-form", "a well-formed observation"),
}
OBSERVATION_FORM = INFER_RULES["observation-form"][0]
# Decided on every frame and every exchange of every scenario.
PASSIVE_CLAUSES = (
    "plugrl-client.2.binary-frames",
    "plugrl-client.2.msgpack-map",
    "plugrl-client.3.2.ndarray-form",
    "plugrl-client.3.4.text-form",
    "plugrl-client.4.2.alternation",
    "plugrl-client.5.2.infer-form",
    "plugrl-client.5.2.observation-form",
    "plugrl-client.5.4.feedback-form",
    "plugrl-client.5.4.rewards-float32",
    "plugrl-client.8.one-feedback-per-action",
    "plugrl-client.4.3.feedback-envs-held",
    "plugrl-client.8.1.probe-observation",
    "plugrl-client.8.1.infer-continues",
    "plugrl-client.5.3.time-major",
    "plugrl-client.5.3.steps-within-horizon",
    "plugrl-client.5.4.chunk-sum-reward",
    "plugrl-client.5.4.terminal-observation",
    "plugrl-client.5.4.stops-at-terminal",
    "plugrl-client.10.1.reuse-only-offered",
)


class Held(NamedTuple):
    """An env's outstanding chunk: its [H, d] slice, and the t its infer reported."""

    chunk: np.ndarray
    t0: int


class ProbeReading(NamedTuple):
    """What a probe observation reports per row: t (steps taken) and a (the last applied action)."""

    t: list[int]
    applied: np.ndarray


# ---------------------------------------------------------------- the connection and its frames


def no_compression(offered: list[str]) -> Decision:
    """The Sec-WebSocket-Extensions the client offered in its handshake."""
    deflate = any("permessage-deflate" in value for value in offered)
    return check(
        not deflate,
        "plugrl-client.1.1.no-compression",
        expected="no permessage-deflate offer",
        actual=f"offered {', '.join(offered)}" if deflate else "none offered",
    )


def metadata_first(early: bytes | str | None, delay: float) -> Judged[None]:
    """What the client sent in the `delay` seconds after the handshake, before the metadata (None: nothing)."""
    if early is None:
        return Judged(None, [passed("plugrl-client.5.1.metadata-first", actual="silent until the metadata")])
    decision = missed(
        "plugrl-client.5.1.metadata-first",
        expected="nothing before the metadata",
        actual=f"a {len(early)}-byte frame {delay}s after the handshake, before the metadata",
    )
    return Judged(None, [decision], "the client spoke before the metadata")


def frame(data: bytes | str, decoded: dict[str, Any] | CodecError | None) -> Judged[dict[str, Any] | None]:
    """A frame from the client: binary, arrays in the ndarray form, a map with a client message_type."""
    if isinstance(data, str):
        decision = missed(
            "plugrl-client.2.binary-frames", expected="binary frames", actual=f"a text frame: {summarize(data[:120])}"
        )
        return Judged(None, [decision], "the client sent a text frame")
    decisions = [passed("plugrl-client.2.binary-frames")]
    if isinstance(decoded, CodecError) or decoded is None:
        part = decoded.part if isinstance(decoded, CodecError) else "message"
        clause = "plugrl-client.3.2.ndarray-form" if part == "array" else "plugrl-client.2.msgpack-map"
        decisions.append(missed(clause, expected="a valid PlugRL frame", actual=str(decoded)))
        return Judged(None, decisions, f"undecodable frame: {decoded}")
    decisions.append(passed("plugrl-client.3.2.ndarray-form"))
    kind = decoded.get("message_type")
    if kind not in ("infer", "feedback"):
        decision = missed(
            "plugrl-client.2.msgpack-map",
            expected="message_type 'infer' or 'feedback', a str",
            actual=f"message_type {kind!r}"[:200],
        )
        return Judged(None, [*decisions, decision], "a message with no valid message_type")
    return Judged(decoded, [*decisions, passed("plugrl-client.2.msgpack-map")])


def stale_envs(message: dict[str, Any], lost: set[int]) -> list[int]:
    """The envs a message names whose action was held when the last connection ended."""
    envs = message.get("env_indices")
    named = set(envs.reshape(-1).tolist()) if isinstance(envs, np.ndarray) else set()
    return sorted(named & lost)


def sequence(kind: str, expected_kind: str, first_after_reconnect: bool, stale: list[int]) -> Judged[None]:
    """A message's place in the alternation; the first one after a reconnect must be an infer.

    `stale`: the envs it names whose action came on the last connection.
    """
    decisions: list[Decision] = []
    if first_after_reconnect:
        fresh = check(
            kind == "infer",
            "plugrl-client.7.6.fresh-infer-after-reconnect",
            expected="an infer first on the new connection",
            actual=f"a {kind} first",
        )
        decisions.append(fresh)
        if fresh.missed:
            if stale:
                decisions.append(
                    missed(
                        "plugrl-client.7.6.no-stale-feedback",
                        expected="no feedback for actions of an earlier connection",
                        actual=f"feedback for envs {stale[:8]} from the last connection",
                    )
                )
            return Judged(None, decisions, "the reconnected client did not start with an infer")
        if stale:
            # Provisional: a stale feedback later on this connection (`unheld`) outranks this pass.
            decisions.append(
                passed(
                    "plugrl-client.7.6.no-stale-feedback",
                    expected="no feedback for actions of an earlier connection",
                    actual=f"a fresh infer first; envs {stale[:8]} held actions from the last connection",
                )
            )
    if kind != expected_kind:
        decision = missed("plugrl-client.4.2.alternation", expected=f"a {expected_kind}", actual=f"a {kind}")
        return Judged(None, [*decisions, decision], f"expected a {expected_kind}, received a {kind}")
    return Judged(None, [*decisions, passed("plugrl-client.4.2.alternation")])


# ---------------------------------------------------------------- infers


def infer_message(message: dict[str, Any], *, reuse_offered: bool, held: Mapping[int, bool]) -> Judged[InferReading]:
    """An infer against the infer rules the reference server keeps too, each under its client clause.

    `held`: for each env fed back on this connection, whether that feedback ended its episode.
    """
    reading = read_infer(message, reuse_offered=reuse_offered, held=held)
    decisions = [passed(INFER_RULES[rule][0]) for rule in reading.kept]
    if reading.broken is None:
        return Judged(reading, decisions)
    clause, expected = INFER_RULES[reading.broken]
    if reading.broken == "reuse-offered":
        decision, stop = (
            missed(clause, expected=expected, actual="an infer with reuse"),
            "reuse sent without the feature",
        )
    else:
        decision, stop = missed(clause, expected=expected, actual=reading.why), reading.why
    return Judged(reading, [*decisions, decision], stop)


def probe_observation(obs: dict[str, Any], rows: int, action_dim: int) -> Judged[ProbeReading | None]:
    """A well-formed observation's text form, and the probe's states t and a (SPEC 8.1)."""
    text = obs["text"]
    if isinstance(text, np.ndarray) and text.dtype.kind == "U":
        decisions = [passed("plugrl-client.3.4.text-form")]
    else:
        decisions = [info("plugrl-client.3.4.text-form", actual=f"text is a {type(text).__name__}")]
    probe = probe_states(obs, rows, action_dim)
    if isinstance(probe, str):
        decision = missed("plugrl-client.8.1.probe-observation", expected="states t and a", actual=probe)
        return Judged(None, [*decisions, decision], f"not the probe environment: {probe}")
    reading = ProbeReading([round(float(value)) for value in probe[0]], probe[1])
    return Judged(reading, [*decisions, passed("plugrl-client.8.1.probe-observation")])


def observation(obs: Any, rows: int, where: str, action_dim: int) -> Judged[ProbeReading | None]:
    """An observation of `rows` rows (of a `where` message): its form, then what the probe reads in it."""
    problem = observation_problem(obs, rows, where)
    if problem is not None:
        return Judged(None, [missed(OBSERVATION_FORM, expected="a well-formed observation", actual=problem)], problem)
    probe = probe_observation(obs, rows, action_dim)
    return Judged(probe.value, [passed(OBSERVATION_FORM), *probe.decisions], probe.stop)


def infer_continuity(
    envs: list[int],
    infer_t: Mapping[int, int],
    holding: Mapping[int, Held],
    last_t: Mapping[int, int],
    ended: Mapping[int, bool],
    lost: set[int],
    reconnected: bool,
) -> list[Decision]:
    """Each env of an infer holds no chunk, and its t continues where the run last saw it.

    `last_t` and `ended`: the t and episode end of each env's last feedback in the run;
    `lost`: envs whose action was held when their connection ended (no baseline to compare).
    """
    decisions = []
    for env in envs:
        t = infer_t[env]
        decisions.append(
            check(
                env not in holding,
                "plugrl-client.8.one-feedback-per-action",
                expected="a new infer only for envs whose chunk was fed back",
                actual=f"env {env} asked again while holding a chunk",
            )
        )
        if env in lost:
            continue  # its feedback was dropped, as it must be: no baseline to compare
        if env in last_t:
            wanted = 0 if ended[env] else last_t[env]
            expected = f"env {env} t = {wanted}" + (" (a new episode)" if ended[env] else "")
        elif not reconnected:
            wanted, expected = 0, f"env {env} starts its first episode at t = 0"
        else:
            continue
        decisions.append(
            check(t == wanted, "plugrl-client.8.1.infer-continues", expected=expected, actual=f"t = {t:g}")
        )
    return decisions


# ---------------------------------------------------------------- feedbacks


class FeedbackReading(NamedTuple):
    envs: list[int]
    terminated: np.ndarray
    truncated: np.ndarray
    rewards: np.ndarray


def feedback_message(message: dict[str, Any]) -> Judged[FeedbackReading | None]:
    """A feedback's form (the rules the reference server keeps too), and its rewards' dtype."""
    try:
        envs, terminated, truncated, _ = check_feedback(message)
    except Malformed as exc:
        decision = missed("plugrl-client.5.4.feedback-form", expected="a well-formed feedback", actual=exc.reason)
        return Judged(None, [decision], exc.reason)
    rewards = message["data"]["rewards"]
    if rewards.dtype == np.float32:
        float32 = passed("plugrl-client.5.4.rewards-float32")
    else:
        float32 = info("plugrl-client.5.4.rewards-float32", actual=f"rewards are {rewards.dtype.str}")
    reading = FeedbackReading(envs, terminated, truncated, rewards)
    return Judged(reading, [passed("plugrl-client.5.4.feedback-form"), float32])


def unheld(env: int, stale: bool) -> Decision:
    """A feedback for an env holding no action; `stale` when its action came on the last connection."""
    if stale:
        return missed(
            "plugrl-client.7.6.no-stale-feedback",
            expected="no feedback for an action of an earlier connection",
            actual=f"feedback for env {env}, whose action came on the last connection",
        )
    return missed(
        "plugrl-client.4.3.feedback-envs-held",
        expected="feedback only for envs holding an action",
        actual=f"feedback for env {env}, which holds none",
    )


def _terminal(env: int, held: Held, t: int, terminated: bool, truncated: bool) -> tuple[list[Decision], bool]:
    """The episode end a feedback row reports; whether the row's steps can be judged after it."""
    length = episode_length(env)
    decisions = []
    if truncated:
        decisions.append(
            missed("plugrl-client.5.4.stops-at-terminal", expected="truncated never set", actual=f"env {env} truncated")
        )
    if terminated and t > length:
        decisions.append(
            missed(
                "plugrl-client.5.4.stops-at-terminal",
                expected=f"env {env} stops at t = {length}",
                actual=f"t = {t}: it stepped past the terminal step",
            )
        )
        return decisions, False
    if terminated and t != length:
        hint = " (this is the next episode's observation)" if t < held.t0 + 1 else ""
        decisions.append(
            missed(
                "plugrl-client.5.4.terminal-observation",
                expected=f"env {env} terminal observation t = {length}",
                actual=f"t = {t}{hint}",
            )
        )
        return decisions, False
    if terminated:
        decisions.append(passed("plugrl-client.5.4.terminal-observation"))
    decisions.append(
        check(
            t <= length and terminated == (t == length),
            "plugrl-client.5.4.stops-at-terminal",
            expected=f"env {env} stops at t = {length} with terminated set there only",
            actual=f"t = {t}, terminated = {terminated}",
        )
    )
    return decisions, True


def feedback_row(
    env: int, held: Held, t: int, reward: float, applied: np.ndarray, flags: tuple[bool, bool], horizon: int
) -> list[Decision]:
    """One env's row of a feedback for the chunk it held: where its episode stands, how many steps
    it ran (1..H), the chunk's summed reward, and the action it applied. `flags`: (terminated, truncated)."""
    decisions, judged_on = _terminal(env, held, t, *flags)
    if not judged_on:
        return decisions
    steps = t - held.t0
    within = check(
        1 <= steps <= horizon,
        "plugrl-client.5.3.steps-within-horizon",
        expected=f"1..{horizon} steps",
        actual=f"env {env} ran {steps} steps (t {held.t0} -> {t})",
    )
    decisions.append(within)
    if within.missed:
        return decisions
    hint = " (the last step's reward, not the sum)" if reward == 1 and steps > 1 else ""
    decisions.append(
        check(
            reward == steps,
            "plugrl-client.5.4.chunk-sum-reward",
            expected=f"reward {steps} for {steps} steps",
            actual=f"env {env} reward {reward:g}{hint}",
        )
    )
    wanted = held.chunk[steps - 1].astype(np.float64)
    decisions.append(
        check(
            applied.shape[0] == wanted.shape[0] and bool(np.array_equal(applied, wanted)),
            "plugrl-client.5.3.time-major",
            expected=f"env {env} applied {describe_applied(wanted)}",
            actual=f"applied {describe_applied(applied)}",
        )
    )
    return decisions


def feedback_env(env: int, held: bool, stale: bool) -> Decision:
    """A feedback row's env: holding an action (`held`), or not; `stale` when its action came on the last
    connection."""
    if held:
        return passed("plugrl-client.4.3.feedback-envs-held")
    return unheld(env, stale)


# ---------------------------------------------------------------- what a scenario's turns show

LARGE_FRAME, UNKNOWN_KEYS = "plugrl-client.1.1.large-frame", "plugrl-client.5.1.unknown-keys"
FRAME_TOO_BIG = 1009


def after_padded_metadata(close_code: int | None) -> list[Decision]:
    """After a metadata of 2 MiB with an unknown key: an infer came (None), or the client closed with `close_code`."""
    if close_code is None:
        return [
            passed(LARGE_FRAME, actual="an infer after the 2 MiB metadata"),
            passed(UNKNOWN_KEYS, actual="an infer after the metadata with conformance_padding"),
        ]
    if close_code == FRAME_TOO_BIG:
        return [
            missed(LARGE_FRAME, expected="the 2 MiB metadata accepted", actual="closed with 1009 (message too big)")
        ]
    return [
        missed(
            UNKNOWN_KEYS,
            expected="an infer after a metadata with an unknown key",
            actual=f"closed (code {close_code}) after the metadata",
        )
    ]


def env_ids_not_judged() -> Decision:
    return info(
        "plugrl-client.5.3.reads-env-ids",
        actual="not judged: a conforming server echoes env_indices and lets the client pick its feedback set",
    )


def reconnect_after_stop(late_peer: str | None, window: float) -> Decision:
    """After a stop: the peer a connection came from within `window` seconds (None: none came)."""
    clause = "plugrl-client.7.1.no-reconnect-after-stop"
    if late_peer is None:
        return passed(clause, actual=f"no connection within {window:g}s of the stop")
    return missed(
        clause,
        expected="no reconnect after plugrl-server-stop",
        actual=f"reconnected from {late_peer} within {window:g}s of the stop",
    )


def reconnect_after_resync(peer: str | None, wait: float) -> Decision:
    """After a resync: the peer the new connection came from (None: none within `wait` seconds)."""
    clause = "plugrl-client.7.2.reconnects-after-resync"
    if peer is None:
        return missed(clause, expected="a new connection after plugrl-server-resync", actual=f"none within {wait:g}s")
    return passed(clause, actual=f"reconnected from {peer}")


def reuse_used(reused_rows: int) -> Decision:
    """A run whose server offered reuse-feedback-obs: how many rows the client reused."""
    if reused_rows:
        return passed("plugrl-client.10.1.reuse-used", actual=f"{reused_rows} rows reused")
    return info("plugrl-client.10.1.reuse-used", actual="offered, never used")


def after_text_frame(closed: bool, what: str) -> Decision:
    """What the client did after a text frame: closed (`closed`), or `what` else it did."""
    return check(
        closed,
        "plugrl-client.7.4.text-fatal",
        expected="the connection closed, nothing sent after the text frame",
        actual=what,
    )
