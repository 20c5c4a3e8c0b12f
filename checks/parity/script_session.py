"""The session-server parity script (SS-13): one scripted agent, K trajectories at once, samples bit for bit.

Each trajectory is the retry schedule of checks.session.agent (nine chat
calls: tool round trips, two rollbacks, a forced final answer) on its own
session, all K driven concurrently. Per trajectory the script records each
call's status and reply, the session right before collection (record count,
records, metadata, the v2 tree's shape) and the `/samples` payload: every
tensor by dtype, shape and bytes, every field as decoded JSON.

Projected: wall-clock fields (record timestamps, lifecycle times), the ids a
deployment makes up (session, request, response and tool-call ids, instance
ids: wherever OpenAI's and sglang's shapes put them, `choices[*].meta_info`
included), and
what only a tree server has (the tree, the agent summary, a sample's leaf and
reward) is compared only when both sides have it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic

from checks.core import PhaseContext, Report
from checks.http_client import Reply
from checks.parity.projections import Projection
from checks.parity.script import ExactScript, Observed, ParityOptions
from checks.session.agent import run_schedule
from checks.session.facts import base_request
from checks.session.options import SessionOptions, SessionState
from checks.session.routes import SessionClient
from checks.session.samples import SamplesFormatError, decode_samples


class SessionParityOptions(ParityOptions):
    trajectories: int = pydantic.Field(4, ge=1, le=64, description="Trajectories driven concurrently (K).")
    model: str | None = pydantic.Field(None, description="Model id sent in every chat (default: the proxy's first).")
    max_seq_len: int | None = pydantic.Field(None, ge=1, description="max_seq_len sent to /samples.")


def body_of(reply: Reply) -> Any:
    return reply.body if reply.is_json else {"raw": reply.raw}


def tree_shape(metadata: Any) -> Any:
    tree = metadata.get("tree") if isinstance(metadata, dict) else None
    if not isinstance(tree, dict):
        return None
    nodes = [(n.get("id"), n.get("parent")) for n in tree.get("nodes") or [] if isinstance(n, dict)]
    leaves = [(leaf.get("node_id"), leaf.get("path_node_ids")) for leaf in tree.get("leaves") or []]
    return {"nodes": nodes, "leaves": leaves}


def samples_value(reply: Reply) -> Any:
    if reply.status != 200:
        return {"status": reply.status, "body": body_of(reply)}
    try:
        samples, meta = decode_samples(reply.raw)
    except SamplesFormatError as exc:
        return {"undecodable": str(exc)}
    return {
        "samples": [{"tensors": s.tensors, "fields": s.fields} for s in samples],
        "session_metadata": meta.get("session_metadata"),
        "empty_reason": meta.get("empty_reason"),
    }


class SessionScript(ExactScript):
    kind = "session-server"
    version = "1"
    options_model = SessionParityOptions
    recorded_inputs = frozenset({"trajectories", "model", "max_seq_len"})
    projections = (
        Projection("trajectories[*].records[*].timestamp", "timestamp"),
        Projection("trajectories[*].records[*].request_timestamp", "timestamp"),
        Projection("**.lifecycle[*].t0", "timestamp"),
        Projection("**.lifecycle[*].t1", "timestamp"),
        Projection("**.lifecycle[*].req_ts", "timestamp"),
        Projection("**.lifecycle[*].prev_t1", "timestamp"),
        Projection("**.created", "timestamp"),
        Projection("**.committed_at", "timestamp"),
        Projection("**.e2e_latency", "timestamp"),
        Projection("**.session_id", "identity", "session"),
        Projection("**.session_server_instance_id", "identity", "instance"),
        Projection("**.response_id", "identity", "response"),
        Projection("**.choices[*].message.tool_calls[*].id", "identity", "tool-call"),
        Projection("**.messages[*].tool_calls[*].id", "identity", "tool-call"),
        Projection("**.tool_call_id", "identity", "tool-call"),
        # Response ids: OpenAI's top-level `id` of every chat reply, as the agent got it and as recorded.
        Projection("trajectories[*].calls[*].reply.id", "identity", "response"),
        Projection("trajectories[*].records[*].response.id", "identity", "response"),
        # Request ids: sglang's per-request id in `choices[*].meta_info` (`id`) and its `rid`, in the
        # request a record keeps and in every meta_info, wherever a reply or sample carries one.
        Projection("**.meta_info.id", "identity", "request"),
        Projection("**.meta_info.rid", "identity", "request"),
        Projection("**.request.rid", "identity", "request"),
        Projection("**.request.request_id", "identity", "request"),
        # Only a tree server has these; both sides' are compared when both have them.
        Projection("trajectories[*].tree", "optional"),
        Projection("**.metadata.tree", "optional"),
        Projection("**.session_metadata.agent", "optional"),
        Projection("**.session_metadata.tree", "optional"),
        Projection("**.fields.metadata.leaf", "optional"),
        Projection("**.fields.reward", "optional"),
        Projection("**.fields.nulls", "optional"),
    )

    async def observe(self, url: str, options: SessionParityOptions, report: Report) -> Observed:
        suite_options = SessionOptions(timeout=options.timeout, model=options.model)
        ctx = PhaseContext(url, suite_options, report, SessionState())
        trajectories = await asyncio.gather(
            *(self._trajectory(ctx, index, options) for index in range(options.trajectories))
        )
        calls = sum(len(t["calls"]) for t in trajectories)
        summary = f"{len(trajectories)} trajectories, {calls} calls"
        return Observed({"trajectories": list(trajectories)}, summary=summary)

    async def _trajectory(
        self, ctx: PhaseContext[SessionOptions, SessionState], index: int, options: SessionParityOptions
    ) -> dict[str, Any]:
        transcript = ctx.report.transcript(f"trajectory {index}")
        async with SessionClient(ctx.url, transcript, ctx.timeout, ctx.options) as http:
            sid = await http.new_session()
            run = await run_schedule(http, sid, await base_request(ctx, http, sid))
            before = await http.get(sid)
            collected = await http.samples(sid, {"max_seq_len": options.max_seq_len, "metadata": {}})
            await http.delete(sid)
        snapshot = before.body if isinstance(before.body, dict) else {}
        records = snapshot.get("records")
        observed = {
            "calls": [{"event": s.event, "status": s.reply.status, "reply": body_of(s.reply)} for s in run.steps],
            "record_count": len(records) if isinstance(records, list) else None,
            "records": records,
            "metadata": snapshot.get("metadata"),
            "samples": samples_value(collected),
        }
        shape = tree_shape(snapshot.get("metadata"))
        if shape is not None:  # a linear (v1) server has none: compared only between tree servers
            observed["tree"] = shape
        return observed


SCRIPT = SessionScript()
