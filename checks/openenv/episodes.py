"""Playing scripted episodes: alone, or as a group of sessions moving in lock-step."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checks.core import Transcript, summarize
from checks.openenv.judging import is_done, reward_of, signature
from checks.openenv.options import Ctx
from checks.openenv.session import JsonSession, Reply, open_session, settle_all

SLOT_GRACE_TRIES = 6
SLOT_GRACE_PAUSE = 0.2


@dataclass
class EpisodeRun:
    """The frames one session saw: the reset reply, each step reply, then the state."""

    transcript: Transcript
    reset: Reply
    steps: list[Reply] = field(default_factory=list)
    state: Reply | None = None

    @property
    def done(self) -> bool:
        return bool(self.steps) and is_done(self.steps[-1])

    @property
    def final_reward(self) -> Any:
        return reward_of(self.steps[-1]) if self.steps else None

    @property
    def refused(self) -> bool:
        """The session never got going (capacity, closed, no observation to reset)."""
        return self.reset.kind != "observation"

    def frames(self) -> list[str]:
        return [signature(self.reset)] + [signature(step) for step in self.steps]

    def state_summary(self) -> tuple[Any, Any]:
        data = self.state.data if self.state is not None and isinstance(self.state.data, dict) else {}
        return data.get("episode_id"), data.get("step_count")

    def describe(self) -> str:
        return (
            f"{len(self.steps)} steps, done={self.done}, final reward {self.final_reward!r}"
            if not self.refused
            else f"reset refused: {self.reset.describe()}"
        )


async def finish(session: JsonSession, timeout: float) -> None:
    """End a session politely so its slot is free before the next one opens (a lost one is closed already)."""
    if session.lost is None:
        await session.close_by_message(min(timeout, 2.0))
        await session.close()


async def play(session: JsonSession, reset: dict[str, Any], actions: Sequence[Any], max_steps: int) -> EpisodeRun:
    """Reset, then step through `actions` (cycled) until done or `max_steps`, then ask the state."""
    run = EpisodeRun(session.transcript, await session.reset(reset))
    if not run.refused and actions:
        for action in itertools.islice(itertools.cycle(actions), max_steps):
            reply = await session.step(action)
            run.steps.append(reply)
            if reply.kind != "observation" or is_done(reply):
                break
    run.state = await session.state()
    return run


async def play_alone(ctx: Ctx, label: str, reset: dict[str, Any], actions: Sequence[Any], max_steps: int) -> EpisodeRun:
    session = await open_session(ctx, label)
    try:
        return await play(session, reset, actions, max_steps)
    finally:
        await finish(session, ctx.timeout)


async def play_group(
    ctx: Ctx, label: str, resets: Sequence[dict[str, Any]], scripts: Sequence[Sequence[Any]], max_steps: int
) -> list[EpisodeRun]:
    """All sessions open together; each round sends one message to every live session, then reads them all.

    Lock-step makes the interleaving the same on every run, so state shared
    between sessions shows up reproducibly.
    """
    sessions: list[JsonSession] = []
    try:
        for index in range(len(resets)):
            sessions.append(await open_session(ctx, f"{label} session {index + 1}"))
        resets_sent = await settle_all(*(s.reset(r) for s, r in zip(sessions, resets, strict=True)))
        runs = [EpisodeRun(s.transcript, reply) for s, reply in zip(sessions, resets_sent, strict=True)]
        for round_index in range(max_steps):
            live = [i for i, run in enumerate(runs) if _continues(run, scripts[i])]
            if not live:
                break
            replies = await settle_all(*(sessions[i].step(scripts[i][round_index % len(scripts[i])]) for i in live))
            for i, reply in zip(live, replies, strict=True):
                runs[i].steps.append(reply)
        states = await settle_all(*(s.state() for s in sessions))
        for run, state in zip(runs, states, strict=True):
            run.state = state
        return runs
    finally:
        await asyncio.gather(*(finish(s, ctx.timeout) for s in sessions))


def _continues(run: EpisodeRun, script: Sequence[Any]) -> bool:
    if run.refused or not script:
        return False
    return not run.steps or (run.steps[-1].kind == "observation" and not is_done(run.steps[-1]))


async def session_with_grace(
    ctx: Ctx, label: str, reset: dict[str, Any]
) -> tuple[JsonSession | None, Reply, list[Transcript]]:
    """A session whose reset succeeded, retrying briefly: a server frees a dropped slot asynchronously."""
    evidence: list[Transcript] = []
    reply = Reply(failure="never tried")
    # A request dropped mid-flight holds its slot until the env has answered it, and an answer within the
    # step timeout is in time: so the tries go on for at least that long (a slow reset is no leak).
    deadline = asyncio.get_running_loop().time() + ctx.timeout
    for attempt in itertools.count():
        if attempt >= SLOT_GRACE_TRIES and asyncio.get_running_loop().time() > deadline:
            break
        ws = await open_session(ctx, label + (f" (try {attempt + 1})" if attempt else ""))
        evidence.append(ws.transcript)
        reply = await ws.reset(reset)
        if reply.kind == "observation":
            return ws, reply, evidence
        await ws.close()
        await asyncio.sleep(SLOT_GRACE_PAUSE)
    return None, reply, evidence


def difference(a: EpisodeRun, b: EpisodeRun, with_state: bool = False) -> str:
    """The first way two runs differ, for people; "identical" when they do not."""
    for index, (x, y) in enumerate(zip(a.frames(), b.frames(), strict=False)):
        if x != y:
            return f"frame {index + 1} differs: {summarize(x, 150)} vs {summarize(y, 150)}"
    if len(a.frames()) != len(b.frames()):
        return f"{len(a.frames())} vs {len(b.frames())} frames"
    if with_state and a.state_summary() != b.state_summary():
        return f"state (episode_id, step_count) {a.state_summary()} vs {b.state_summary()}"
    return "identical"
