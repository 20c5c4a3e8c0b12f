"""Pure judgements of /ws sessions: timing, order, state, refused actions, errors, capacity, closing, survival.

Each reads what a phase observed (recorded replies, a close, counts) and returns `Decision`s;
the phases send, call these, and record what they decide.
"""

from __future__ import annotations

from typing import Any

from checks.core import summarize, truncate
from checks.decision import Decision, check, error, info, missed, passed, unsupported
from checks.errors import PeerClosed
from checks.openenv.judging import error_problem, state_problem, step_count, unprompted_problem
from checks.openenv.session import Reply


def observed(reply: Reply, clause_id: str, expected: str) -> Decision:
    """`clause_id` on a reply that must be an observation frame: the session answered as asked."""
    return check(reply.kind == "observation", clause_id, expected=expected, actual=reply.describe())


def handshake_refused(why: str) -> Decision:
    return missed("openenv.ws.handshake", expected="101 Switching Protocols on GET /ws", actual=why)


def handshake(reset: Reply) -> Decision:
    """openenv.ws.handshake on the reply to a session's first reset: a JSON text frame."""
    return check(
        reset.is_json and not reset.binary,
        "openenv.ws.handshake",
        expected="upgraded without subprotocol, and a JSON text frame answering reset",
        actual=reset.describe(),
    )


def unprompted(heard: Reply, when: str) -> Decision:
    """openenv.ws.unprompted on what a session heard while nothing was asked (`when`: before or after what)."""
    problem = unprompted_problem(heard)
    return check(problem is None, "openenv.ws.unprompted", expected=f"no frame {when}", actual=problem or "none came")


def state_shape(state: Reply) -> Decision:
    return check(
        state_problem(state) is None,
        "openenv.state.shape",
        expected="a state frame with step_count >= 0",
        actual=state_problem(state) or summarize(state.data),
    )


def episode_id(state: Reply, sent: str) -> Decision:
    shown = state.data.get("episode_id") if isinstance(state.data, dict) else None
    return check(
        shown == sent, "openenv.state.episode-id", expected=f"episode_id {sent!r}", actual=f"episode_id {shown!r}"
    )


def step_count_is(state: Reply, count: int, after: str) -> Decision:
    return check(
        step_count(state) == count,
        "openenv.state.step-count",
        expected=f"step_count {count} {after}",
        actual=f"step_count {step_count(state)!r}",
    )


def pipelined(replies: list[Reply]) -> list[Decision]:
    """openenv.ws.order on the replies to reset, step, step, state sent at once; then the step count they show."""
    kinds = [reply.kind for reply in replies]
    step_kinds = ("error", "observation")
    in_order = kinds[0] == "observation" and kinds[1] in step_kinds and kinds[2] in step_kinds and kinds[3] == "state"
    decisions = [
        check(
            in_order,
            "openenv.ws.order",
            expected="replies: observation, then two error|observation, then state",
            actual=", ".join(reply.kind or reply.describe() for reply in replies),
        )
    ]
    if in_order:
        accepted = kinds[1:3].count("observation")
        decisions.append(step_count_is(replies[3], accepted, f"after a reset and {accepted} accepted steps"))
    return decisions


def metadata_unmirrored() -> Decision:
    return info(
        "openenv.ws.metadata-mirror",
        actual="not judged: no frame carried metadata both in data.observation and at the top of data",
    )


def action_accepted(reply: Reply, action: str = "an action valid by /schema.action") -> Decision:
    """openenv.schema.action-accepted on the reply to `action` (how the evidence names what was sent)."""
    return observed(reply, "openenv.schema.action-accepted", f"an observation for {action}")


