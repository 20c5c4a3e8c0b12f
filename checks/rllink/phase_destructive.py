"""The destructive phase (opt-in, last): semantically bad EPISODES and a short on-policy batch.

RLlib's listener thread dies on the first and deadlocks on the second, so a
live trainer is never sent these unless asked (`--until-stop` or by name).
"""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.errors import CheckError
from checks.rllink import judging
from checks.rllink.episodes import batch, broken_episodes
from checks.rllink.options import Ctx
from checks.rllink.session import after_bad_input, shared_link


async def destructive_phase(ctx: Ctx) -> None:
    report, options, state = ctx.report, ctx.options, ctx.state
    dialect = state.dialect
    assert dialect is not None
    short = max(1, (state.fragment_length or 2) // 4)
    probes = [
        *broken_episodes(options, dialect),
        (
            f"a short on-policy batch ({short} steps)",
            {"type": "EPISODES_AND_GET_STATE", "episodes": batch(options, dialect, short, seed=5), "timesteps": short},
        ),
    ]
    clause = "rllink.payload.robustness"
    for what, message in probes:
        link = await shared_link(ctx, f"destructive: {what}")
        state.link = None
        await link.send(message, dialect)
        answered = False
        if message["type"] == "EPISODES_AND_GET_STATE":
            # A server may answer a short batch (with the weights it has) or hold it; either way it must live on.
            try:
                await link.read_message(dialect, ctx.timeout)
                answered = True
            except CheckError:  # whatever came or did not, liveness below decides
                link.transcript.note("no SET_STATE for the short batch")
        outcome, after, detail = await after_bad_input(ctx, link, f"after {what}", answered=answered)
        decision = judging.recovery(clause, what, outcome, detail, after is not None)
        if after is None:
            record(report, decision, link.transcript)
            raise PhaseStopped(f"the server is {outcome} after {what}", link.transcript)
        state.link = after
        record(report, decision, after.transcript)
