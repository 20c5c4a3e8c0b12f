"""Error, render, close and shutdown rules as pure functions: an observed answer, end or timing in, Decisions out.

The errors, render-close and shutdown phases send the malformed, out-of-range
and final requests; these judges decide what the answers (a response, the
stream's end, a gRPC status, a silence) show.
"""

from __future__ import annotations

import grpc

from checks.core import NoReply, seconds
from checks.decision import Decision, check, error, info, missed, passed
from checks.rlmesh.client import JoinEnded, OverLimit, RpcFailed, StrayResponse, summarize_episode
from checks.rlmesh.judging import code_name, describe, kind_of, recoverable
from checks.rlmesh.proto import env_pb2

NOT_READY = env_pb2.ENV_ERROR_CODE_NOT_READY
TIMEOUT = env_pb2.ENV_ERROR_CODE_TIMEOUT
TIMEOUT_FLOOR = 0.020  # a step faster than this leaves no deadline both short enough and above scheduling noise
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_FORMATS = (env_pb2.RENDER_FORMAT_UNSPECIFIED, env_pb2.RENDER_FORMAT_PNG)  # UNSPECIFIED reads as PNG
SURVIVES = "a Handshake and an answer on a new Join"
SINGLE_SESSION = "gRPC FAILED_PRECONDITION"

# ---------------------------------------------------------------- Malformed requests


def still_answers(after: env_pb2.JoinResponse, clause_id: str, expected: str, where: str) -> Decision:
    """A valid step after a probe is answered with a step: the stream is still usable."""
    return check(kind_of(after) == "step", clause_id, expected=expected, actual=f"{where}: {describe(after)}")


def session_broke_off(exc: JoinEnded | NoReply) -> Decision:
    """The malformed-request session ended or stalled where no probe explains it: usability is not decided."""
    if isinstance(exc, OverLimit):
        return error("rlmesh.e2.session-usable", f"a message exceeded the max_message_bytes option: {exc}")
    return error("rlmesh.e2.session-usable", f"the malformed-request session broke off: {exc}")


def replayed_step(reference: list[env_pb2.JoinResponse]) -> env_pb2.JoinResponse | None:
    """The step two seeded replays agree on, or None when the env is not deterministic under a seed."""
    first, second = reference
    same = kind_of(first) == kind_of(second) == "step" and first.step.observation == second.step.observation
    return first if same else None


def state_unchanged(
    replayed: env_pb2.JoinResponse | None, response: env_pb2.JoinResponse, after: env_pb2.JoinResponse, label: str
) -> Decision | None:
    """A refused action left the env where a replay without it is (None: not judged for this probe)."""
    if replayed is None or kind_of(after) != "step" or kind_of(response) != "error":
        return None
    same = after.step.observation == replayed.step.observation
    return check(
        same,
        "rlmesh.v3.state-unchanged",
        expected="the observation of a replay without the bad action",
        actual=f"after {label}: " + ("unchanged" if same else "the env state moved"),
    )


def state_not_replayable(replayed: env_pb2.JoinResponse | None) -> list[Decision]:
    if replayed is not None:
        return []
    return [info("rlmesh.v3.state-unchanged", actual="the env is not deterministic under a seed; not judged")]


def bad_index(response: env_pb2.JoinResponse, codes: tuple[int, ...], label: str) -> Decision:
    """An out-of-range or duplicate lane index is refused with one of `codes`, recoverably."""
    return check(
        recoverable(response, *codes),
        "rlmesh.l1.bad-index",
        expected=" or ".join(code_name(code) for code in codes) + ", recoverable",
        actual=f"{label}: {describe(response)}",
    )


def step_before_reset(response: env_pb2.JoinResponse) -> Decision:
    """A session's first request is a step: a recoverable NOT_READY."""
    if kind_of(response) == "step":
        actual = "the step was accepted (env state carried over from an earlier session)"
    else:
        actual = describe(response)
    return check(
        recoverable(response, NOT_READY),
        "rlmesh.e2.step-before-reset",
        expected="a recoverable NOT_READY",
        actual=f"first request of a session is a step: {actual}",
    )


