"""OA-01: the model list, and a chat naming a listed model."""

from __future__ import annotations

from checks.decision import record
from checks.openai import judging
from checks.openai.facts import client, first_model
from checks.openai.options import Ctx
from checks.openai.requests import chat_body


async def models_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "GET /models") as http:
        reply = await http.get("/models")
        if not record(report, judging.models_listed(reply), http.transcript):
            return
        model = ctx.options.model or first_model(reply)
        ctx.state.model = ctx.state.model or model
        if model is None:
            report.info("openai.models.list", actual="GET /models lists no model; set the model option")
            return
        chat = await http.chat(chat_body(model, "Say hello.", 8))
        record(report, judging.listed_model_answers(chat, model), http.transcript)
