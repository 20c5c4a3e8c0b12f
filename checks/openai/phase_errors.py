"""OA-12, OA-13: invalid requests, an unknown model, missing and wrong credentials."""

from __future__ import annotations

from typing import Any

from checks.openai.client import ChatClient, Reply
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.shapes import error_shape_problem


async def errors_phase(ctx: Ctx) -> None:
    model = await model_of(ctx)
    user = [{"role": "user", "content": "Hello."}]
    # (what, body or raw text, whether a lenient target may accept it)
    cases: list[tuple[str, dict[str, Any] | str, bool]] = [
        ("malformed JSON", '{"model": "' + model + '", "messages": [', False),
        ("no messages", {"model": model}, True),
        ("role wizard", {"model": model, "messages": [{"role": "wizard", "content": "Hi."}]}, True),
        ("temperature 5", {"model": model, "messages": user, "temperature": 5}, True),
        ("top_logprobs 21", {"model": model, "messages": user, "logprobs": True, "top_logprobs": 21}, True),
        ("n 0", {"model": model, "messages": user, "n": 0}, True),
    ]
    async with client(ctx, "invalid requests") as http:
        for what, body, lenient_ok in cases:
            if isinstance(body, str):
                reply = await http.request("POST", "/chat/completions", raw=body)
            else:
                reply = await http.chat(body)
            judge_invalid(ctx, http, what, reply, lenient_ok=lenient_ok)
        unknown = await http.chat({"model": "no-such-model-rlconform", "messages": user, "max_tokens": 8})
        judge_refusal(ctx, http, "openai.errors.unknown-model", "an unknown model", unknown)
    await _auth(ctx, model, user)


def judge_invalid(ctx: Ctx, http: ChatClient, what: str, reply: Reply, *, lenient_ok: bool) -> None:
    report = ctx.report
    if reply.status == 200 and lenient_ok and not ctx.options.profile().strict_validation:
        report.info("openai.errors.rejects-invalid", actual=f"{what}: accepted (lenient, as the profile says)")
        return
    refused = 400 <= reply.status < 500 and reply.is_json
    report.check(
        refused,
        "openai.errors.rejects-invalid",
        expected=f"{what}: a 4xx JSON error",
        actual=f"{what}: {reply.describe()}",
        evidence=http.transcript,
    )
    if not refused:
        return
    report.check(
        reply.status == 400,
        "openai.errors.status-400",
        expected=f"{what}: 400",
        actual=f"{what}: {reply.status}",
        evidence=http.transcript,
    )
    check_error_shape(ctx, http, what, reply)


def check_error_shape(ctx: Ctx, http: ChatClient, what: str, reply: Reply) -> None:
    problem = error_shape_problem(reply.body, ctx.options.profile().error_shape)
    ctx.report.check(
        not problem,
        "openai.errors.shape",
        expected=f"{what}: an error body of the {ctx.options.profile().error_shape} shape",
        actual=f"{what}: {problem or 'as expected'}",
        evidence=http.transcript,
    )


def judge_refusal(ctx: Ctx, http: ChatClient, clause_id: str, what: str, reply: Reply) -> None:
    if reply.status == 200 and not ctx.options.profile().strict_validation:
        ctx.report.info(clause_id, actual=f"{what}: accepted (lenient, as the profile says)", evidence=http.transcript)
        return
    refused = 400 <= reply.status < 500 and reply.is_json
    ctx.report.check(
        refused,
        clause_id,
        expected=f"{what}: a 4xx JSON error",
        actual=f"{what}: {reply.describe()}",
        evidence=http.transcript,
    )
    if refused:
        check_error_shape(ctx, http, what, reply)


async def _auth(ctx: Ctx, model: str, user: list[dict[str, str]]) -> None:
    report = ctx.report
    if ctx.options.api_key is None:
        report.unsupported("openai.auth.required", "no api_key option: auth is not checked")
        return
    body = {"model": model, "messages": user, "max_tokens": 8}
    for what, authorized, headers in (
        ("no key", False, None),
        ("a wrong key", False, {"Authorization": "Bearer rlconform-wrong-key"}),
    ):
        async with client(ctx, f"auth: {what}", authorized=authorized, headers=headers) as http:
            reply = await http.chat(body)
        report.check(
            reply.status == 401 and reply.is_json,
            "openai.auth.required",
            expected=f"{what}: 401 with a JSON error",
            actual=f"{what}: {reply.describe()}",
            evidence=http.transcript,
        )
