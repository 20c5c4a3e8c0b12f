from __future__ import annotations

from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.plugrl_client.drive import ended_early, exchange_until, judge_no_reconnect
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session

FRAME_TOO_BIG = 1009


async def basic_phase(ctx: Ctx) -> None:
    """A 2 MiB metadata key, float64 position-coded actions, a stop; then the client should stay away."""
    session = Session(ctx, await accept_client(ctx, "basic"), reuse_offered=False, reconnected=False)
    try:
        await session.open(padded=True)
        envs = await session.infer()
    except PeerClosed as closed:
        if closed.code == FRAME_TOO_BIG:
            ctx.report.failed(
                "plugrl-client.1.1.large-frame",
                expected="the 2 MiB metadata accepted",
                actual="closed with 1009 (message too big)",
                evidence=session.transcript,
            )
        else:
            ctx.report.failed(
                "plugrl-client.5.1.unknown-keys",
                expected="an infer after a metadata with an unknown key",
                actual=f"closed (code {closed.code}) after the metadata",
                evidence=session.transcript,
            )
        raise ended_early(session, closed) from None
    except NoReply as silent:
        raise ended_early(session, silent) from None
    ctx.report.passed("plugrl-client.1.1.large-frame", actual="an infer after the 2 MiB metadata")
    ctx.report.passed("plugrl-client.5.1.unknown-keys", actual="an infer after the metadata with conformance_padding")
    try:
        await session.answer(envs)
        await session.feedback()
        await exchange_until(session, ctx.options.steps)
    except (PeerClosed, NoReply) as problem:
        raise ended_early(session, problem) from None
    await session.stop()
    ctx.report.info(
        "plugrl-client.5.3.reads-env-ids",
        actual="not judged: a conforming server echoes env_indices and lets the client pick its feedback set",
    )
    await judge_no_reconnect(ctx)
