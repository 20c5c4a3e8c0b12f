"""The plugrl-client judges on hand-built client messages: no listener, no client process.

A recorded exchange goes through the judges `Session` calls, with the run's
memory (what each env last reported, what it holds) handed in as values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl_client import judging
from checks.plugrl_client.judging import Held
from checks.plugrl_client.probe import probe_chunk
from tests.checks.decisions import outcomes


def probe_obs(t: list[int], applied: np.ndarray | None = None) -> dict[str, Any]:
    n = len(t)
    a = np.zeros((n, 3)) if applied is None else applied
    return {
        "images": {},
        "states": {"t": np.asarray(t, dtype=np.float64).reshape(n, 1), "a": a.astype(np.float64)},
        "text": np.asarray(["x"] * n),
    }


def infer(envs: list[int], t: list[int], reuse: list[bool] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_type": "infer",
        "data": probe_obs(t),
        "env_indices": np.asarray(envs, dtype=np.int64),
        "step_ids": np.zeros(len(envs), dtype=np.int64),
    }
    if reuse is not None:
        message["reuse"] = np.asarray(reuse, dtype=np.bool_)
    return message


def test_a_recorded_infer_frame_goes_through_the_frame_and_infer_judges():
    data = pack(infer([0, 1], [0, 0]))
    framed = judging.frame(data, unpack(data))
    assert framed.stop is None and set(outcomes(framed.decisions).values()) == {"pass"}
    judged = judging.infer_message(framed.value, reuse_offered=False, held={})
    assert judged.stop is None
    assert outcomes(judged.decisions) == {
        "plugrl-client.5.2.infer-form": "pass",
        "plugrl-client.5.2.observation-form": "pass",
    }
    probe = judging.probe_observation(framed.value["data"], 2, 3)
    assert probe.value is not None and probe.value.t == [0, 0]


def test_frames_a_client_must_not_send():
    assert judging.frame("oops", None).stop == "the client sent a text frame"
    array = judging.frame(b"\x80", CodecError("bad", "array"))
    assert outcomes(array.decisions)["plugrl-client.3.2.ndarray-form"] == "miss"
    other = judging.frame(pack({"message_type": "action"}), {"message_type": "action"})
    assert outcomes(other.decisions)["plugrl-client.2.msgpack-map"] == "miss" and other.stop


def test_a_reuse_is_judged_under_its_own_clauses():
    unoffered = judging.infer_message(infer([0], [], reuse=[True]), reuse_offered=False, held={0: False})
    assert outcomes(unoffered.decisions)["plugrl-client.10.1.reuse-only-offered"] == "miss"
    assert unoffered.decisions[-1].actual == "an infer with reuse"
    terminal = judging.infer_message(infer([0], [], reuse=[True]), reuse_offered=True, held={0: True})
    assert outcomes(terminal.decisions) == {
        "plugrl-client.5.2.infer-form": "pass",
        "plugrl-client.10.1.reuse-only-offered": "pass",
        "plugrl-client.10.1.reuse-held-only": "miss",
    }
    held = judging.infer_message(infer([0, 1], [2], reuse=[True, False]), reuse_offered=True, held={0: False})
    assert held.stop is None and held.value.sent_envs == [1]


def test_the_alternation_and_the_first_message_after_a_reconnect():
    assert judging.sequence("infer", "infer", False, []).stop is None
    wrong = judging.sequence("infer", "feedback", False, [])
    assert outcomes(wrong.decisions) == {"plugrl-client.4.2.alternation": "miss"}
    stale = judging.sequence("feedback", "infer", True, [3])
    assert outcomes(stale.decisions) == {
        "plugrl-client.7.6.fresh-infer-after-reconnect": "miss",
        "plugrl-client.7.6.no-stale-feedback": "miss",
    }
    assert judging.stale_envs({"env_indices": np.asarray([1, 3])}, {3, 4}) == [3]


def test_an_infer_continues_each_env_where_the_run_last_saw_it():
    decisions = judging.infer_continuity(
        envs=[0, 1, 2],
        infer_t={0: 2, 1: 0, 2: 5},
        holding={2: Held(np.zeros((1, 3)), 0)},
        last_t={0: 2, 1: 3, 2: 0},
        ended={0: False, 1: True, 2: False},
        lost=set(),
        reconnected=False,
    )
    continues = [d.outcome for d in decisions if d.clause_id == "plugrl-client.8.1.infer-continues"]
    assert continues == ["pass", "pass", "miss"]
    assert outcomes(decisions)["plugrl-client.8.one-feedback-per-action"] == "miss"


def test_a_feedback_row_for_a_held_chunk():
    chunk = probe_chunk([4], horizon=4, action_dim=3, dtype="float64")[:, 0, :]
    held = Held(chunk, t0=1)
    # Env 4 runs episodes of 5 steps: two steps from t = 1 apply the chunk's second row.
    good = judging.feedback_row(4, held, 3, 2.0, chunk[1], (False, False), horizon=4)
    assert set(outcomes(good).values()) == {"pass"}
    summed_wrong = judging.feedback_row(4, held, 3, 1.0, chunk[1], (False, False), horizon=4)
    assert outcomes(summed_wrong)["plugrl-client.5.4.chunk-sum-reward"] == "miss"
    wrong_row = judging.feedback_row(4, held, 3, 2.0, chunk[0], (False, False), horizon=4)
    assert outcomes(wrong_row)["plugrl-client.5.3.time-major"] == "miss"
    past_terminal = judging.feedback_row(4, held, 6, 5.0, chunk[3], (True, False), horizon=4)
    assert outcomes(past_terminal) == {"plugrl-client.5.4.stops-at-terminal": "miss"}


def test_a_feedback_form_and_its_rewards_dtype():
    feedback = {
        "message_type": "feedback",
        "env_indices": np.asarray([0]),
        "step_ids": np.zeros(1),
        "data": {
            "obs": probe_obs([1]),
            "rewards": np.ones(1, np.float64),
            "terminated": np.zeros(1, bool),
            "truncated": np.zeros(1, bool),
            "info": {},
        },
    }
    judged = judging.feedback_message(feedback)
    assert outcomes(judged.decisions) == {
        "plugrl-client.5.4.feedback-form": "pass",
        "plugrl-client.5.4.rewards-float32": "info",
    }
    del feedback["data"]["info"]
    assert outcomes(judging.feedback_message(feedback).decisions) == {"plugrl-client.5.4.feedback-form": "miss"}


def test_what_the_scenarios_turns_show():
    assert outcomes(judging.after_padded_metadata(None)) == {
        "plugrl-client.1.1.large-frame": "pass",
        "plugrl-client.5.1.unknown-keys": "pass",
    }
    assert outcomes(judging.after_padded_metadata(1009)) == {"plugrl-client.1.1.large-frame": "miss"}
    assert outcomes(judging.after_padded_metadata(1011)) == {"plugrl-client.5.1.unknown-keys": "miss"}
    assert outcomes([judging.feedback_env(3, held=True, stale=False)]) == {
        "plugrl-client.4.3.feedback-envs-held": "pass"
    }
    assert outcomes([judging.feedback_env(3, held=False, stale=True)]) == {
        "plugrl-client.7.6.no-stale-feedback": "miss"
    }
    assert judging.reconnect_after_stop(None, 1.0).outcome == "pass"
    assert judging.reconnect_after_stop("127.0.0.1:9", 1.0).missed
    assert judging.reconnect_after_resync(None, 6.0).missed
    assert judging.reuse_used(0).outcome == "info" and judging.reuse_used(2).outcome == "pass"
    assert judging.after_text_frame(False, "went on").missed
