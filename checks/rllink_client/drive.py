"""Serving a client as RLlib does, judging every request, until it has sent a number of batches."""

from __future__ import annotations

from typing import Any

from checks.core import NoReply, PhaseStopped
from checks.listen import accept_client
from checks.rllink_client.chunks import ChunkProblem, read_chunk
from checks.rllink_client.conversation import ClientGone, Conversation
from checks.rllink_client.judge import Judge
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
    except (NoReply, ClientGone) as exc:
        silent = isinstance(exc, NoReply)
        report.failed(
            "rllink-client.connect.speaks",
            expected="a first frame from the client (the server speaks only when asked)",
            actual=f"nothing within {conv.ctx.timeout:g}s" if silent else f"the client closed ({exc}) without a frame",
            evidence=conv.transcript,
        )
        raise conv.stopped("the client sent nothing after connecting") from None
    report.passed("rllink-client.connect.speaks", actual=f"connected from {conv.accepted.peer}, sent {first['type']}")
    report.check(
        first["type"] == "PING",
        "rllink-client.handshake.ping-first",
        expected="PING first",
        actual=f"{first['type']} first",
        evidence=conv.transcript,
    )
    return first


async def start_session(ctx: Ctx, scenario: str) -> tuple[Conversation, dict[str, Any]]:
    conv = Conversation(ctx, await accept_client(ctx, scenario))
    ctx.state.held.append(conv)
    return conv, await open_conversation(conv)


def take_episodes(conv: Conversation, judge: Judge, message: dict[str, Any]) -> int:
    """Judge the episodes of an EPISODES / EPISODES_AND_GET_STATE; the env steps they hold."""
    report, kind = conv.report, message["type"]
    report.check(
        conv.config_sent and conv.state_sent,
        "rllink-client.handshake.config-state-first",
        expected="SET_CONFIG and SET_STATE sent before any episodes",
        actual=f"{kind} after {'SET_CONFIG' if conv.config_sent else 'no SET_CONFIG'} and "
        f"{'SET_STATE' if conv.state_sent else 'no SET_STATE'}",
        evidence=conv.transcript,
    )
    episodes = message.get("episodes")
    if not isinstance(episodes, list):
        report.failed(
            "rllink-client.episode.fields",
            expected="an `episodes` list",
            actual=f"{kind} with episodes {type(episodes).__name__}",
            evidence=conv.transcript,
        )
        raise conv.stopped("RLlib's listener thread dies on an EPISODES without an episodes list")
    steps = 0
    for index, episode in enumerate(episodes):
        where = f"{kind} #{conv.messages}, episode {index}"
        try:
            chunk = read_chunk(episode, conv.dialect)
        except ChunkProblem as problem:
            report.failed(
                problem.clause_id, expected="an episode RLlib can read", actual=f"{where}: {problem.why}",
                evidence=conv.transcript,
            )  # fmt: skip
            raise conv.stopped(f"RLlib's listener thread dies on such an episode: {problem.why}") from None
        judge.chunk(chunk, where)
        steps += chunk.steps
    report.passed("rllink-client.episode.fields", actual=f"{len(episodes)} episodes in {kind} with every key")
    report.passed("rllink-client.episode.shape", actual=f"{len(episodes)} episodes in {kind} with matching lengths")
    return steps


def judge_batch(conv: Conversation, judge: Judge, message: dict[str, Any]) -> None:
    report, want = conv.report, conv.ctx.options.fragment_length
    steps = judge.steps_since_state
    report.check(
        steps == want,
        "rllink-client.batch.size",
        expected=f"{want} env steps since the last SET_STATE (the advertised fragment length)",
        actual=f"{steps} env steps at EPISODES_AND_GET_STATE #{conv.messages}",
        evidence=conv.transcript,
    )
    timesteps = message.get("timesteps")
    report.check(
        timesteps == steps and "timesteps" in message,
        "rllink-client.batch.timesteps",
        expected=f"timesteps = {steps}",
        actual=f"timesteps {timesteps!r}" if "timesteps" in message else f"no timesteps (keys {sorted(message)})",
        evidence=conv.transcript,
    )


async def serve(conv: Conversation, message: dict[str, Any], batches: int) -> None:
    """Answer requests as RLlib does until `batches` EPISODES_AND_GET_STATE have their SET_STATE."""
    ctx, policy = conv.ctx, policy_of(conv.ctx)
    judge = Judge(conv.report, conv.transcript, ctx.options, conv.dialect, policy)
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
    except ClientGone as gone:
        raise conv.stopped(f"the client closed the connection ({gone}) after {done} of {batches} batches") from None


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
