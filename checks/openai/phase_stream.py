"""OA-09…OA-11 and OA-18 in SSE: the stream format, equivalence with the JSON reply, the usage chunk."""

from __future__ import annotations

from typing import Any

from checks.openai.client import ChatClient
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.phase_chat import unicode_problems
from checks.openai.requests import UNICODE_TEXT, chat_body, parallel_tool_body, single_tool_body
from checks.openai.shapes import comparable
from checks.openai.sse import assembled, stream_format_problems, usage_chunk_problems


async def stream_phase(ctx: Ctx) -> None:
    report = ctx.report
    profile = ctx.options.profile()
    if not profile.streaming:
        for clause_id in ("openai.stream.format", "openai.stream.equivalent", "openai.stream.usage-chunk"):
            report.unsupported(clause_id, "the profile says the target does not stream")
        return
    model = await model_of(ctx)
    cap = ctx.options.max_tokens_cap
    async with client(ctx, "streams") as http:
        text_body = chat_body(model, "Describe the sea in two short sentences.", cap)
        await compare(ctx, http, text_body, "a text reply")
        if profile.tools:
            await compare(ctx, http, single_tool_body(model, cap), "a tool call")
        if profile.tools and profile.parallel_tool_calls:
            await compare(ctx, http, parallel_tool_body(model, cap), "parallel tool calls")
        plain = await http.stream(text_body)
        problems = usage_chunk_problems(plain, asked=False)
        report.check(
            not problems,
            "openai.stream.usage-chunk",
            expected="no usage chunk without stream_options.include_usage",
            actual="; ".join(problems) or "none",
            evidence=http.transcript,
        )
        unicode = await http.stream({**chat_body(model, f"Repeat exactly: {UNICODE_TEXT}", cap), "stream": True})
        text = str(assembled(unicode)["content"])
        problems = [unicode.problem or f"status {unicode.status}"] if unicode.status != 200 or unicode.problem else []
        problems = problems or unicode_problems(text, ctx.state.echoes is True)
        report.check(
            not problems,
            "openai.unicode.round-trip",
            expected="UTF-8 intact in SSE deltas",
            actual="; ".join(problems) or text[:120],
            evidence=http.transcript,
        )


async def compare(ctx: Ctx, http: ChatClient, body: dict[str, Any], what: str) -> None:
    """JSON reply, stream, JSON reply: the stream must be well formed and, if the two JSON replies agree, equal them."""
    report = ctx.report
    before = await http.chat(body)
    stream = await http.stream({**body, "stream": True, "stream_options": {"include_usage": True}})
    after = await http.chat(body)
    problems = stream_format_problems(stream)
    report.check(
        not problems,
        "openai.stream.format",
        expected="SSE chat.completion.chunk events, role first, one finish_reason, [DONE] last",
        actual=f"{what}: " + ("; ".join(problems) or f"{len(stream.payloads)} chunks"),
        evidence=http.transcript,
    )
    if problems:
        return
    usage = usage_chunk_problems(stream, asked=True)
    report.check(
        not usage,
        "openai.stream.usage-chunk",
        expected="one last chunk with choices [] and usage",
        actual="; ".join(usage) or "as expected",
        evidence=http.transcript,
    )
    if before.status != 200 or after.status != 200:
        report.error(
            "openai.stream.equivalent", f"{what}: the JSON replies failed: {before.describe()}", http.transcript
        )
        return
    if comparable(before.body) != comparable(after.body):
        report.info(
            "openai.stream.equivalent",
            actual=f"not judged, because two JSON replies to the same seeded request differ ({what})",
            evidence=http.transcript,
        )
        return
    streamed, expected = assembled(stream), comparable(before.body)
    report.check(
        streamed == expected,
        "openai.stream.equivalent",
        expected=f"{what}: {expected}",
        actual=f"streamed: {streamed}",
        evidence=http.transcript,
    )
