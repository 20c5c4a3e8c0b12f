"""Broken miles-style session servers: each overrides one behaviour of the reference and breaks one clause.

`catalogue.py` says which clause, and in which tree mode each is served.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from checks.session.reference import Session, SessionServer
from checks.session.samples import WireSample
from checks.session.trajectory import LinearTrajectory, Plan, TreeTrajectory, Turn


class HealthWithoutStatus(SessionServer):
    def health_body(self) -> dict[str, Any]:
        return {"healthy": True}


class ShortSessionIds(SessionServer):
    def new_session_id(self) -> str:
        return f"{len(self.sessions):08x}"


class DeleteAnswers200(SessionServer):
    async def delete_session(self, request: Request) -> Response:
        answer = await super().delete_session(request)
        return JSONResponse({"deleted": True}) if answer.status_code == 204 else answer


class DetailErrors(SessionServer):
    def error(self, status: int, message: str) -> Response:
        return JSONResponse({"detail": message}, status_code=status)


class RecordsOtherContent(SessionServer):
    def make_record(self, sent: dict[str, Any], response: dict[str, Any], requested_at: float) -> dict[str, Any]:
        record = super().make_record(sent, json.loads(json.dumps(response)), requested_at)
        record["response"]["choices"][0]["message"]["content"] += " "
        return record


class StreamNotRecorded(SessionServer):
    def backend_request(self, body: dict[str, Any], input_ids: list[int]) -> dict[str, Any]:
        return {**super().backend_request(body, input_ids), "skip_record": bool(body.get("stream"))}

    def commit(self, session: Session, plan: Any, body: dict[str, Any], sent: dict[str, Any], *rest: Any) -> None:
        if not sent.get("skip_record"):
            super().commit(session, plan, body, sent, *rest)


class RecordsKeepStream(SessionServer):
    def backend_request(self, body: dict[str, Any], input_ids: list[int]) -> dict[str, Any]:
        return {**super().backend_request(body, input_ids), "stream": bool(body.get("stream"))}


class Float32RoundedSamples(SessionServer):
    def assemble(self, session: Session, *args: Any) -> tuple[list[WireSample], str | None]:
        samples, reason = super().assemble(session, *args)
        for sample in samples:
            sample.tensors["rollout_log_probs"] = (
                sample.tensors["rollout_log_probs"].astype(np.float32).astype(np.float64)
            )
        return samples, reason


class Float32Samples(SessionServer):
    def assemble(self, session: Session, *args: Any) -> tuple[list[WireSample], str | None]:
        samples, reason = super().assemble(session, *args)
        for sample in samples:
            sample.tensors["rollout_log_probs"] = sample.tensors["rollout_log_probs"].astype(np.float32)
        return samples, reason


class AllNodesAsRecords(SessionServer):
    def records(self, session: Session) -> list[dict[str, Any]]:
        trajectory = session.trajectory
        return (
            [n.record for n in trajectory.nodes] if isinstance(trajectory, TreeTrajectory) else super().records(session)
        )


class ChainTree(TreeTrajectory):
    """Every new node hangs under the last one, so a retry looks like a continuation."""

    def commit(self, plan: Plan, turn: Turn) -> bool:
        return super().commit(Plan(self.active, 0), turn)


class RetryExtendsChain(SessionServer):
    def new_trajectory(self) -> TreeTrajectory:
        return ChainTree()


class UnboundedRollback(LinearTrajectory):
    def plan(self, messages: list[dict[str, Any]]) -> Plan:
        while (
            self.turns
            and not all(a == b for a, b in zip(self.turns[-1].path_messages, messages, strict=False))
            or (self.turns and len(self.turns[-1].path_messages) > len(messages))
        ):
            del self.turns[-1]
        return super().plan(messages)


class DeepRollbackAccepted(SessionServer):
    def new_trajectory(self) -> LinearTrajectory:
        return UnboundedRollback()


class ExtendableTruncation(TreeTrajectory):
    def plan(self, messages: list[dict[str, Any]]) -> Plan:
        saved = [(n, n.finish_reason) for n in self.nodes]
        for node in self.nodes:
            node.finish_reason = "stop"
        try:
            return super().plan(messages)
        finally:
            for node, reason in saved:
                node.finish_reason = reason


class TruncationNotGuarded(SessionServer):
    def new_trajectory(self) -> TreeTrajectory:
        return ExtendableTruncation()


class CrosstalkCommits(SessionServer):
    """Keeps the session of the latest request server-wide: concurrent sessions get each other's records."""

    latest: Session | None = None

    def prepare(self, session: Session, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self.latest = session
        return super().prepare(session, body)

    def commit(self, session: Session, *rest: Any) -> None:
        super().commit(self.latest or session, *rest)


class RecordsFailedCalls(SessionServer):
    async def chat(self, request: Request) -> Response:
        answer = await super().chat(request)
        if 400 <= answer.status_code < 500 and "context too long" in bytes(answer.body).decode():
            session = self.sessions[request.path_params["sid"]]
            failed = {
                "id": "failed",
                "choices": [
                    {"message": {"content": ""}, "meta_info": {"output_token_logprobs": [], "completion_tokens": 0}}
                ],
            }
            asked = [{"role": "user", "content": "(refused)"}]
            turn = Turn(
                asked,
                {"role": "assistant", "content": ""},
                [],
                [],
                [],
                "stop",
                "failed",
                self.make_record({}, failed, 0.0),
            )
            session.trajectory.turns.append(turn)  # type: ignore[union-attr]
        return answer


class AccumulatedDropsLast(SessionServer):
    def session_metadata(self, session: Session) -> dict[str, Any]:
        metadata = super().session_metadata(session)
        metadata["accumulated_token_ids"] = metadata["accumulated_token_ids"][:-1]
        return metadata


class ToolCallIdsRewritten(SessionServer):
    def backend_request(self, body: dict[str, Any], input_ids: list[int]) -> dict[str, Any]:
        sent = super().backend_request(body, input_ids)
        sent["messages"] = [{**m, "tool_call_id": "call_0"} if m.get("role") == "tool" else m for m in sent["messages"]]
        return sent
