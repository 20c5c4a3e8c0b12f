"""Serving a client as RLlib does, judging every request, until it has sent a number of batches."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped
from checks.decision import record
from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.rllink_client import judging
from checks.rllink_client.chunks import ChunkProblem, read_chunk
from checks.rllink_client.conversation import Conversation
from checks.rllink_client.judging import EpisodeJudge
from checks.rllink_client.options import Ctx
from checks.rllink_client.policy import Policy


def policy_of(ctx: Ctx) -> Policy:
    if ctx.state.policy is None:
        ctx.state.policy = Policy(ctx.options.obs_dim, ctx.options.actions)
    return ctx.state.policy


async def open_conversation(conv: Conversation) -> dict[str, Any]:
    """The connection's first message: it must come unprompted, and should be a PING."""
    report = conv.report
    try:
        first = await conv.read()
    except (NoReply, PeerClosed) as exc:
        silent = isinstance(exc, NoReply)
        report.failed(
            "rllink-client.connect.speaks",
            expected="a first frame from the client (the server speaks only when asked)",
            actual=f"nothing within {conv.ctx.timeout:g}s" if silent else f"the client closed ({exc}) without a frame",
            evidence=conv.transcript,
        )
        raise conv.stopped("the client sent nothing after connecting") from None
    report.passed("rllink-client.connect.speaks", actual=f"connected from {conv.accepted.peer}, sent {first['type']}")
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
                take_episodes(conv, judge, message)
                message = await next_after_episodes(conv)
                continue
            if kind == "EPISODES_AND_GET_STATE":
                take_episodes(conv, judge, message)
                judge_batch(conv, judge, message)
                policy.train()
                done += 1
            await conv.answer(message)
            if kind in ("GET_STATE", "EPISODES_AND_GET_STATE"):
                judge.version, judge.steps_since_state = policy.seq, 0
            if done >= batches:
                return
            message = await conv.read()
    except NoReply as silent:
        raise conv.stopped(f"the client sent nothing for {silent.timeout:g}s after {done} batches") from None
    except PeerClosed as gone:
        raise conv.stopped(
            f"the client closed the connection ({gone.reason}) after {done} of {batches} batches"
        ) from None


async def next_after_episodes(conv: Conversation) -> dict[str, Any]:
    try:
        message = await conv.read()
    except NoReply:
        conv.report.failed(
            "rllink-client.req-resp.episodes-no-reply",
            expected="the client goes on after EPISODES (no reply comes)",
            actual=f"silent for {conv.ctx.timeout:g}s after EPISODES: waiting for a reply?",
            evidence=conv.transcript,
        )
        raise PhaseStopped("the client waits for a reply to EPISODES", conv.transcript) from None
    conv.report.passed("rllink-client.req-resp.episodes-no-reply", actual=f"{message['type']} after EPISODES")
    return message
