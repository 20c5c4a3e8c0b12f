"""The task-index rules both the ors and the openenv suites judge with, on each kind's shapes."""

import pytest

from checks.http_client import Reply
from checks.task_index import (
    first_split,
    index_disagreements,
    index_probes,
    listed_tasks,
    splits_problem,
)

TASKS = [{"q": "a"}, {"q": "b"}, {"q": "c"}, {"q": "d"}]


def ok(body):
    return Reply(200, "application/json", body=body, is_json=True)


def answers_for(probes, tasks, *, env_name=None):
    """Truthful answers to each probe; openreward adds env_name to /task and /task_range, OpenEnv and ors-sdk don't."""
    extra = {} if env_name is None else {"env_name": env_name}
    replies = []
    for probe in probes:
        if probe.route == "num_tasks":
            replies.append(ok({"num_tasks": len(tasks)}))
        elif probe.route == "task":
            replies.append(ok({"task": tasks[probe.body["index"]], **extra}))
        else:
            replies.append(ok({"tasks": tasks[probe.body["start"] : probe.body["stop"]], **extra}))
    return replies


def test_ors_splits_need_a_known_type_and_openenv_splits_any():
    custom = [{"name": "train", "type": "train"}, {"name": "hard", "type": "benchmark"}]
    assert splits_problem([{"name": "train", "type": "train"}]) == ""
    assert "benchmark" in splits_problem(custom)
    assert splits_problem(custom, types=None) == ""
    assert splits_problem([{"name": "hard"}], types=None) == ""


@pytest.mark.parametrize("types", [("train", "validation", "test"), None])
def test_either_kind_refuses_splits_that_are_not_named_objects(types):
    assert "non-empty" in splits_problem([], types=types)
    assert "non-empty" in splits_problem({"splits": []}, types=types)
    assert "string name" in splits_problem(["train"], types=types)
    assert "string name" in splits_problem([{"name": "train", "type": "train"}, {"type": "test"}], types=types)


def test_first_split_is_the_first_named_object():
    assert first_split([{"name": "test", "type": "test"}, {"name": "train", "type": "train"}]) == "test"
    assert first_split(["train", {"name": "dev"}]) == "dev"
    assert first_split([{"name": 3}]) is None
    assert first_split({"name": "train"}) is None


def test_listed_tasks_come_from_a_200_tasks_answer_with_or_without_env_name():
    assert listed_tasks(ok({"tasks": TASKS, "env_name": "quiz"})) == TASKS
    assert listed_tasks(ok({"tasks": TASKS})) == TASKS
    assert listed_tasks(Reply(500, "application/json", body={"tasks": TASKS}, is_json=True)) is None
    assert listed_tasks(ok({"tasks": {"0": TASKS[0]}})) is None
    assert listed_tasks(Reply(500, "text/plain", text="Internal Server Error")) is None


def test_probes_cover_count_first_last_and_a_range_of_three():
    probes = index_probes("test", TASKS)
    assert [(p.route, p.body) for p in probes] == [
        ("num_tasks", {"split": "test"}),
        ("task", {"split": "test", "index": 0}),
        ("task", {"split": "test", "index": 3}),
        ("task_range", {"split": "test", "start": 0, "stop": 3}),
    ]
    assert [p.want for p in probes] == [4, TASKS[0], TASKS[3], TASKS[:3]]
    empty = index_probes("test", [])
    assert [(p.label, p.want) for p in empty] == [("num_tasks", 0), ("task_range(0, 0)", [])]


@pytest.mark.parametrize("env_name", [None, "quiz"], ids=["openenv-and-ors-sdk", "openreward"])
def test_truthful_index_api_agrees_with_or_without_env_name(env_name):
    probes = index_probes("train", TASKS)
    assert index_disagreements(probes, answers_for(probes, TASKS, env_name=env_name)) == []
    single = index_probes("train", TASKS[:1])
    assert [p.label for p in single] == ["num_tasks", "task(0)", "task_range(0, 1)"]
    assert index_disagreements(single, answers_for(single, TASKS[:1], env_name=env_name)) == []


def test_a_miscount_a_wrong_task_and_a_short_range_are_each_named():
    probes = index_probes("train", TASKS)
    answers = answers_for(probes, TASKS)
    answers[0] = ok({"num_tasks": 5})
    answers[2] = ok({"task": TASKS[0]})
    answers[3] = ok({"tasks": TASKS[:2]})
    wrong = index_disagreements(probes, answers)
    assert [line.split(":")[0] for line in wrong] == ["num_tasks", "task(3)", "task_range(0, 3)"]
    assert "5 (tasks says 4)" in wrong[0]


def test_a_server_error_or_a_refusal_is_a_disagreement_even_where_the_body_would_match():
    tasks = [None, None]  # OpenEnv lists whatever the env returns, null included
    probes = index_probes("train", tasks)
    answers = answers_for(probes, tasks)
    answers[1] = Reply(500, "application/json", body={"task": None, "detail": "boom"}, is_json=True)
    answers[2] = Reply(400, "application/json", body={"detail": "Invalid task index"}, is_json=True)
    wrong = index_disagreements(probes, answers)
    assert len(wrong) == 2 and wrong[0].startswith("task(0): 500") and wrong[1].startswith("task(1): 400")


def test_a_boolean_is_not_a_count():
    probes = index_probes("train", TASKS[:1])
    answers = answers_for(probes, TASKS[:1])
    answers[0] = ok({"num_tasks": True})
    assert [line.split(":")[0] for line in index_disagreements(probes, answers)] == ["num_tasks"]
