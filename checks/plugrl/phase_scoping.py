"""The scoping phase: env indices belong to one connection (SPEC 4.4), and clients are served side by side (6)."""

from __future__ import annotations

from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe, together


async def scoping_phase(ctx: Ctx) -> None:
    first, second = Probe(ctx, "scoping A"), Probe(ctx, "scoping B")
    try:
        await first.open()
        await second.open(alongside=True)
        for done in (False, True, False):
            await together(
                first.infer([0, 1], at_stake="plugrl.4.4.connection-scoped"),
                second.infer([0], at_stake="plugrl.4.4.connection-scoped"),
            )
            await together(first.feedback([0, 1], done=[done, False]), second.feedback([0]))
    finally:
        await first.close()
        await second.close()
