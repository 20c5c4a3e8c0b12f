"""Declared projections: the fields two conforming deployments may legitimately disagree on.

A projection names paths by pattern (`records[*].timestamp`, `**.tool_calls[*].id`:
`*` is one key or index, `**` any number of them) and says what to do there:

- `timestamp`: the value must be a finite number (else that is a divergence),
  then it is replaced by a placeholder;
- `identity`: ids a deployment makes up (deployment ids, tool-call ids, response
  ids). Each distinct value becomes `<namespace#n>`, numbered in order of first
  appearance, so the ids still have to be used consistently: a tool result that
  cites another call than the one made shows up as a divergence;
- `drop`: the key is left out;
- `optional`: compared when both sides have it, ignored when only one does
  (what one version adds, such as a v2 tree beside a v1 trajectory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from checks.parity.values import Atom, Digest, Map, Node, Seq, is_finite_number, shown

Segment = str | int
PATTERN_PART = re.compile(r"\[([^\]]*)\]|\.?([^.\[]+)")


@dataclass(frozen=True)
class Projection:
    pattern: str
    action: Literal["timestamp", "identity", "drop", "optional"]
    namespace: str = ""

    def parts(self) -> tuple[str, ...]:
        return tuple(m.group(1) if m.group(1) is not None else m.group(2) for m in PATTERN_PART.finditer(self.pattern))


@dataclass(frozen=True)
class Problem:
    """A projected field that broke its declaration (a timestamp that is not a finite number)."""

    path: tuple[Segment, ...]
    reason: str


def matches(parts: tuple[str, ...], path: tuple[Segment, ...]) -> bool:
    if not parts:
        return not path
    head, rest = parts[0], parts[1:]
    if head == "**":
        return any(matches(rest, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    segment = path[0]
    if head != "*" and head != str(segment):
        return False
    return matches(rest, path[1:])


class Projector:
    """Applies projections to one recording; identity numbering is per recording."""

    def __init__(self, projections: tuple[Projection, ...]) -> None:
        self.rules = [(projection, projection.parts()) for projection in projections]
        self.identities: dict[str, dict[Node, int]] = {}
        self.problems: list[Problem] = []

    def rule_for(self, path: tuple[Segment, ...]) -> Projection | None:
        for projection, parts in self.rules:
            if matches(parts, path):
                return projection
        return None

    def optional(self, path: tuple[Segment, ...]) -> bool:
        rule = self.rule_for(path)
        return rule is not None and rule.action == "optional"

    def apply(self, node: Node, path: tuple[Segment, ...] = ()) -> Node | None:
        rule = self.rule_for(path) if path else None
        if rule is not None and rule.action != "optional":
            return self._project(rule, node, path)
        if isinstance(node, Map):
            items = []
            for key, value in node.items:
                projected = self.apply(value, (*path, key))
                if projected is not None:
                    items.append((key, projected))
            return Map(tuple(items))
        if isinstance(node, Seq):
            kept = (self.apply(item, (*path, index)) for index, item in enumerate(node.items))
            return Seq(tuple(item for item in kept if item is not None))
        return node

    def _project(self, rule: Projection, node: Node, path: tuple[Segment, ...]) -> Node | None:
        if rule.action == "drop":
            return None
        if rule.action == "timestamp":
            if isinstance(node, Atom) and node.kind == "null":
                return node
            if not is_finite_number(node):
                leaf = node if isinstance(node, (Atom, Digest)) else None
                self.problems.append(Problem(path, f"a timestamp must be a finite number, got {shown(leaf)}"))
                return node
            return Atom("projected", b"timestamp")
        if isinstance(node, Atom) and node.kind == "null":
            return node
        numbers = self.identities.setdefault(rule.namespace or rule.pattern, {})
        number = numbers.setdefault(node, len(numbers))
        return Atom("projected", f"{rule.namespace or 'id'}#{number}".encode())


def project(node: Node, projections: tuple[Projection, ...]) -> tuple[Node, list[Problem]]:
    projector = Projector(projections)
    projected = projector.apply(node)
    return (projected if projected is not None else Map(())), projector.problems
