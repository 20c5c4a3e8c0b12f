"""OpenEnv's pure judges decide from a recorded frame: no socket, no report."""

from __future__ import annotations

from checks.openenv.judging import error_code_decision, observation_decisions
from checks.openenv.options import OpenEnvOptions
from checks.openenv.session import Reply
from tests.checks.decisions import held

SCHEMA = {"observation": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def frame(message) -> Reply:
    return Reply(message=message, is_json=True)


def observation(reward, **observed) -> Reply:
    return frame({"type": "observation", "data": {"observation": observed, "done": False, "reward": reward}})


def test_a_step_observation_decides_envelope_reward_range_and_schema():
    decisions = observation_decisions(observation(0.5, text="hi"), SCHEMA, OpenEnvOptions(), on_reset=False)
    assert [(d.clause_id, held(d)) for d in decisions] == [
        ("openenv.ws.envelope", True),
        ("openenv.ws.reward", True),
        ("openenv.ws.reward-number", True),
        ("openenv.ws.reward-range", True),
        ("openenv.schema.observation-valid", True),
    ]


def test_a_reset_observation_has_no_range_and_may_be_unscored():
    decisions = observation_decisions(observation(None, text="hi"), None, OpenEnvOptions(), on_reset=True)
    assert [(d.clause_id, held(d)) for d in decisions] == [
        ("openenv.ws.envelope", True),
        ("openenv.ws.reward", True),
        ("openenv.ws.reward-number", True),
    ]


def test_a_frame_that_is_no_observation_decides_only_the_envelope():
    decisions = observation_decisions(frame({"type": "state", "data": {}}), SCHEMA, OpenEnvOptions(), on_reset=False)
    assert [(d.clause_id, held(d)) for d in decisions] == [("openenv.ws.envelope", False)]
    assert decisions[0].actual.startswith("not an observation frame")


def test_an_observation_off_its_schema_names_the_path():
    decisions = observation_decisions(observation(1.0, text=3), SCHEMA, OpenEnvOptions(), on_reset=False)
    schema_decision = decisions[-1]
    assert held(schema_decision) is False and "text" in schema_decision.actual


def test_an_error_code_outside_the_seven_is_named():
    unknown = frame({"type": "error", "data": {"code": "NOPE", "message": "m"}})
    assert held(error_code_decision(unknown)) is False
    known = frame({"type": "error", "data": {"code": "VALIDATION_ERROR", "message": "m"}})
    assert held(error_code_decision(known))