def survives(answer: env_pb2.JoinResponse | RpcFailed | JoinEnded | Exception) -> Decision:
    """After the probes a Handshake and a new Join's first request are answered (an error answers too)."""
    if isinstance(answer, Exception):
        return missed("rlmesh.e1.survives", expected=SURVIVES, actual=str(answer))
    return check(
        kind_of(answer) in ("reset", "error"),
        "rlmesh.e1.survives",
        expected=SURVIVES,
        actual=f"new session's reset: {describe(answer)}",
    )


def second_join(answer: env_pb2.JoinResponse | JoinEnded) -> Decision:
    """A second Join while one is active is refused with FAILED_PRECONDITION (a response: it was served)."""
    if isinstance(answer, JoinEnded):
        return check(
            answer.status is grpc.StatusCode.FAILED_PRECONDITION,
            "rlmesh.e4.single-session",
            expected=SINGLE_SESSION,
            actual=f"second Join ended with gRPC {answer.status.name}",
        )
    return missed(
        "rlmesh.e4.single-session", expected=SINGLE_SESSION, actual=f"a second Join was served: {describe(answer)}"
    )


# ---------------------------------------------------------------- Step deadlines


def timeout_unjudged(response: env_pb2.JoinResponse) -> Decision:
    """A valid step, timed to size the deadline, was not answered with a step."""
    return error("rlmesh.e3.timeout", f"not judged: a valid step got {describe(response)}")


def too_fast_for_timeout(step_time: float) -> Decision | None:
    """A step too fast to be given a deadline both shorter than it needs and above noise (None: slow enough)."""
    if step_time >= TIMEOUT_FLOOR:
        return None
    return info(
        "rlmesh.e3.timeout",
        actual=f"a step takes {seconds(step_time)}: too fast to give it a shorter deadline than it needs",
    )


def timeout_answer(response: env_pb2.JoinResponse, took: float, deadline_ms: int, step_time: float) -> Decision:
    """A step whose timeout_ms is shorter than the step time comes back as a recoverable TIMEOUT."""
    timing = f"after {seconds(took)}, for a {deadline_ms} ms deadline on a step that takes {seconds(step_time)}"
    return check(
        recoverable(response, TIMEOUT),
        "rlmesh.e3.timeout",
        expected="a recoverable TIMEOUT",
        actual=f"{describe(response)} {timing}",
    )


def answered_twice(exc: StrayResponse) -> Decision:
    """An answer with an id no request awaits, right after a TIMEOUT: most likely the timed-out step, answered too."""
    return missed("rlmesh.e3.timeout", expected="one answer (the TIMEOUT) for the timed-out step", actual=str(exc))


# ---------------------------------------------------------------- Render


def render(response: env_pb2.JoinResponse, render_mode: str, session_ended: bool, where: str) -> Decision:
    """Render of lane 0: a frame matching its format when a render mode is set, else no frame or a recoverable
    error; never the end of the session."""
    if session_ended:
        actual = f"{where}: {describe(response)}, and the session ended"
        return missed("rlmesh.r1.render", expected="a render response; the session goes on", actual=actual)
    if kind_of(response) == "error":
        expected = "a frame" if render_mode else "no frame or a recoverable error"
        return check(not render_mode, "rlmesh.r1.render", expected=expected, actual=f"{where}: {describe(response)}")
    if kind_of(response) != "render":
        return missed("rlmesh.r1.render", expected="a render response", actual=f"{where}: {describe(response)}")
    body = response.render
    if not render_mode:
        shown = f"a {len(body.frame)}-byte frame" if body.HasField("frame") else "no frame"
        return check(not body.HasField("frame"), "rlmesh.r1.render", expected="no frame", actual=f"{where}: {shown}")
    if not body.HasField("frame"):
        return missed("rlmesh.r1.render", expected="a frame", actual=f"{where}: no frame")
    if body.format not in PNG_FORMATS:
        return passed("rlmesh.r1.render", actual=f"{where}: unknown format {body.format} skipped")
    return check(
        body.frame.startswith(PNG_MAGIC),
        "rlmesh.r1.render",
        expected="a PNG frame (PNG format)",
        actual=f"{where}: {len(body.frame)} bytes starting {body.frame[:8]!r}",
    )


