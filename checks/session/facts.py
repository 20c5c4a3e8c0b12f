"""Per-run facts the phases share, fetched by the first phase that needs them: the model id and the tree mode."""

from __future__ import annotations

from typing import Any

from checks.http_client import Reply
from checks.session.options import Ctx
from checks.session.routes import SessionClient


def client(ctx: Ctx, label: str) -> SessionClient:
    """A client for the target with its own transcript in the current phase."""
    return SessionClient(ctx.url, ctx.report.transcript(label), ctx.timeout, ctx.options)


async def base_request(ctx: Ctx, http: SessionClient, sid: str) -> dict[str, Any]:
    """The fields every chat carries: the model (option, else the proxy's GET v1/models), temperature 0, a seed."""
    if ctx.state.model is None:
        ctx.state.model = ctx.options.model
    if ctx.state.model is None:
        listed = await http.call("GET", f"/sessions/{sid}/v1/models")
        data = listed.body.get("data") if isinstance(listed.body, dict) else None
        if isinstance(data, list) and data and isinstance(data[0], dict) and isinstance(data[0].get("id"), str):
            ctx.state.model = str(data[0]["id"])
    body: dict[str, Any] = {"temperature": 0, "seed": 20260803, "max_tokens": ctx.options.max_tokens_cap * 4}
    if ctx.state.model is not None:
        body["model"] = ctx.state.model
    return body


def tree_mode(ctx: Ctx, snapshot: Reply) -> str:
    """v1 or v2: the option, else v2 when GET /sessions/{id} carries metadata.tree."""
    if ctx.options.tree != "auto":
        return ctx.options.tree
    if ctx.state.tree is None:
        metadata = snapshot.body.get("metadata") if isinstance(snapshot.body, dict) else None
        ctx.state.tree = "v2" if isinstance(metadata, dict) and "tree" in metadata else "v1"
    return ctx.state.tree


def records_of(snapshot: Reply) -> list[dict[str, Any]]:
    records = snapshot.body.get("records") if isinstance(snapshot.body, dict) else None
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def metadata_of(snapshot: Reply) -> dict[str, Any]:
    metadata = snapshot.body.get("metadata") if isinstance(snapshot.body, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def message_of(body: Any) -> dict[str, Any]:
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return {}
    return message if isinstance(message, dict) else {}


def output_ids(record: dict[str, Any]) -> list[Any]:
    try:
        return [pair[1] for pair in record["response"]["choices"][0]["meta_info"]["output_token_logprobs"]]
    except (KeyError, IndexError, TypeError):
        return []


def output_logprobs(record: dict[str, Any]) -> list[Any]:
    try:
        return [pair[0] for pair in record["response"]["choices"][0]["meta_info"]["output_token_logprobs"]]
    except (KeyError, IndexError, TypeError):
        return []


def input_ids(record: dict[str, Any]) -> list[Any]:
    ids = (record.get("request") or {}).get("input_ids")
    return ids if isinstance(ids, list) else []
