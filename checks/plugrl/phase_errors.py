"""The errors phase: seven malformed inputs, each answered with a resync close (SPEC 7.2).

Each fault goes on a connection of its own while a bystander connection,
opened before it, keeps being answered; after each, a new connection must
still get its metadata. A server may batch across connections (SPEC 6), so
the bystander is driven while the faulty connection waits on its close.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from checks.errors import PhaseStopped
from checks.plugrl import judging_phases
from checks.plugrl.messages import FAULTS
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe, together


async def errors_phase(ctx: Ctx) -> None:
    options = ctx.options
    bystander: Probe | None = None
    try:
        for clause, what, after_infer, fault in FAULTS:
            if bystander is None:
                bystander = Probe(ctx, "bystander")
                await bystander.open()
            faulty = Probe(ctx, f"faulty: {what}")
            try:
                await faulty.open(alongside=True)
                if after_infer:
                    await together(faulty.infer([0, 1]), bystander.infer([0]))
                    await bystander.feedback([0])
                # The bystander asks meanwhile: a batching server may be waiting for it, and
                # gets until the faulty connection is closed, plus a deadline, to answer.
                meanwhile = bystander.cycle([0], at_stake="plugrl.7.2.bystander-survives", timeout=2 * ctx.timeout)
                resync = faulty.fault(fault(options), clause, what)
                _, alive = await together(_went_through(resync), _went_through(meanwhile))
            finally:
                await faulty.close()
            if alive:  # and once more, now that the fault is certainly behind it
                alive = await _went_through(bystander.cycle([0], at_stake="plugrl.7.2.bystander-survives"))
            if not alive:
                await bystander.close()
                bystander = None
            await _new_connection_after(ctx, what)
    finally:
        if bystander is not None:
            await bystander.close()


async def _went_through(step: Awaitable[Any]) -> bool:
    """Whether a step went through; a failure is already recorded under its clause."""
    try:
        await step
    except PhaseStopped:
        return False
    return True


async def _new_connection_after(ctx: Ctx, what: str) -> None:
    fresh = Probe(ctx, f"new connection after {what}")
    try:
        await fresh.open(at_stake=judging_phases.ACCEPTS_AFTER_ERROR)
    except PhaseStopped as exc:  # an unreachable target too: it stops this phase, not the run
        fresh.record([judging_phases.no_connection_after_error(what, str(exc))])
        raise PhaseStopped("the server takes no new connections", fresh.transcript) from None
    finally:
        await fresh.close()
