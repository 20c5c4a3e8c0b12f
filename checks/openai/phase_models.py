"""OA-01: the model list, and a chat naming a listed model."""

from __future__ import annotations

from checks.openai.facts import client, first_model
from checks.openai.options import Ctx
from checks.openai.requests import chat_body


async def models_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "GET /models") as http:
        reply = await http.get("/models")
        body = reply.body if isinstance(reply.body, dict) else {}
        data = body.get("data")
        entries_ok = isinstance(data, list) and all(
            isinstance(e, dict) and isinstance(e.get("id"), str) and e.get("object") == "model" for e in data
        )
        listed = reply.status == 200 and body.get("object") == "list" and entries_ok
        if not report.check(
            listed,
            "openai.models.list",
            expected='200 {"object": "list", "data": [{"id": str, "object": "model"}, ...]}',
            actual=reply.describe(),
            evidence=http.transcript,
        ):
            return
        model = ctx.options.model or first_model(reply)
        ctx.state.model = ctx.state.model or model
        if model is None:
            report.info("openai.models.list", actual="GET /models lists no model; set the model option")
            return
        chat = await http.chat(chat_body(model, "Say hello.", 8))
        report.check(
            chat.status == 200,
            "openai.models.list",
            expected=f"a chat naming model {model!r} is answered 200",
            actual=chat.describe(),
            evidence=http.transcript,
        )
