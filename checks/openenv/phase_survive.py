"""Hostile frames, disconnects and a burst of bad sessions; the server and a bystander must live on (run last)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from checks.core import PhaseStopped, TargetUnreachable, Transcript, truncate
from checks.decision import record
from checks.errors import Refused
from checks.http_client import HttpClient
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish, session_with_grace
from checks.openenv.options import Ctx, group_size
from checks.openenv.session import JsonSession, connect_session

HOSTILE_FRAMES: tuple[tuple[str, str | bytes, bool], ...] = (
    # (what, frame, whether the session's ending is judged by openenv.survive.clean-end)
    ("non-object JSON", "[1, 2, 3]", True),
    ("JSON null", "null", True),
    ("a binary frame", b'{"type": "state"}', True),
)


async def survive_phase(ctx: Ctx) -> None:
    """Each hostile input is followed by /health and a bystander session's state."""
    health = HttpClient(ctx.url, ctx.report.transcript("health during hostile input"), ctx.timeout, ctx.options)
    survival = _Survival(ctx, health)
    try:
        # Survival means no change: a /health that was already unhealthy is openenv.discover.health's finding.
        survival.baseline = (await health.get("/health")).status
        if ctx.state.capacity != 1:
            survival.bystander = await survival.hostile_session("bystander session")
            if survival.bystander is not None:
                await survival.bystander.reset(ctx.options.reset)
        if await survival.hostile_frames():
            await survival.drops_and_burst()
        record(ctx.report, judge.hostile(survival.problems), survival.evidence)
    finally:
        if survival.bystander is not None:
            await finish(survival.bystander, ctx.timeout)
        await health.close()


class _Survival:
    """What the survive phase tracks between hostile inputs: /health, the bystander, the problems so far."""

    def __init__(self, ctx: Ctx, health: HttpClient) -> None:
        self.ctx = ctx
        self.health = health
        self.short = min(ctx.timeout, 2.0)
        self.evidence: list[Transcript] = [health.transcript]
        self.bystander: JsonSession | None = None
        self.problems: list[str] = []
        self.baseline = 0

    async def still_healthy(self, after: str) -> bool:
        try:
            reply = await self.health.get("/health")
        except TargetUnreachable as exc:
            self.problems.append(f"after {after}: the server no longer accepts connections ({truncate(str(exc), 80)})")
            return False
        if reply.status != self.baseline:
            self.problems.append(
                f"after {after}: /health answered {reply.describe()}, before it answered {self.baseline}"
            )
        # A bystander that fell silent was closed then; its silence is already one of the problems.
        if self.bystander is not None and self.bystander.lost is None:
            state = await self.bystander.state(judge_silence=True)
            if state.kind != "state":
                self.problems.append(f"after {after}: the bystander session got {state.describe()}")
        return reply.status == self.baseline

    async def hostile_session(self, label: str) -> JsonSession | None:
        try:
            ws = await connect_session(self.ctx, label)
        except (TargetUnreachable, Refused) as exc:
            why = f"{label}: could not connect ({truncate(str(exc), 80)})"
            if len(self.evidence) == 1:  # not one session yet, so nothing hostile was sent: survival is untested
                raise PhaseStopped(f"no session opened before any hostile input: {why}", list(self.evidence)) from None
            self.problems.append(why)
            return None
        self.evidence.append(ws.transcript)
        return ws

    async def hostile_frames(self) -> bool:
        """Each hostile frame on its own session; whether the server stayed healthy through all of them."""
        options = self.ctx.options
        frames = HOSTILE_FRAMES + (("an oversized text frame", "x" * options.oversize_bytes, False),)
        for what, frame, judged in frames:
            ws = await self.hostile_session(f"hostile: {what}")
            if ws is None:
                return False
            await ws.reset(options.reset)
            await ws.send_raw(frame, f"{what} ({len(frame)} bytes)")
            first = await ws.listen(self.short)
            # Silence here is the hostile input's effect, judged by clean-end: the session is not used again.
            follow = first if first.closed is not None else await ws.state(judge_silence=True)
            if judged:
                record(self.ctx.report, judge.clean_end(what, first, follow, ws.socket.closed), ws.transcript)
            await ws.close()
            if not await self.still_healthy(what):
                return False
        return True

    async def drops_and_burst(self) -> None:
        """A connection dropped mid-request, then a burst of bad sessions, then (alone) a fresh session."""
        ctx, options = self.ctx, self.ctx.options
        ws = await self.hostile_session("hostile: dropped mid-request")
        if ws is not None:
            await ws.send({"type": "reset", "data": dict(options.reset)})
            ws.drop()
            await self.still_healthy("a connection dropped mid-request")
        burst = max(1, (ctx.state.capacity or group_size(ctx)) - (self.bystander is not None))
        await asyncio.gather(*(_bad_session(self.hostile_session, index, self.short) for index in range(burst)))
        # Without a bystander (one-session servers), a fresh session is the proof sessions still work.
        if await self.still_healthy(f"a burst of {burst} bad sessions") and self.bystander is None:
            fresh, reply, tried = await session_with_grace(ctx, "fresh session after hostile input", options.reset)
            self.evidence.extend(tried)
            if fresh is None:
                self.problems.append(f"a fresh session could not reset: {reply.describe()}")
            else:
                await finish(fresh, ctx.timeout)


async def _bad_session(open_hostile: Callable[[str], Awaitable[JsonSession | None]], index: int, short: float) -> None:
    ws = await open_hostile(f"hostile: burst session {index + 1}")
    if ws is None:
        return
    await ws.send_raw("{not json", "malformed JSON")
    await ws.send_raw("[]", "non-object JSON")
    await ws.listen(short)
    ws.drop()
