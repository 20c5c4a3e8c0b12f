"""OA-02…OA-04, OA-16…OA-18: plain chats, a max_tokens 1 cut, n 2 and UTF-8 text."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.http_client import Reply
from checks.openai import judging
from checks.openai.facts import ChatClient, client, echoes, model_of
from checks.openai.judging import content_of
from checks.openai.options import Ctx
from checks.openai.requests import UNICODE_TEXT, chat_body, nonce, repeat_prompt

# What `check_reply` decides on every 200 chat reply, in whichever phase got the reply.
REPLY_CLAUSES = (
    "openai.chat.finish-reason",
    "openai.usage.consistent",
    "openai.usage.within-max-tokens",
    "openai.http.hygiene",
)


async def chat_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    cap = ctx.options.max_tokens_cap
    async with client(ctx, "plain chats") as http:
        code = nonce()
        first = await http.chat(chat_body(model, repeat_prompt(code), cap))
        if not record(report, judging.chat_shape(first), http.transcript):
            raise PhaseStopped("the minimal chat was not a chat.completion", http.transcript)
        if code not in content_of(first.body):
            ctx.state.echoes = False  # one miss settles it; a repeat is confirmed by `echoes` before use
        check_reply(ctx, http, first, max_tokens=cap)
        again = await http.chat(chat_body(model, repeat_prompt(code), cap))
        check_reply(ctx, http, again, max_tokens=cap)
        record(report, judging.prompt_stable(first, again), http.transcript)
        await _max_tokens_one(ctx, http, model)
        if ctx.options.profile().n_choices:
            reply = await http.chat(chat_body(model, "Name a colour.", 8, n=2))
            record(report, judging.two_choices(reply), http.transcript)
        else:
            report.unsupported("openai.chat.n-choices", "the profile says the target gives one choice whatever n is")
        echoing = await echoes(ctx, http)
        reply = await http.chat(chat_body(model, f"Repeat exactly: {UNICODE_TEXT}", cap))
        record(report, judging.unicode_round_trip(reply, echoing), http.transcript)


def check_reply(ctx: Ctx, http: ChatClient, reply: Reply, *, max_tokens: int | None) -> None:
    """What every 200 chat reply must hold (`REPLY_CLAUSES`): finish reasons, usage, header hygiene."""
    honours = ctx.options.profile().max_tokens
    record(ctx.report, judging.reply_rules(reply, max_tokens=max_tokens, honours_max_tokens=honours), http.transcript)
    if judging.max_tokens_compared(reply, max_tokens) and not honours:
        ctx.report.unsupported("openai.usage.within-max-tokens", "the profile says max_tokens is not honoured")


async def _max_tokens_one(ctx: Ctx, http: ChatClient, model: str) -> None:
    if not ctx.options.profile().max_tokens:
        ctx.report.unsupported("openai.limits.max-tokens", "the profile says max_tokens is not honoured")
        return
    reply = await http.chat(chat_body(model, "Count from one to twenty in words, separated by spaces.", 1))
    if reply.status == 200:
        check_reply(ctx, http, reply, max_tokens=1)
    record(ctx.report, judging.max_tokens_cut(reply), http.transcript)
