"""Serving a client as RLlib does, judging every request, until it has sent a number of batches."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped, truncate
from checks.decision import Decision, record
from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.rllink_client import judging
from checks.rllink_client.chunks import ChunkProblem, read_chunk
from checks.rllink_client.conversation import Conversation, FrameFault
from checks.rllink_client.judging import EpisodeJudge
from checks.rllink_client.options import Ctx
from checks.rllink_client.policy import Policy


def policy_of(ctx: Ctx) -> Policy:
    if ctx.state.policy is None:
        ctx.state.policy = Policy(ctx.options.obs_dim, ctx.options.actions)
    return ctx.state.policy


def closes_on(conv: Conversation, decisions: list[Decision]) -> PhaseStopped:
    """Record the decisions on a frame RLlib would close the connection on; the stop to raise."""
    record(conv.report, decisions, conv.transcript)
    why = next((d.actual for d in decisions if d.missed), "")
    return conv.stopped(f"RLlib would close the connection on this frame: {truncate(why, 200)}")


async def read_request(conv: Conversation, timeout: float | None = None) -> dict[str, Any]:
    """The client's next message, its frame judged; a frame RLlib could not read stops the phase, as it ends
    RLlib's conversation. NoReply / PeerClosed when none comes."""
    try:
        request = await conv.read(timeout)
    except FrameFault as fault:
        unread = judging.frame_unread(
            fault.part, fault.seen, length=fault.length, dialect=fault.dialect, settled=fault.settled
        )
        raise closes_on(conv, unread) from None
    decisions = judging.frame_read(request.message["type"], request.settled)
    if any(decision.missed for decision in decisions):
        raise closes_on(conv, decisions)
    record(conv.report, decisions)
    conv.messages += 1
    return request.message


async def answer(conv: Conversation, message: dict[str, Any]) -> None:
    """The reply to a reply-bearing request, once the client has been watched for the reply delay."""
    kind = message["type"]
    waits = judging.waited(await conv.pipelined(), kind, conv.ctx.options.reply_delay)
    if waits.missed:
        raise closes_on(conv, [waits])
    record(conv.report, waits)
    await conv.reply(message)


async def open_conversation(conv: Conversation) -> dict[str, Any]:
    """The connection's first message: it must come unprompted, and should be a PING."""
    report, peer, timeout = conv.report, conv.accepted.peer, conv.ctx.timeout
    try:
        first = await read_request(conv)
    except NoReply:
        record(report, judging.spoke_first(peer, None, timeout), conv.transcript)
        raise conv.stopped("the client sent nothing after connecting") from None
    except PeerClosed as exc:
        record(report, judging.spoke_first(peer, None, timeout, closed=str(exc)), conv.transcript)
        raise conv.stopped("the client sent nothing after connecting") from None
    record(report, judging.spoke_first(peer, first["type"], timeout), conv.transcript)
    record(report, judging.ping_first(first["type"]), conv.transcript)
    return first


async def start_session(ctx: Ctx, scenario: str) -> tuple[Conversation, dict[str, Any]]:
    conv = Conversation(ctx, await accept_client(ctx, scenario))
    ctx.state.held.append(conv)
    return conv, await open_conversation(conv)


def take_episodes(conv: Conversation, judge: EpisodeJudge, message: dict[str, Any]) -> int:
    """Judge the episodes of an EPISODES / EPISODES_AND_GET_STATE; the env steps they hold."""
    report, kind, evidence = conv.report, message["type"], conv.transcript
    record(report, judging.config_state_first(kind, conv.config_sent, conv.state_sent), evidence)
    episodes = message.get("episodes")
    if not isinstance(episodes, list):
        record(report, judging.no_episodes_list(kind, episodes), evidence)
        raise conv.stopped("RLlib's listener thread dies on an EPISODES without an episodes list")
    steps = 0
    for index, episode in enumerate(episodes):
        where = f"{kind} #{conv.messages}, episode {index}"
        try:
            chunk = read_chunk(episode, conv.dialect)
        except ChunkProblem as problem:
            record(report, judging.unreadable(problem, where), evidence)
            raise conv.stopped(f"RLlib's listener thread dies on such an episode: {problem.reason}") from None
        record(report, judge.chunk(chunk, where), evidence)
        steps += chunk.steps
    record(report, judging.episodes_read(kind, len(episodes)))
    return steps


def judge_batch(conv: Conversation, judge: EpisodeJudge, message: dict[str, Any]) -> None:
    decisions = judging.batch(message, judge.steps_since_state, conv.ctx.options.fragment_length, conv.messages)
    record(conv.report, decisions, conv.transcript)


async def serve(conv: Conversation, message: dict[str, Any], batches: int) -> None:
    """Answer requests as RLlib does until `batches` EPISODES_AND_GET_STATE have their SET_STATE."""
    ctx, policy = conv.ctx, policy_of(conv.ctx)
    judge = EpisodeJudge(ctx.options, conv.dialect, policy)
    done = 0
    try:
        while True:
            kind = message["type"]
            if kind == "EPISODES":
                conv.bare_episodes += 1
                take_episodes(conv, judge, message)
                message = await next_after_episodes(conv)
                continue
            if kind == "EPISODES_AND_GET_STATE":
                take_episodes(conv, judge, message)
                judge_batch(conv, judge, message)
                policy.train()
                done += 1
            await answer(conv, message)
            if kind in ("GET_STATE", "EPISODES_AND_GET_STATE"):
                judge.version, judge.steps_since_state = policy.seq, 0
            if done >= batches:
                return
            message = await read_request(conv)
    except NoReply as silent:
        raise conv.stopped(f"the client sent nothing for {silent.timeout:g}s after {done} batches") from None
    except PeerClosed as gone:
        raise conv.stopped(
            f"the client closed the connection ({gone.reason}) after {done} of {batches} batches"
        ) from None


async def next_after_episodes(conv: Conversation) -> dict[str, Any]:
    try:
        message = await read_request(conv)
    except NoReply:
        record(conv.report, judging.after_episodes(None, conv.ctx.timeout), conv.transcript)
        raise PhaseStopped("the client waits for a reply to EPISODES", conv.transcript) from None
    record(conv.report, judging.after_episodes(message["type"], conv.ctx.timeout), conv.transcript)
    return message
