from __future__ import annotations

from checks.rllink_client.drive import serve, start_session
from checks.rllink_client.options import Ctx


async def session_phase(ctx: Ctx) -> None:
    """The client's handshake and `batches` on-policy batches, each answered with freshly trained weights."""
    conv, first = await start_session(ctx, "session")
    await serve(conv, first, ctx.options.batches)
    if not any(r.clause_id == "rllink-client.req-resp.episodes-no-reply" for r in ctx.report.results.values()):
        ctx.report.info(
            "rllink-client.req-resp.episodes-no-reply",
            actual="not judged, because the client sent every episode with EPISODES_AND_GET_STATE",
        )
    if conv.dialect == "json":
        ctx.report.info(
            "rllink-client.chunk.continuity",
            actual="not judged, because json-dialect chunks carry no episode id or step counter",
        )