def property_accepted(name: str, value: Any, reply: Reply) -> Decision:
    """openenv.schema.action-accepted for a property set in turn: EXECUTION_ERROR passed validation too."""
    accepted = reply.kind == "observation" or reply.code == "EXECUTION_ERROR"
    shown = summarize(value, 80)
    return check(
        accepted,
        "openenv.schema.action-accepted",
        expected=f"an observation for an action /schema.action admits, with property {name!r} = {shown}",
        actual=f"property {name!r} = {shown} " + ("accepted" if accepted else f"refused: {reply.describe()}"),
    )


def no_invalid_action() -> list[Decision]:
    why = "every replayed action is valid by /schema.action"
    clauses = ("openenv.action.rejected", "openenv.action.not-executed", "openenv.action.session-usable")
    return [unsupported(clause_id, why) for clause_id in clauses]


def rejected(reply: Reply, label: str) -> Decision:
    problem = error_problem(reply, "VALIDATION_ERROR", needs_errors_list=True)
    return check(
        problem is None,
        "openenv.action.rejected",
        expected=f"VALIDATION_ERROR for {label}",
        actual=problem or reply.describe(),
    )


def not_executed(before: Reply, after: Reply) -> Decision:
    if step_count(before) is None or step_count(after) is None:
        return error("openenv.action.not-executed", "the state gave no step_count to compare")
    return check(
        step_count(after) == step_count(before),
        "openenv.action.not-executed",
        expected=f"step_count stays {step_count(before)}",
        actual=f"step_count {step_count(after)}",
    )


def session_usable(follow: Reply) -> Decision:
    return observed(follow, "openenv.action.session-usable", "an observation for the next valid step")


def recoverable(clause_id: str, code: str, what: str, reply: Reply) -> Decision:
    """An errors clause on the answer to bad input: the error code it calls for."""
    problem = error_problem(reply, code)
    return check(problem is None, clause_id, expected=f"{code} for {what}", actual=problem or reply.describe())


def still_usable(clause_id: str, what: str, again: Reply) -> Decision:
    """An errors clause on the reset sent after the bad input: the session goes on."""
    return observed(again, clause_id, f"the session still answers reset after {what}")


