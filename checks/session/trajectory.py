"""Session state of the reference server: v1 keeps one linear trajectory, v2 an append-only tree.

A `Turn` is one recorded generation: the request's messages, the assistant
reply, the prompt and completion token ids and the record. Both modes plan a
request under the session lock (find where it attaches, apply a v1 rollback),
let the backend run unlocked, then commit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from checks.errors import CheckError

MAX_ASSISTANT_ROLLBACK_STEPS = 1
MAX_NODES = 1024


class SessionError(CheckError):
    """A refusal in miles' shape: the HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Turn:
    messages: list[dict[str, Any]]
    reply: dict[str, Any]
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    finish_reason: str
    response_id: str
    record: dict[str, Any]
    parent: int | None = None
    seq: int = 0
    committed_at: float = field(default_factory=time.time)

    @property
    def path_messages(self) -> list[dict[str, Any]]:
        return [*self.messages, self.reply]

    @property
    def token_ids(self) -> list[int]:
        return self.prompt_ids + self.completion_ids


@dataclass
class Plan:
    """Where a request attaches: the turn it extends (None for a first turn) and a staleness token."""

    base: Turn | None
    generation: int


def _tool_call_key(call: Any) -> tuple[Any, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    return (function or {}).get("name"), (function or {}).get("arguments")


def same_message(left: dict[str, Any], right: dict[str, Any]) -> bool:
    """miles' strict matcher: role, content, reasoning_content and tool calls; None, "" and [] are equal."""
    for key in ("role", "content", "reasoning_content"):
        if (left.get(key) or None) != (right.get(key) or None):
            return False
    left_calls = [_tool_call_key(c) for c in left.get("tool_calls") or []]
    return left_calls == [_tool_call_key(c) for c in right.get("tool_calls") or []]


def is_prefix(path: list[dict[str, Any]], messages: list[dict[str, Any]]) -> bool:
    return len(path) <= len(messages) and all(same_message(a, b) for a, b in zip(path, messages, strict=False))


class LinearTrajectory:
    """v1: one list of turns; a retry of the latest turn replaces it, deeper divergence is refused."""

    tree = False

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.generation = 0

    def plan(self, messages: list[dict[str, Any]]) -> Plan:
        keep = len(self.turns)
        while keep and not is_prefix(self.turns[keep - 1].path_messages, messages):
            keep -= 1
        discard = len(self.turns) - keep
        if discard > MAX_ASSISTANT_ROLLBACK_STEPS:
            stored = len(self.turns[-1].path_messages)
            raise SessionError(
                400,
                f"rollback failed: discard_count={discard} exceeds max_assistant_rollback_steps="
                f"{MAX_ASSISTANT_ROLLBACK_STEPS} (stored has {stored} messages, request has {len(messages)} messages)",
            )
        if discard:
            del self.turns[keep:]
            self.generation += 1
        return Plan(self.turns[-1] if self.turns else None, self.generation)

    def commit(self, plan: Plan, turn: Turn) -> bool:
        """False when another commit or rollback happened meanwhile: answered, not recorded."""
        if plan.generation != self.generation or (self.turns[-1] if self.turns else None) is not plan.base:
            return False
        turn.seq = len(self.turns)
        self.turns.append(turn)
        self.generation += 1
        return True

    def active_path(self) -> list[Turn]:
        return list(self.turns)

    def sample_paths(self) -> list[list[Turn]]:
        return [self.turns] if self.turns else []

    def metadata(self) -> dict[str, Any]:
        return {}


class TreeTrajectory:
    """v2: every generation is a node; a request attaches at the deepest node whose path it extends."""

    tree = True

    def __init__(self) -> None:
        self.nodes: list[Turn] = []
        self.active: Turn | None = None

    def plan(self, messages: list[dict[str, Any]]) -> Plan:
        matches = [n for n in self.nodes if is_prefix(n.path_messages, messages)]
        base = max(matches, key=lambda n: (len(n.path_messages), n.seq), default=None)
        if base is not None and base.finish_reason == "length":
            raise SessionError(409, f"truncated generation cannot be extended: node {base.seq} ended by length")
        if len(self.nodes) >= MAX_NODES:
            raise SessionError(400, f"session tree is full: {MAX_NODES} nodes")
        return Plan(base, 0)

    def commit(self, plan: Plan, turn: Turn) -> bool:
        turn.seq = len(self.nodes)
        turn.parent = plan.base.seq if plan.base is not None else None
        self.nodes.append(turn)
        self.active = turn
        return True

    def path_to(self, node: Turn) -> list[Turn]:
        path = [node]
        while path[-1].parent is not None:
            path.append(self.nodes[path[-1].parent])
        return path[::-1]

    def active_path(self) -> list[Turn]:
        return self.path_to(self.active) if self.active is not None else []

    def leaves(self) -> list[Turn]:
        parents = {n.parent for n in self.nodes}
        return [n for n in self.nodes if n.seq not in parents]

    def sample_paths(self) -> list[list[Turn]]:
        """drop_retries: a leaf goes when its parent got a later child."""
        kept = []
        for leaf in self.leaves():
            siblings = [n for n in self.nodes if n.parent == leaf.parent and n.seq > leaf.seq]
            if not siblings:
                kept.append(self.path_to(leaf))
        return kept

    def metadata(self) -> dict[str, Any]:
        nodes = []
        for node in self.nodes:
            start = len(node.prompt_ids)
            nodes.append(
                {
                    "id": node.seq,
                    "parent": node.parent,
                    "seq": node.seq,
                    "truncated": node.finish_reason == "length",
                    "committed_at": node.committed_at,
                    "completion_span": [start, start + len(node.completion_ids)],
                    "num_tokens": len(node.token_ids),
                    "response_id": node.response_id,
                }
            )
        leaves = [{"node_id": n.seq, "path_node_ids": [p.seq for p in self.path_to(n)]} for n in self.leaves()]
        return {"tree": {"nodes": nodes, "leaves": leaves}}


Trajectory = LinearTrajectory | TreeTrajectory