# ---------------------------------------------------------------- Close, a new session, Shutdown


def ended_lanes(response: env_pb2.JoinResponse, lanes: int) -> set[int]:
    """The lanes a full-width step response marks terminated or truncated (none if it is no such response)."""
    if kind_of(response) != "step":
        return set()
    masks = response.step.terminated_mask, response.step.truncated_mask
    if any(len(mask) != lanes for mask in masks):
        return set()
    return {lane for lane in range(lanes) if any(mask[lane] for mask in masks)}


def close(
    response: env_pb2.JoinResponse, active: list[tuple[int, str]], ended: set[int], end: grpc.StatusCode | None
) -> Decision:
    """Close lists every episode still `active` (lane, id) and only those, all truncated, then the stream ends OK.

    `ended`: the lanes whose episode ended on the step before Close; `end`: the status the stream ended with after
    the close response (None: it stayed open).
    """
    if kind_of(response) != "close":
        return missed("rlmesh.c1.close", expected="a close response", actual=f"Close: {describe(response)}")
    finals = list(response.close.final_episodes)
    got = sorted((e.env_index, e.episode_id) for e in finals)
    shown = [lane for lane, _ in active][:8]
    gone = f" (lanes {sorted(ended)[:8]} ended on the step before Close)" if ended else ""
    ending = (
        "the stream stayed open after the close response" if end is None else f"the stream ended with gRPC {end.name}"
    )
    return check(
        got == active and all(e.truncated for e in finals) and end is grpc.StatusCode.OK,
        "rlmesh.c1.close",
        expected=f"final_episodes for the active lanes {shown}{gone}, with their ids, all truncated; then status OK",
        actual=f"final_episodes {[summarize_episode(e) for e in finals[:6]]}; {ending}",
    )


def reopen(answer: env_pb2.JoinResponse | JoinEnded) -> Decision:
    """After a Close a new session's first request is answered (an error answers too), not refused."""
    if isinstance(answer, JoinEnded):
        return missed("rlmesh.c1.reopen", expected="a new session", actual=str(answer))
    return check(
        kind_of(answer) in ("reset", "error"),
        "rlmesh.c1.reopen",
        expected="an answer to the first request",
        actual=f"the new session's seeded reset: {describe(answer)}",
    )


def shutdown_failed(exc: RpcFailed) -> Decision:
    return missed("rlmesh.c2.shutdown", expected="a ShutdownResponse", actual=str(exc))


def shutdown_refused(message: str) -> Decision:
    """A refused Shutdown says why (the endpoint then answered a Handshake)."""
    return check(
        bool(message.strip()),
        "rlmesh.c2.shutdown",
        expected="refused with a message, still serving",
        actual=f"accepted=false, message {message[:120]!r}; a later Handshake was answered",
    )


def shutdown_accepted(gone: RpcFailed | None, waited: float, timeout: float) -> Decision:
    """An accepted Shutdown stops the endpoint within the timeout (`gone`: the failure of the first Handshake
    that got no answer after it, None: every Handshake for `timeout` seconds was answered)."""
    expected = f"the endpoint gone within {timeout:g}s"
    if gone is None:
        return missed(
            "rlmesh.c2.shutdown",
            expected=expected,
            actual=f"accepted, yet still answering Handshakes {timeout:g}s later",
        )
    return check(
        gone.status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED),
        "rlmesh.c2.shutdown",
        expected=expected,
        actual=f"accepted; {seconds(waited)} later a Handshake got {gone}",
    )
