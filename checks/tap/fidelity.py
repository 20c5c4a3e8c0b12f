"""Token fidelity across a conversation's turns, as a tap sees them: pure judges of recorded exchanges.

Where a server returns token ids (vLLM's `prompt_token_ids` and `choices[i].token_ids`, SGLang's
and miles' `meta_info.output_token_logprobs` pairs, or a request's own `input_ids`), each turn's
prompt ids must extend the previous turn's prompt plus completion ids, and logprobs come one per
completion token. A router between trainer and engine that drops those fields breaks RL training
silently; the clauses name what was dropped. Each clause is judged only where the traffic
establishes what it relies on: a request that asked, or two linked turns that both carry ids.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from checks.decision import Decision, missed, passed

EXTEND = "tap.openai.token-ids-extend"
IDS_KEPT = "tap.openai.token-ids-kept"
LOGPROBS_KEPT = "tap.openai.logprobs-kept"
PER_TOKEN = "tap.openai.logprobs-per-token"
CLAUSES = (EXTEND, IDS_KEPT, LOGPROBS_KEPT, PER_TOKEN)
REMEMBERED_TURNS = 1024


@dataclass(frozen=True)
class TurnTokens:
    """What one exchange says of its tokens (None: the reply did not say)."""

    prompt: list[int] | None
    completion: list[int] | None
    logprobs: int | None  # how many completion logprobs choice 0 carries
    usage_completion: int | None


def _ints(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(type(v) is int for v in value):
        return list(value)
    return None


def _choice(body: Any) -> dict[str, Any]:
    choices = body.get("choices") if isinstance(body, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    return first if isinstance(first, dict) else {}


def read_tokens(request: dict[str, Any], body: Any) -> TurnTokens:
    choice = _choice(body)
    meta = choice.get("meta_info") if isinstance(choice.get("meta_info"), dict) else {}
    found = meta.get("output_token_logprobs") if isinstance(meta, dict) else None
    pairs: list[Any] = found if isinstance(found, list) else []
    paired = isinstance(found, list) and all(isinstance(p, list | tuple) and len(p) >= 2 for p in pairs)
    prompt = _ints(body.get("prompt_token_ids") if isinstance(body, dict) else None)
    prompt = prompt if prompt is not None else _ints(choice.get("prompt_token_ids"))
    prompt = prompt if prompt is not None else _ints(request.get("input_ids"))
    completion = _ints(choice.get("token_ids"))
    if completion is None and paired:
        completion = _ints([p[1] for p in pairs])
    logprobs_field = choice.get("logprobs")
    content = logprobs_field.get("content") if isinstance(logprobs_field, dict) else None
    count = len(content) if isinstance(content, list) else (len(pairs) if paired else None)
    usage = body.get("usage") if isinstance(body, dict) else None
    used = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return TurnTokens(prompt, completion, count, used if type(used) is int else None)


def asked_for_ids(request: dict[str, Any]) -> bool:
    return request.get("return_token_ids") is True or request.get("return_meta_info") is True


def kept(request: dict[str, Any], tokens: TurnTokens) -> list[Decision]:
    """A request that asked for token ids or logprobs got them."""
    decisions = []
    if asked_for_ids(request):
        fields = (("prompt", tokens.prompt), ("completion", tokens.completion))
        missing = [name for name, value in fields if value is None]
        expected = "prompt and completion token ids (prompt_token_ids and token_ids, or meta_info)"
        if missing:
            decisions.append(missed(IDS_KEPT, expected=expected, actual=f"no {' and no '.join(missing)} token ids"))
        else:
            decisions.append(
                passed(IDS_KEPT, actual=f"{len(tokens.prompt or [])} + {len(tokens.completion or [])} ids")
            )
    if request.get("logprobs") is True:
        if tokens.logprobs is None:
            decisions.append(missed(LOGPROBS_KEPT, expected="choice 0's logprobs or meta_info pairs", actual="none"))
        else:
            decisions.append(passed(LOGPROBS_KEPT, actual=f"{tokens.logprobs} logprobs"))
    return decisions


def per_token(tokens: TurnTokens) -> list[Decision]:
    """One logprob per completion token, where both are there (and usage agrees when it counts them)."""
    counts = {"logprobs": tokens.logprobs}
    if tokens.completion is not None:
        counts["completion token ids"] = len(tokens.completion)
    if tokens.usage_completion is not None:
        counts["usage.completion_tokens"] = tokens.usage_completion
    if tokens.logprobs is None or len(counts) < 2:
        return []
    shown = ", ".join(f"{name} {count}" for name, count in counts.items())
    if len(set(counts.values())) == 1:
        return [passed(PER_TOKEN, actual=shown)]
    return [missed(PER_TOKEN, expected="one logprob per completion token", actual=shown)]


def _key(messages: list[Any]) -> str:
    shown = [(m.get("role"), m.get("content")) if isinstance(m, dict) else m for m in messages]
    return json.dumps(shown, sort_keys=True, default=str)


class Conversations:
    """Recent turns by their messages plus the reply, so the next turn finds the one it continues."""

    def __init__(self) -> None:
        self._turns: OrderedDict[str, TurnTokens] = OrderedDict()

    def previous(self, messages: list[Any]) -> TurnTokens | None:
        for end in range(len(messages) - 1, 0, -1):
            found = self._turns.get(_key(messages[:end]))
            if found is not None:
                return found
        return None

    def remember(self, messages: list[Any], reply_message: Any, tokens: TurnTokens) -> None:
        if not isinstance(reply_message, dict):
            return
        self._turns[_key([*messages, reply_message])] = tokens
        while len(self._turns) > REMEMBERED_TURNS:
            self._turns.popitem(last=False)


def extends(previous: TurnTokens, tokens: TurnTokens) -> list[Decision]:
    """This turn's prompt ids begin with the previous turn's prompt plus completion ids."""
    if previous.prompt is None or previous.completion is None or tokens.prompt is None:
        return []
    before = previous.prompt + previous.completion
    if tokens.prompt[: len(before)] == before:
        return [passed(EXTEND, actual=f"{len(tokens.prompt)} prompt ids extend the previous {len(before)}")]
    at = next((i for i, (a, b) in enumerate(zip(before, tokens.prompt, strict=False)) if a != b), None)
    size = len(tokens.prompt)
    where = f"differs at position {at}" if at is not None else f"is {size} ids, shorter than {len(before)}"
    return [
        missed(
            EXTEND,
            expected=f"the prompt's first {len(before)} ids equal the previous turn's prompt and completion ids",
            actual=f"the prompt {where}",
        )
    ]
