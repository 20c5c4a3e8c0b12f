"""How a phase opens its endpoint and its seeded Join, and how a broken exchange stops the phase.

Every phase opens with a Handshake and a Join whose first request is a valid
reset. When the target ends or stalls such an exchange, the rest of the phase
cannot be judged: the phase stops (`PhaseStopped`), after recording what
`judging` finds the stop itself proves. Nothing here decides a clause.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import NamedTuple

from checks.core import NoReply, PhaseStopped, Report, Transcript
from checks.decision import Judged, record
from checks.rlmesh import codec, judging
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, RpcFailed
from checks.rlmesh.common import Contract, fetch_contract, finish_session, reset_request, seeds_for
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import env_pb2

BROKEN_OFF = (codec.ValueMismatch, JoinEnded, NoReply)  # what ends a session's exchanges early


def stopped(report: Report, judged: Judged[None], evidence: Transcript) -> PhaseStopped:
    """Record what a judge finds a dead end proves; the stop that ends the phase."""
    record(report, judged.decisions, evidence)
    return PhaseStopped(judged.stop or "the exchange cannot go on", evidence)


def opening_failed(report: Report, exc: RpcFailed | JoinEnded | NoReply) -> PhaseStopped:
    """A failed Handshake or valid request outside any session's own handling (`judging.opening_failed`)."""
    mine = [t for t in report.transcripts.values() if t.phase == report.phase]
    evidence = mine[-1] if mine else report.transcript("opening exchange")
    return stopped(report, judging.opening_failed(exc), evidence)


@asynccontextmanager
async def phase_endpoint(ctx: Ctx) -> AsyncIterator[Endpoint]:
    """The target's endpoint for one phase; a failed Handshake or unanswered Join stops the phase."""
    async with Endpoint(ctx.url, ctx.timeout, ctx.options.max_message_bytes) as target:
        try:
            yield target
        except (RpcFailed, JoinEnded, NoReply) as exc:
            raise opening_failed(ctx.report, exc) from None


class Opened(NamedTuple):
    target: Endpoint
    transcript: Transcript
    contract: Contract


@asynccontextmanager
async def opened(ctx: Ctx, title: str) -> AsyncIterator[Opened]:
    """`phase_endpoint`, a first transcript named `title`, and the contract the target's Handshake offers."""
    async with phase_endpoint(ctx) as target:
        transcript = ctx.report.transcript(title)
        yield Opened(target, transcript, await fetch_contract(target, transcript))


@dataclass
class Seeded:
    """A Join opened with a seeded reset of every lane, and the transcript its exchanges go to."""

    ctx: Ctx
    transcript: Transcript
    session: JoinSession  # replaced by a fresh session when a probe ends this one
    first: env_pb2.JoinResponse
    seeds: list[int]

    def expect(self, response: env_pb2.JoinResponse, kind: str, where: str) -> env_pb2.JoinResponse:
        """`response`, when it is of `kind`; else the refusal `judging.answered_with` finds ends the phase."""
        if (refusal := judging.answered_with(response, kind, where)) is not None:
            raise stopped(self.ctx.report, refusal, self.transcript)
        return response

    async def exchange(self, request: env_pb2.JoinRequest, kind: str, where: str) -> env_pb2.JoinResponse:
        return self.expect(await self.session.request(request), kind, where)


async def join_seeded(ctx: Ctx, target: Endpoint, contract: Contract, transcript: Transcript) -> Seeded:
    lanes = contract.num_envs
    seeds = seeds_for(ctx, lanes)
    session, first = await target.join(transcript, reset_request(seeds, ctx.state.episode_ids(lanes)))
    return Seeded(ctx, transcript, session, first, seeds)


@asynccontextmanager
async def kept(seeded: Seeded) -> AsyncIterator[Seeded]:
    """The seeded session's exchanges: its reset answered, a break-off a stop, the session judged and closed."""
    report, transcript = seeded.ctx.report, seeded.transcript
    try:
        seeded.expect(seeded.first, "reset", "seeded reset")
        yield seeded
    except BROKEN_OFF as exc:
        raise PhaseStopped(judging.broken_off(exc), transcript) from None
    finally:
        finish_session(report, seeded.session, transcript)
        await seeded.session.close()


@asynccontextmanager
async def seeded_session(
    ctx: Ctx, target: Endpoint, contract: Contract, transcript: Transcript
) -> AsyncIterator[Seeded]:
    """`join_seeded`, then `kept`: the way most phases open and close their session."""
    async with kept(await join_seeded(ctx, target, contract, transcript)) as seeded:
        yield seeded
