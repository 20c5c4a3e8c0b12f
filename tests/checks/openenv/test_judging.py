"""OpenEnv's pure judges decide from a recorded frame: no socket, no report."""

from __future__ import annotations

from checks.core import Transcript
from checks.openenv import judging_episodes, judging_sessions
from checks.openenv.episodes import EpisodeRun
from checks.openenv.judging import error_code_decision, observation_decisions, rewards_seen
from checks.openenv.judging_timing import reply_in_time
from checks.openenv.options import OpenEnvOptions
from checks.openenv.session import Reply, Wait
from tests.checks.decisions import held

SCHEMA = {"observation": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def frame(message) -> Reply:
    return Reply(message=message, is_json=True)


def observation(reward, **observed) -> Reply:
    return frame({"type": "observation", "data": {"observation": observed, "done": False, "reward": reward}})


def test_a_step_observation_decides_envelope_reward_range_and_schema():
    declared = OpenEnvOptions(reward_range=(0.0, 1.0))
    decisions = observation_decisions(observation(0.5, text="hi"), SCHEMA, declared, on_reset=False)
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


def test_without_a_declared_range_no_reward_is_out_of_range_and_the_range_seen_is_recorded():
    steps = [observation(-1.0, text="a"), observation(3, text="b"), observation(None, text="c")]
    undeclared = OpenEnvOptions()
    assert all(
        d.clause_id != "openenv.ws.reward-range"
        for s in steps
        for d in observation_decisions(s, None, undeclared, False)
    )
    (seen,) = rewards_seen(steps, undeclared)
    assert seen.outcome == "info" and "from -1.0 to 3 over 2 steps" in seen.actual
    declared = OpenEnvOptions(reward_range=(0.0, 1.0))
    assert rewards_seen(steps, declared) == []
    ranged = [d for d in observation_decisions(steps[0], None, declared, False) if d.clause_id.endswith("range")]
    assert [held(d) for d in ranged] == [False]


def run(first: Reply, *steps: Reply) -> EpisodeRun:
    return EpisodeRun(Transcript(1, "group", "test"), first, list(steps))


def test_episodes_that_differ_are_not_judged_without_a_seed_or_a_declaration():
    one, other = run(observation(None, side="x"), observation(1.0, side="x")), run(observation(None, side="o"))
    unseeded = OpenEnvOptions()
    why = judging_episodes.why_unrepeatable(unseeded, None)
    decision = judging_episodes.sequential(one, other, why)
    assert decision.outcome == "info" and decision.actual.startswith("not judged: the reset data sends no seed")
    declared = OpenEnvOptions(deterministic=True)
    assert judging_episodes.sequential(one, other, judging_episodes.why_unrepeatable(declared, None)).missed


def test_a_seed_is_applied_only_when_fresh_sessions_start_alike():
    seeded = OpenEnvOptions(reset={"seed": 3})
    alike = [observation(None, side="x"), observation(None, side="x")]
    assert judging_episodes.seed_shown(alike)
    assert judging_episodes.why_unrepeatable(seeded, True) is None
    apart = [observation(None, side="x"), observation(None, side="o")]
    assert not judging_episodes.seed_shown(apart)
    assert "does not apply it" in (judging_episodes.why_unrepeatable(seeded, False) or "")


def test_identical_runs_pass_only_when_the_actions_reached_the_env():
    still = run(observation(None, board="empty"), observation(0.0, board="empty"))
    decision = judging_episodes.sequential(still, still, None)
    assert decision.outcome == "info" and "the actions did not reach the env" in decision.actual
    moved = run(observation(None, board="empty"), observation(0.0, board="x"))
    assert held(judging_episodes.sequential(moved, moved, None))


def test_isolation_compares_episode_ids_and_step_counts_even_when_frames_are_not_judged():
    def with_state(episode_id):
        played = run(observation(None, side="x"), observation(1.0, side="y"))
        played.state = frame({"type": "state", "data": {"episode_id": episode_id, "step_count": 1}})
        return played

    why = "the reset data sends no seed"
    assert judging_episodes.isolation([with_state("a")], [with_state("b")], why).missed
    agreeing = judging_episodes.isolation([with_state("a")], [with_state("a")], why)
    assert agreeing.outcome == "info" and "frames not compared" in agreeing.actual
    assert judging_episodes.isolation([with_state("a")], [with_state("b")], why, ["a"]).missed


def test_isolation_without_repeatable_frames_compares_only_what_the_run_fixes():
    # OpenEnv's openspiel_env makes its own episode ids and, unseeded, ends episodes after a random number
    # of steps: the group failed isolation on ids and counts no session shared.
    def played(episode_id, steps):
        run_ = run(observation(None, side="x"), *[observation(0.0, side="y") for _ in range(steps)])
        run_.state = frame({"type": "state", "data": {"episode_id": episode_id, "step_count": steps}})
        return run_

    why = "the reset data sends no seed"
    own_ids = judging_episodes.isolation([played("uuid-1", 2)], [played("uuid-2", 2)], why, ["sent-1"])
    assert own_ids.outcome == "info" and "frames not compared" in own_ids.actual, own_ids.actual
    lengths = judging_episodes.isolation([played("sent-1", 2)], [played("sent-1", 3)], why, ["sent-1"])
    assert lengths.outcome == "info", lengths.actual
    leaked = played("sent-1", 2)
    leaked.state = frame({"type": "state", "data": {"episode_id": "sent-1", "step_count": 4}})
    assert judging_episodes.isolation([played("sent-1", 2)], [leaked], why, ["sent-1"]).missed


def test_reply_in_time_is_decided_from_the_logged_wait():
    transcript = Transcript(1, "session", "test")
    assert held(reply_in_time(Wait("reset", 3.0, True, transcript)))
    late = reply_in_time(Wait("step", 3.0, False, transcript))
    assert late.missed and "within 3s" in late.expected


def test_the_reply_order_and_close_judges_the_tap_shares():
    observation = frame({"type": "observation", "data": {"observation": {}, "reward": None, "done": False}})
    state = frame({"type": "state", "data": {"step_count": 0}})
    failure = frame({"type": "error", "data": {"code": "VALIDATION_ERROR", "message": "m"}})
    assert held(judging_sessions.reply_order("step", observation)) is True
    assert held(judging_sessions.reply_order("step", failure)) is True  # an error answers anything
    assert held(judging_sessions.reply_order("state", observation)) is False
    assert judging_sessions.reply_order("close", state) is None
    assert held(judging_sessions.frame_after_close(state)) is False
    assert held(judging_sessions.answered("reset")) is True
