"""Pure judgements of OpenEnv frames: each returns what is wrong (None: nothing), or clause decisions.

They read a recorded `Reply` and need no socket; `judge_observation` and
`judge_error_code` only record what the pure judges decide.
"""

from __future__ import annotations

import json
import math
from typing import Any

from checks.core import Report, Transcript, summarize, truncate
from checks.decision import Decision, record
from checks.openenv.options import OpenEnvOptions
from checks.openenv.schemas import schema_errors
from checks.openenv.session import CLOSING_CODES, ERROR_CODES, Reply

ENVELOPE_KEYS = {"observation", "done", "reward"}


def envelope_problem(reply: Reply) -> str | None:
    """What keeps `reply` from being an OpenEnv observation frame."""
    if reply.kind != "observation":
        return f"not an observation frame: {reply.describe()}"
    data = reply.data
    if not isinstance(data, dict):
        return f"data is {type(data).__name__}, not an object"
    if not isinstance(data.get("observation"), dict):
        return f"data.observation is {type(data.get('observation')).__name__}, not an object"
    if not isinstance(data.get("done"), bool):
        return f"data.done is {truncate(repr(data.get('done')), 40)}, not a JSON boolean"
    if "reward" not in data:
        return "data has no reward key"
    extra = set(data) - ENVELOPE_KEYS - {"metadata"}
    if extra:
        return f"data has unexpected keys {sorted(extra)[:5]}"
    return None


def reward_problem(reward: Any, on_reset: bool, options: OpenEnvOptions) -> str | None:
    if reward is None:
        return None if on_reset or options.unscored_steps else "step reward is null"
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        return f"reward {truncate(repr(reward), 40)} is not a JSON number"
    if not math.isfinite(reward):
        return f"reward {reward} is not finite"
    return None


def range_problem(reward: Any, options: OpenEnvOptions) -> str | None:
    low, high = options.reward_range
    if isinstance(reward, (int, float)) and not isinstance(reward, bool) and not low <= reward <= high:
        return f"reward {reward} outside [{low}, {high}]"
    return None


def observation_schema_problem(reply: Reply, schema: dict[str, Any] | None) -> str | None:
    data = reply.data
    if schema is None or not isinstance(data, dict) or not isinstance(data.get("observation"), dict):
        return None
    merged = {**data["observation"], "done": data.get("done"), "reward": data.get("reward")}
    errors = schema_errors(merged, schema.get("observation"), schema.get("observation"))
    return "; ".join(errors[:3]) if errors else None


def error_problem(reply: Reply, code: str, needs_errors_list: bool = False) -> str | None:
    """What keeps `reply` from being an error frame with `code` (and a list of errors, if asked)."""
    if reply.kind != "error" or not isinstance(reply.data, dict):
        return f"not an error frame: {reply.describe()}"
    if reply.data.get("code") != code:
        return f"code {truncate(repr(reply.data.get('code')), 60)}, not {code}"
    if not isinstance(reply.data.get("message"), str):
        return "data.message is not a string"
    if needs_errors_list and not isinstance(reply.data.get("errors"), list):
        return "data.errors is not a list"
    return None


def code_problem(reply: Reply) -> str | None:
    """For an error frame: a code outside the seven, or a missing message."""
    if reply.kind != "error":
        return None
    data = reply.data if isinstance(reply.data, dict) else {}
    if data.get("code") not in ERROR_CODES:
        return f"error code {truncate(repr(data.get('code')), 60)} is not one of the seven"
    if not isinstance(data.get("message"), str):
        return "error frame has no string message"
    return None


def state_problem(reply: Reply) -> str | None:
    if reply.kind != "state" or not isinstance(reply.data, dict):
        return f"not a state frame: {reply.describe()}"
    count = reply.data.get("step_count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return f"step_count is {truncate(repr(count), 40)}, not an integer of at least 0"
    return None


def unprompted_problem(reply: Reply) -> str | None:
    """For a frame read when none was asked for: what came, unless nothing did or it was a closing error."""
    if reply.failure is not None or reply.code in CLOSING_CODES:
        return None
    return f"unasked: {reply.describe()}"


def step_count(reply: Reply) -> int | None:
    return None if state_problem(reply) else reply.data["step_count"]


def reward_of(reply: Reply) -> Any:
    return reply.data.get("reward") if isinstance(reply.data, dict) else None


def is_done(reply: Reply) -> bool:
    return reply.kind == "observation" and isinstance(reply.data, dict) and reply.data.get("done") is True


def signature(reply: Reply) -> str:
    """A frame, canonically, for comparing runs."""
    if reply.failure is not None:
        return f"<{reply.failure}>"
    if reply.is_json:
        try:
            return json.dumps(reply.message, sort_keys=True)
        except (ValueError, RecursionError):  # decodable at the socket, too deep to encode here
            pass
    return repr(reply.raw)


def observation_decisions(
    reply: Reply, schema: dict[str, Any] | None, options: OpenEnvOptions, on_reset: bool
) -> list[Decision]:
    """The envelope, reward and observation-schema clauses on one reply to reset or step.

    A reply that is no observation frame decides only the envelope: the rest assumes one."""
    what = "reset" if on_reset else "step"
    problem = envelope_problem(reply)
    decisions = [
        Decision(
            "openenv.ws.envelope",
            problem is None,
            expected=f"an observation frame answering {what}",
            actual=problem or summarize(reply.message, 200),
        )
    ]
    if problem is not None:
        return decisions
    reward = reward_of(reply)
    decisions.append(
        Decision(
            "openenv.ws.reward",
            reward_problem(reward, on_reset, options) is None,
            expected="a finite numeric reward" + (" or null" if on_reset else ""),
            actual=reward_problem(reward, on_reset, options) or f"reward {reward!r} on {what}",
        )
    )
    if not on_reset:
        decisions.append(
            Decision(
                "openenv.ws.reward-range",
                range_problem(reward, options) is None,
                expected=f"reward within {list(options.reward_range)}",
                actual=range_problem(reward, options) or f"reward {reward!r}",
            )
        )
    if schema is not None:
        problem = observation_schema_problem(reply, schema)
        decisions.append(
            Decision(
                "openenv.schema.observation-valid",
                problem is None,
                expected="the observation validates against /schema.observation",
                actual=problem or "validates",
            )
        )
    return decisions


def error_code_decision(reply: Reply) -> Decision:
    """openenv.errors.codes on a reply that should be an error frame."""
    return Decision(
        "openenv.errors.codes",
        code_problem(reply) is None,
        expected="a known error code and a message",
        actual=code_problem(reply) or reply.describe(),
    )


def judge_observation(
    report: Report,
    reply: Reply,
    schema: dict[str, Any] | None,
    options: OpenEnvOptions,
    evidence: Transcript,
    on_reset: bool,
) -> bool:
    """Record `observation_decisions`; whether the reply was an observation frame at all."""
    decisions = observation_decisions(reply, schema, options, on_reset)
    record(report, decisions, evidence)
    return bool(decisions[0].held)


def judge_error_code(report: Report, reply: Reply, evidence: Transcript) -> None:
    record(report, error_code_decision(reply), evidence)
