"""Pure judgements of OpenEnv frames: each returns what is wrong (None: nothing), or clause decisions.

They read a recorded `Reply` and need no socket and no report: the phases record what they decide.
"""

from __future__ import annotations

import json
import math
from typing import Any

from checks.core import summarize, truncate
from checks.decision import Decision, check, info
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


def http_metadata_problem(body: Any) -> str | None:
    """What keeps an OpenEnv 0.10 HTTP /reset or /step body from carrying its top-level metadata key:
    always present, null when the observation's metadata is empty, else the same object."""
    if not isinstance(body, dict) or not isinstance(body.get("observation"), dict):
        return None  # judged by openenv.http.reset / openenv.http.step
    if "metadata" not in body:
        return "no top-level metadata key"
    top, nested = body["metadata"], body["observation"].get("metadata")
    if top is None:
        return None if not nested else f"metadata is null while observation.metadata is {summarize(nested, 80)}"
    if not isinstance(top, dict):
        return f"metadata is {summarize(top, 60)}, neither null nor an object"
    if top != (nested or {}):
        return f"metadata {summarize(top, 80)} differs from observation.metadata {summarize(nested, 80)}"
    return None


def reward_problem(reward: Any) -> str | None:
    """A reward that is neither null, a boolean (judged by `boolean_reward_problem`) nor a finite number."""
    if reward is None or isinstance(reward, bool):
        return None  # StepResponse.reward is optional; a bool is what the observation type allows
    if not isinstance(reward, (int, float)):
        return f"reward {truncate(repr(reward), 40)} is not a JSON number"
    if not math.isfinite(reward):
        return f"reward {reward} is not finite"
    return None


def range_problem(reward: Any, reward_range: tuple[float, float]) -> str | None:
    low, high = reward_range
    if isinstance(reward, (int, float)) and not isinstance(reward, bool) and not low <= reward <= high:
        return f"reward {reward} outside [{low}, {high}]"
    return None


def boolean_reward_problem(reward: Any) -> str | None:
    if isinstance(reward, bool):
        return f"reward {json.dumps(reward)} is a JSON boolean (HTTP /step turns it into {float(reward)})"
    return None


def observation_model(schema: dict[str, Any], on_reset: bool) -> tuple[str, Any]:
    """Which /schema member an observation answers to: reset frames follow reset_observation when published."""
    key = "reset_observation" if on_reset and isinstance(schema.get("reset_observation"), dict) else "observation"
    return key, schema.get(key)


def observation_schema_problem(reply: Reply, schema: dict[str, Any] | None, on_reset: bool = False) -> str | None:
    data = reply.data
    if schema is None or not isinstance(data, dict) or not isinstance(data.get("observation"), dict):
        return None
    merged = {**data["observation"], "done": data.get("done"), "reward": data.get("reward")}
    _, model = observation_model(schema, on_reset)
    errors = schema_errors(merged, model, model)
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


# What observation_decisions decides on a reply to reset or step, in the order the phases list them.
OBSERVATION_CLAUSES = (
    "openenv.ws.envelope",
    "openenv.ws.reward",
    "openenv.ws.reward-range",
    "openenv.ws.reward-number",
    "openenv.ws.metadata-mirror",
    "openenv.schema.observation-valid",
)


def observation_decisions(
    reply: Reply, schema: dict[str, Any] | None, options: OpenEnvOptions, on_reset: bool
) -> list[Decision]:
    """The envelope, reward and observation-schema clauses on one reply to reset or step.

    A reply that is no observation frame decides only the envelope: the rest assumes one."""
    what = "reset" if on_reset else "step"
    problem = envelope_problem(reply)
    decisions = [
        check(
            problem is None,
            "openenv.ws.envelope",
            expected=f"an observation frame answering {what}",
            actual=problem or summarize(reply.message, 200),
        )
    ]
    if problem is not None:
        return decisions
    decisions += reward_decisions(reply, options, on_reset)
    top, nested = reply.data.get("metadata"), reply.data["observation"].get("metadata")
    if top is not None and nested is not None:  # 0.10 mirrors a non-empty metadata; 0.3 sends none
        decisions.append(
            check(
                top == nested,
                "openenv.ws.metadata-mirror",
                expected="data.metadata equal to data.observation.metadata",
                actual=f"{summarize(top, 80)} vs {summarize(nested, 80)}" if top != nested else "equal",
            )
        )
    if schema is not None:
        problem = observation_schema_problem(reply, schema, on_reset)
        key, _ = observation_model(schema, on_reset)
        decisions.append(
            check(
                problem is None,
                "openenv.schema.observation-valid",
                expected=f"the observation validates against /schema.{key}",
                actual=problem or "validates",
            )
        )
    return decisions


def reward_decisions(reply: Reply, options: OpenEnvOptions, on_reset: bool) -> list[Decision]:
    """The reward clauses on one observation frame (none on any other frame)."""
    if reply.kind != "observation" or not isinstance(reply.data, dict):
        return []
    what = "reset" if on_reset else "step"
    reward = reward_of(reply)
    decisions = [
        check(
            reward_problem(reward) is None,
            "openenv.ws.reward",
            expected="a finite numeric reward or null",
            actual=reward_problem(reward) or f"reward {reward!r} on {what}",
        ),
        check(
            boolean_reward_problem(reward) is None,
            "openenv.ws.reward-number",
            expected="a reward sent as a JSON number or null, not a boolean",
            actual=boolean_reward_problem(reward) or f"reward {reward!r} on {what}",
        ),
    ]
    declared = options.reward_range
    if not on_reset and declared is not None:
        decisions.append(
            check(
                range_problem(reward, declared) is None,
                "openenv.ws.reward-range",
                expected=f"reward within {list(declared)}",
                actual=range_problem(reward, declared) or f"reward {reward!r}",
            )
        )
    return decisions


def rewards_seen(steps: list[Reply], options: OpenEnvOptions) -> list[Decision]:
    """openenv.ws.reward-range when the target declares no range: `info` with the range the step rewards
    spanned (with a declared range each reward is judged by `reward_decisions`)."""
    if options.reward_range is not None:
        return []
    numbers = [r for r in map(reward_of, steps) if isinstance(r, (int, float)) and not isinstance(r, bool)]
    seen = "no numeric step reward"
    if numbers:
        seen = f"step rewards from {min(numbers)} to {max(numbers)} over {len(numbers)} steps"
    return [
        info(
            "openenv.ws.reward-range",
            actual=f"not judged: the target declares no reward_range and nothing on the wire declares one; {seen}",
        )
    ]


def error_code_decision(reply: Reply) -> Decision:
    """openenv.errors.codes on a reply that should be an error frame."""
    return check(
        code_problem(reply) is None,
        "openenv.errors.codes",
        expected="a known error code and a message",
        actual=code_problem(reply) or reply.describe(),
    )
