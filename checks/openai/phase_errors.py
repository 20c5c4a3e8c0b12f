"""OA-12, OA-13: invalid requests, an unknown model, missing and wrong credentials."""

from __future__ import annotations

from typing import Any

from checks.decision import record
from checks.http_client import Reply
from checks.openai import judging
from checks.openai.facts import ChatClient, client, model_of
from checks.openai.options import Ctx


async def errors_phase(ctx: Ctx) -> None:
    model = await model_of(ctx)
    user = [{"role": "user", "content": "Hello."}]
    # (what, body or raw text, whether a lenient target may accept it)
    cases: list[tuple[str, dict[str, Any] | str, bool]] = [
        ("malformed JSON", '{"model": "' + model + '", "messages": [', False),
        ("no messages", {"model": model}, True),
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
        wizard = await http.chat({"model": model, "messages": [{"role": "wizard", "content": "Hi."}]})
        profile = ctx.options.profile()
        decisions = judging.unknown_role(wizard, strict=profile.strict_validation, error_shape=profile.error_shape)
        record(ctx.report, decisions, http.transcript)
        unknown = await http.chat({"model": "no-such-model-rlconform", "messages": user, "max_tokens": 8})
        judge_refusal(ctx, http, "openai.errors.unknown-model", "an unknown model", unknown)
    await _auth(ctx, model, user)


def judge_invalid(ctx: Ctx, http: ChatClient, what: str, reply: Reply, *, lenient_ok: bool) -> None:
    profile = ctx.options.profile()
    decisions = judging.invalid_refused(
        reply, what, lenient_ok=lenient_ok, strict=profile.strict_validation, error_shape=profile.error_shape
    )
    # An accepted invalid request is recorded without evidence, as it always was.
    lenient = len(decisions) == 1 and decisions[0].outcome == "info"
    record(ctx.report, decisions, None if lenient else http.transcript)


def judge_refusal(ctx: Ctx, http: ChatClient, clause_id: str, what: str, reply: Reply) -> None:
    profile = ctx.options.profile()
    decisions = judging.refusal(
        reply, clause_id, what, strict=profile.strict_validation, error_shape=profile.error_shape
    )
    record(ctx.report, decisions, http.transcript)


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
        record(report, judging.auth_refused(reply, what, ctx.options.profile().error_shape), http.transcript)
