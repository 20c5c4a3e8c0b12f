"""The openai-chat phases, each run unchanged against a fresh session's /sessions/{id}/v1 proxy."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from checks.core import Phase, PhaseContext
from checks.openai.options import OpenAIChatOptions, OpenAIState
from checks.session.facts import client
from checks.session.options import Ctx


def proxy_phase_for(phase: Phase) -> Callable[[Ctx], Awaitable[None]]:
    """A phase that opens a session, runs `phase` with the session's base URL, and deletes the session.

    One session per openai phase: a v1 server refuses a conversation that diverges from a stored one by two
    generations, which unrelated probes of one phase would otherwise do across phases.
    """

    async def proxy_phase(ctx: Ctx) -> None:
        async with client(ctx, f"session for {phase.name}") as http:
            sid = await http.new_session()
            options = OpenAIChatOptions.model_validate(
                {k: getattr(ctx.options, k) for k in OpenAIChatOptions.model_fields}
            )
            proxied = PhaseContext(
                f"{ctx.url.rstrip('/')}/sessions/{sid}/v1", options, ctx.report, OpenAIState(model=ctx.state.model)
            )
            try:
                await phase.run(proxied)
            finally:
                await http.delete(sid)

    return proxy_phase
