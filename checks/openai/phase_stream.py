"""OA-09…OA-11 and OA-18 in SSE: the stream format, equivalence with the JSON reply, the usage chunk."""

from __future__ import annotations

from typing import Any

from checks.decision import unsupported
from checks.openai import judging, judging_tools
from checks.openai.facts import ChatClient, client, model_of
from checks.openai.options import Ctx
from checks.openai.recording import PhaseRecord, offered
from checks.openai.requests import UNICODE_TEXT, chat_body, parallel_tool_body, single_tool_body

STREAM_CLAUSES = ("openai.stream.format", "openai.stream.equivalent", "openai.stream.usage-chunk")
STREAM_PHASE_CLAUSES = (*STREAM_CLAUSES, "openai.unicode.round-trip", "openai.tools.call-shape", "openai.errors.shape")


async def stream_phase(ctx: Ctx) -> None:
    profile = ctx.options.profile()
    if not offered(ctx.report, profile.streaming, STREAM_CLAUSES, "the profile says the target does not stream"):
        return
    model, cap = await model_of(ctx), ctx.options.max_tokens_cap
    text_body = chat_body(model, "Describe the sea in two short sentences.", cap)
    phase = PhaseRecord(ctx.report)
    async with client(ctx, "streams") as http:
        await compare(ctx, phase, http, text_body, "a text reply")
        if profile.tools:
            await compare(ctx, phase, http, single_tool_body(model, cap), "a tool call")
        if profile.tools and profile.parallel_tool_calls:
            await compare(ctx, phase, http, parallel_tool_body(model, cap), "parallel tool calls")
        plain = await http.stream({**text_body, "stream": True})
        phase.record(judging.usage_chunk(plain, asked=False), http.transcript)
        unicode = await http.stream({**chat_body(model, f"Repeat exactly: {UNICODE_TEXT}", cap), "stream": True})
        phase.record(judging.stream_unicode(unicode, ctx.state.echoes is True), http.transcript)
    phase.close()


async def compare(ctx: Ctx, phase: PhaseRecord, http: ChatClient, body: dict[str, Any], what: str) -> None:
    """JSON reply, stream, JSON reply: the stream must be well formed and, if the two JSON replies agree, equal them.

    Each clause on its own evidence: a malformed stream still shows its usage chunk and call ids,
    and a refused one is judged by the error shape alone."""
    before = await http.chat(body)
    stream = await http.stream({**body, "stream": True, "stream_options": {"include_usage": True}})
    after = await http.chat(body)
    decisions = [judging.stream_format(stream, what, twin=before)]
    if ctx.options.profile().stream_usage:
        decisions.append(judging.usage_chunk(stream, asked=True))
    else:
        decisions.append(unsupported("openai.stream.usage-chunk", "the profile says include_usage is not honoured"))
    if "tools" in body:
        decisions.append(judging_tools.streamed_call_ids(stream, what))
    decisions.append(judging.stream_equivalent(before, stream, after, what))
    if stream.error_reply is not None:
        decisions += judging.refusal_shape(stream.error_reply, f"{what} streamed", ctx.options.profile().error_shape)
    phase.record(decisions, http.transcript)