def capacity_counts_problem(reply: Reply) -> str | None:
    data = reply.data if isinstance(reply.data, dict) else {}
    for key in ("active_sessions", "max_sessions"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{key} is {truncate(repr(value), 40)}, not an integer"
    return None


def capacity_reached(refusal: Reply, closed: PeerClosed | None, survivors: list[Reply]) -> Decision:
    """openenv.capacity.reached: one CAPACITY_REACHED with counts, a close, and the open sessions kept."""
    problem = error_problem(refusal, "CAPACITY_REACHED") or capacity_counts_problem(refusal)
    if problem is None and (closed is None or closed.by != "peer"):
        problem = "the refused session was not closed by the server"
    if problem is None and any(state_problem(state) for state in survivors):
        problem = "a session already open stopped answering state after the refusal"
    return check(
        problem is None,
        "openenv.capacity.reached",
        expected="CAPACITY_REACHED with integer active_sessions and max_sessions, then a close",
        actual=problem or refusal.describe(),
    )


def capacity_group(declared: int | None, accepted: int, shown: str, group: int) -> Decision:
    if declared is None:
        return info(
            "openenv.capacity.group",
            actual=f"not judged: the target declares no group_size; the group runs with {group} sessions ({shown})",
        )
    return check(
        accepted >= declared,
        "openenv.capacity.group",
        expected=f"at least {declared} concurrent sessions (the group size)",
        actual=shown,
    )


def close_clean(closed: PeerClosed | None, frames: list[Reply]) -> Decision:
    if closed is None:
        seen = "the server kept the socket open"
    else:
        extra = f"; frames before the close: {', '.join(f.describe() for f in frames)}" if frames else ""
        seen = f"closed by {closed.by} with code {closed.code}{extra}"
    return check(
        closed is not None and closed.by == "peer" and closed.code == 1000 and not frames,
        "openenv.close.clean",
        expected="no reply frame, then a server close with code 1000",
        actual=seen,
    )


def frees_slot(reply: Reply, previous: str) -> Decision:
    return observed(
        reply, "openenv.close.frees-slot", f"a new session resets after the previous one ended by {previous}"
    )


def clean_end(what: str, first: Reply, follow: Reply, closed: PeerClosed | None) -> Decision:
    """openenv.survive.clean-end: after hostile input, SESSION_ERROR and close 1000, or a usable session."""
    ended_cleanly = first.code == "SESSION_ERROR" and closed is not None and closed.by == "peer" and closed.code == 1000
    return check(
        follow.kind == "state" or ended_cleanly,
        "openenv.survive.clean-end",
        expected=f"after {what}: SESSION_ERROR and close 1000, or a usable session",
        actual=f"{first.describe()}; then {follow.describe()}",
    )


def hostile(problems: list[str]) -> Decision:
    return check(
        not problems,
        "openenv.survive.hostile",
        expected="/health as before and sessions still working after every hostile input",
        actual="; ".join(problems[:3]) or "the server and its sessions kept working",
    )


def attach_refused(clause_id: str, heard: Reply | str, why: str) -> Decision:
    """An attach clause on what a socket for a taken or unknown session id heard first: SESSION_ERROR."""
    return check(
        isinstance(heard, Reply) and heard.code == "SESSION_ERROR",
        clause_id,
        expected=f"an error frame with code SESSION_ERROR ({why})",
        actual=heard.describe() if isinstance(heard, Reply) else heard,
    )


def attached(reset: Reply | str, state: Reply | None) -> Decision:
    """openenv.attach.session: reset and state answered on the socket attached to the HTTP session."""
    if isinstance(reset, str):
        return missed("openenv.attach.session", expected="a /ws handshake", actual=reset)
    return check(
        state is not None and state.kind == "state",
        "openenv.attach.session",
        expected="an observation for reset and a state frame on the attached socket",
        actual=f"reset: {reset.describe()}" + (f"; state: {state.describe()}" if state is not None else ""),
    )


def attach_close(answered: bool, closed: str, reset: Reply, reset_ok: bool) -> Decision:
    return check(
        answered and reset_ok,
        "openenv.attach.close",
        expected='openenv/session/close answers {"closed": true}, then a new /ws session resets',
        actual=f"close: {closed}; new session's reset: {reset.describe()}",
    )


def task_reset(reply: Reply, split: str) -> Decision:
    return observed(reply, "openenv.tasks.reset", f"an observation for a reset to task 0 of split {split!r}")


def harness_accepted(first: Reply) -> Decision:
    return check(
        first.kind == "session_started",
        "openenv.production.harness",
        expected='a refused handshake (403), or a harness: {"type": "session_started", ...} first',
        actual=f"accepted (101); first frame: {first.describe()}",
    )


# What each message of a session is answered with (the reply order of the protocol's /ws messages).
ANSWERED_WITH = {"reset": "observation", "step": "observation", "state": "state"}


def reply_order(kind: str, reply: Reply) -> Decision | None:
    """openenv.ws.order on one reply to a `kind` message (None: a message with no fixed answer kind); an error
    frame answers any message."""
    wanted = ANSWERED_WITH.get(kind)
    if wanted is None:
        return None
    return check(
        reply.kind in (wanted, "error"),
        "openenv.ws.order",
        expected=f"{wanted} (or error) answering {kind}",
        actual=reply.describe(),
    )


def answered(kind: str) -> Decision:
    """openenv.ws.unprompted held by a frame that answers a message the client sent."""
    return passed("openenv.ws.unprompted", actual=f"a reply to {kind}")


def frame_after_close(frame: Reply) -> Decision:
    """openenv.close.clean missed by a frame answering {"type": "close"} (the server closes without a reply)."""
    return missed("openenv.close.clean", expected="no reply frame to close, then a close", actual=frame.describe())
