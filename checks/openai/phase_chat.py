"""OA-02…OA-04, OA-16…OA-18: plain chats, a max_tokens 1 cut, n 2 and UTF-8 text."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.openai.client import ChatClient, Reply
from checks.openai.facts import client, content_of, echoes, hygiene_problems, model_of
from checks.openai.options import Ctx
from checks.openai.requests import UNICODE_TEXT, chat_body, nonce, repeat_prompt
from checks.openai.shapes import (
    FINISH_REASONS,
    chat_problems,
    completion_tokens,
    finish_reasons,
    first_choice,
    usage_problems,
)


async def chat_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    cap = ctx.options.max_tokens_cap
    async with client(ctx, "plain chats") as http:
        code = nonce()
        first = await http.chat(chat_body(model, repeat_prompt(code), cap))
        problems = chat_problems(first.body) if first.status == 200 else [f"status {first.status}"]
        if not first.content_type.startswith("application/json"):
            problems.append(f"content-type {first.content_type!r}")
        if not report.check(
            not problems,
            "openai.chat.shape",
            expected="200 application/json chat.completion with id, created, model, choices[0]",
            actual="; ".join(problems) or first.describe(),
            evidence=http.transcript,
        ):
            raise PhaseStopped("the minimal chat was not a chat.completion", http.transcript)
        if code not in content_of(first.body):
            ctx.state.echoes = False  # one miss settles it; a repeat is confirmed by `echoes` before use
        check_reply(ctx, http, first, max_tokens=cap)
        again = await http.chat(chat_body(model, repeat_prompt(code), cap))
        check_reply(ctx, http, again, max_tokens=cap)
        counts = [(r.body.get("usage") or {}).get("prompt_tokens") for r in (first, again)]
        report.check(
            counts[0] == counts[1],
            "openai.usage.prompt-stable",
            expected="the same prompt_tokens for the same prompt",
            actual=f"prompt_tokens {counts[0]} then {counts[1]}",
            evidence=http.transcript,
        )
        await _max_tokens_one(ctx, http, model)
        await _two_choices(ctx, http, model)
        await _unicode(ctx, http, model)


def check_reply(ctx: Ctx, http: ChatClient, reply: Reply, *, max_tokens: int | None) -> None:
    """What every 200 chat reply must hold: finish reasons, usage, header hygiene."""
    report = ctx.report
    reasons = finish_reasons(reply.body)
    report.check(
        bool(reasons) and all(r in FINISH_REASONS for r in reasons),
        "openai.chat.finish-reason",
        expected=" | ".join(sorted(FINISH_REASONS)),
        actual=f"finish_reason {reasons}",
        evidence=http.transcript,
    )
    problems = usage_problems(reply.body)
    report.check(
        not problems,
        "openai.usage.consistent",
        expected="non-negative integer usage with total = prompt + completion",
        actual="; ".join(problems) or str(reply.body.get("usage")),
        evidence=http.transcript,
    )
    tokens = completion_tokens(reply.body)
    if max_tokens is not None and tokens is not None:
        if ctx.options.profile().max_tokens:
            report.check(
                tokens <= max_tokens,
                "openai.usage.within-max-tokens",
                expected=f"completion_tokens <= max_tokens {max_tokens}",
                actual=f"completion_tokens {tokens}",
                evidence=http.transcript,
            )
        else:
            report.unsupported("openai.usage.within-max-tokens", "the profile says max_tokens is not honoured")
    hygiene = hygiene_problems(reply)
    report.check(
        not hygiene,
        "openai.http.hygiene",
        expected="one content-type, at most one server and date, a true content-length or chunked",
        actual="; ".join(hygiene) or "headers fine",
        evidence=http.transcript,
    )


async def _max_tokens_one(ctx: Ctx, http: ChatClient, model: str) -> None:
    report = ctx.report
    if not ctx.options.profile().max_tokens:
        report.unsupported("openai.limits.max-tokens", "the profile says max_tokens is not honoured")
        return
    reply = await http.chat(chat_body(model, "Count from one to twenty in words, separated by spaces.", 1))
    if reply.status != 200:
        report.failed(
            "openai.limits.max-tokens",
            expected="200 with finish_reason length",
            actual=reply.describe(),
            evidence=http.transcript,
        )
        return
    check_reply(ctx, http, reply, max_tokens=1)
    report.check(
        first_choice(reply.body).get("finish_reason") == "length",
        "openai.limits.max-tokens",
        expected="finish_reason length after max_tokens 1",
        actual=f"finish_reason {first_choice(reply.body).get('finish_reason')!r}, content {content_of(reply.body)!r}",
        evidence=http.transcript,
    )


async def _two_choices(ctx: Ctx, http: ChatClient, model: str) -> None:
    reply = await http.chat(chat_body(model, "Name a colour.", 8, n=2))
    choices = reply.body.get("choices") if reply.status == 200 and isinstance(reply.body, dict) else None
    indices = [c.get("index") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else None
    refused = 400 <= reply.status < 500 and reply.is_json
    ctx.report.check(
        indices == [0, 1] or refused,
        "openai.chat.n-choices",
        expected="two choices with indices 0 and 1, or a 4xx JSON error",
        actual=f"indices {indices}" if indices is not None else reply.describe(),
        evidence=http.transcript,
    )


async def _unicode(ctx: Ctx, http: ChatClient, model: str) -> None:
    echoing = await echoes(ctx, http)
    reply = await http.chat(chat_body(model, f"Repeat exactly: {UNICODE_TEXT}", ctx.options.max_tokens_cap))
    text = content_of(reply.body)
    problems = unicode_problems(text, echoing)
    ctx.report.check(
        reply.status == 200 and not problems,
        "openai.unicode.round-trip",
        expected=f"UTF-8 intact{' and the text repeated exactly' if echoing else ''}",
        actual="; ".join(problems) or reply.describe(),
        evidence=http.transcript,
    )


def unicode_problems(text: str, echoes: bool) -> list[str]:
    if "\ufffd" in text:
        return [f"replacement characters in {text[:120]!r}"]
    if echoes and UNICODE_TEXT not in text:
        return [f"the repeated text differs: {text[:120]!r}"]
    return []
