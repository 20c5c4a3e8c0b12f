"""openenv and rlmesh parity: two instances of one env server agree; one bit in one lane does not."""

import asyncio

from checks.parity.script import Status, run_parity
from checks.parity.scripts import get_script
from tests.checks.openenv.envs import QuizEnv, QuizObservation, quiz_app
from tests.checks.openenv.serving import serve_in_thread
from tests.checks.rlmesh.conftest import serve_env  # noqa: F401  (fixture)


def parity(kind, url_a, url_b, **options):
    script = get_script(kind)
    return asyncio.run(run_parity(script, script.options_model(**options), url_a, url_b))


class NegativeZeroQuizEnv(QuizEnv):
    """The quiz env scoring a wrong answer -0.0 instead of 0.0."""

    def step(self, action, timeout_s=None, **kwargs) -> QuizObservation:
        observation = super().step(action, timeout_s, **kwargs)
        if observation.reward == 0.0:
            observation.reward = -0.0
        return observation


def test_two_instances_of_one_openenv_server_are_identical():
    with serve_in_thread(quiz_app()) as a, serve_in_thread(quiz_app()) as b:
        result = parity("openenv", a, b, lanes=3, reset={"task_id": "t1"}, actions=[{"answer": "nope"}], timeout=5)
    assert result.status is Status.IDENTICAL, result.reason
    assert result.left.summary == "3 lanes, 3 steps in all"


def test_a_negative_zero_reward_diverges():
    with serve_in_thread(quiz_app()) as a, serve_in_thread(quiz_app(NegativeZeroQuizEnv)) as b:
        result = parity("openenv", a, b, lanes=2, reset={"task_id": "t1"}, actions=[{"answer": "nope"}], timeout=5)
    assert result.status is Status.DIVERGENT
    assert result.first.path == "lanes[0].steps[0].data.reward"
    assert (result.first.left.bytes_hex, result.first.right.bytes_hex) == ("0000000000000000", "8000000000000000")
    assert result.comparison.count == 2  # once per lane


def test_two_instances_of_one_rlmesh_server_are_identical(serve_env):  # noqa: F811
    a, b = serve_env("lanes", step_delay=0), serve_env("lanes", step_delay=0)
    result = parity("rlmesh", a.address, b.address, steps=8, timeout=5)
    assert result.status is Status.IDENTICAL, result.reason


def test_a_reward_bit_in_one_lane_only_is_named_by_its_lane(serve_env):  # noqa: F811
    a, b = serve_env("lanes", step_delay=0), serve_env("lanes-last-differs", step_delay=0)
    result = parity("rlmesh", a.address, b.address, steps=8, timeout=5)
    assert result.status is Status.DIVERGENT
    assert result.first.path == "lanes[2].steps[0].reward"
    assert result.first.left.bytes_hex == "3ff0000000000000" and result.first.right.bytes_hex == "3ff0000000000001"
    assert all(d.path.startswith("lanes[2].") for d in result.comparison.divergences)
