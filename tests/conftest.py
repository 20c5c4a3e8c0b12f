"""Markers set by where a test is, so a run can select with `-m "not realpeer and not slow"`.

Markers only select: a plain `pytest` still runs everything. `--serial only|skip` keeps or drops the
tests marked `serial` (those that must run alone); `scripts/test` runs the rest in parallel
(pytest-xdist, `--dist loadgroup`: the tests of a file sharing a module-scoped fixture stay on one
worker), then these in a second pytest without workers.
"""

from __future__ import annotations

import pytest

# Test files that drive a third-party implementation of a protocol, and which one.
REAL_PEER_FILES = {
    "tests/checks/rllink/test_rllib.py": "RLlib (RLCONFORM_RLLIB_PYTHON)",
    "tests/checks/rllink_client/test_rllib_client.py": "RLlib (RLCONFORM_RLLIB_PYTHON)",
    "tests/checks/rlmesh/test_real_peers.py": "the rlmesh package's server",
    "tests/checks/openenv/test_conforming.py": "openenv-core's server",
    "tests/checks/openenv/test_cli.py": "openenv-core's server",
    "tests/checks/openenv/test_zoo.py": "openenv-core's server",
    "tests/checks/tap/test_real_peers.py": "RLlib's and OpenEnv 0.10's own clients through the tap",
    "tests/checks/parity/test_env_scripts.py": "openenv-core's and the rlmesh package's servers",
    "tests/realpeers/transformers/test_transformers_serve.py": "transformers serve (RLCONFORM_TRANSFORMERS_PYTHON)",
    "tests/realpeers/transformers/test_tap_transformers.py": "transformers serve and the openai client, tapped",
    "tests/realpeers/litellm/test_litellm_proxy.py": "the LiteLLM proxy (RLCONFORM_LITELLM_PYTHON)",
    "tests/realpeers/vllm/test_vllm_server.py": "vLLM on CPU (RLCONFORM_VLLM_PYTHON)",
    "tests/realpeers/llamacpp/test_llamacpp_server.py": "llama-cpp-python's server (RLCONFORM_LLAMACPP_PYTHON)",
    "tests/app/test_deploy_realpeers.py": "openenv 0.10.0's, openenv-core 0.3.0's and the ORS servers",
}
# Fixtures that start the rlmesh package's server (tests/checks/rlmesh/conftest.py).
REAL_PEER_FIXTURES = {"serve_env", "cartpole", "lanes", "vector"}
# (test file, words in the test's name) for files that test a real peer alongside their own.
REAL_PEER_TESTS = {("tests/checks/openai/test_peers.py", "llmock")}

# Tests measured at over about ten seconds (`--durations=30`), by file and name: a name without
# parameters marks every case, one with them (`name[case]`) only that case.
SLOW_TESTS = {
    (
        "tests/realpeers/transformers/test_tap_transformers.py",
        "test_the_official_client_through_the_tap_gets_the_recorded_verdicts",
    ),
    ("tests/checks/plugrl/test_hostile.py", "test_cli_until_stop_ends_well_within_its_deadlines"),
    (
        "tests/checks/openenv/test_false_verdicts.py",
        "test_a_slot_held_by_a_dropped_slow_reset_is_waited_for_within_the_timeout",
    ),
    ("tests/realpeers/vllm/test_vllm_server.py", "test_vllm_gets_exactly_its_recorded_verdicts"),
    ("tests/realpeers/litellm/test_litellm_proxy.py", "test_litellm_proxy_gets_exactly_its_recorded_verdicts"),
    ("tests/realpeers/llamacpp/test_llamacpp_server.py", "test_llamacpp_server_gets_exactly_its_recorded_verdicts"),
    ("tests/checks/session/test_cli.py", "test_a_broken_server_exits_1_naming_its_clause"),
    ("tests/checks/session/test_cli.py", "test_the_reference_exits_0"),
    ("tests/checks/openenv/test_zoo.py", "test_broken_server_is_flagged_with_its_clause[slow-reset]"),
    ("tests/checks/ors/test_real_peers.py", "test_openreward_template_server"),
    ("tests/app/test_deploy_realpeers.py", "test_the_same_env_under_openenv_0_10_and_0_3"),
    ("tests/app/test_deploy_realpeers.py", "test_openreward_names_its_version_and_ors_sdk_shows_none"),
    ("tests/app/test_deploy.py", "test_can_i_deploy_answers_yes_no_and_unknown_from_the_runs_of_each_version"),
    (
        "tests/checks/openenv/test_robustness.py",
        "test_a_reply_later_than_the_timeout_loses_its_session_and_stops_each_phase_there",
    ),
}


# Tests that must not share the machine with the rest: each starts a process tree that takes a core or two
# and gigabytes for a minute or more (Ray with torch, transformers serve or vLLM with a model); by file, as
# REAL_PEER_FILES, each with the one such tree it needs. scripts/test runs them after the rest, on two
# workers: the files of one tree on one worker, one after another (Ray's waits on RLlib's five-second
# socket recycling beside the model servers' computing), so no two trees of a kind start at once.
SERIAL_FILES = {
    "tests/checks/rllink/test_rllib.py": "ray",
    "tests/checks/rllink_client/test_rllib_client.py": "ray",
    "tests/checks/tap/test_real_peers.py": "ray",
    "tests/realpeers/transformers/test_transformers_serve.py": "models",
    "tests/realpeers/transformers/test_tap_transformers.py": "models",
    "tests/realpeers/vllm/test_vllm_server.py": "models",
    # Serial also because scripts/test may still be compiling its venv while the parallel tests run.
    "tests/realpeers/llamacpp/test_llamacpp_server.py": "models",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--serial",
        choices=("all", "only", "skip"),
        default="all",
        help="run the tests marked serial too (all), only them (only), or all but them (skip)",
    )


def _where(item: pytest.Item) -> tuple[str, str]:
    path = item.nodeid.split("::", 1)[0]
    return path, getattr(item, "originalname", item.name)


# tryfirst: xdist's worker reads the xdist_group marks in its own pytest_collection_modifyitems, which pluggy
# would otherwise call before this one (it registers later), so no file would stay on one worker.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path, name = _where(item)
        fixtures = set(getattr(item, "fixturenames", ()))
        real_peer = (
            path in REAL_PEER_FILES
            or fixtures & REAL_PEER_FIXTURES
            or any(path == where and word in name for where, word in REAL_PEER_TESTS)
        )
        if real_peer:
            item.add_marker(pytest.mark.realpeer)
        if (path, name) in SLOW_TESTS or (path, item.name) in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if path in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
            item.add_marker(pytest.mark.xdist_group(f"serial {SERIAL_FILES[path]}"))
        elif _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(path))
    if config.getoption("numprocesses", None):
        # Slow tests first: xdist hands out the largest groups, then single tests in this order, so a slow one
        # started last would leave the other workers idle while it runs on. Not without workers, where moving
        # a test away from its file's neighbours would set a shared server up twice.
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    _select_serial(config, items)


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether the test uses one of our fixtures set up once for many tests (module, package or session scope).

    Under `--dist loadgroup` such a file's tests go to one xdist worker, which sets the fixture up once, instead
    of every worker starting its own server (openenv init, the rlmesh server) beside the others.
    """
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    return any(defs[-1].scope != "function" and defs[-1].baseid.startswith("tests") for defs in definitions if defs)


def _select_serial(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("serial")
    if wanted == "all":
        return
    keep, dropped = [], []
    for item in items:
        (keep if (item.get_closest_marker("serial") is not None) == (wanted == "only") else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
