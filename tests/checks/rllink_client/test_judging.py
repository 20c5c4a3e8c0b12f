"""The rllink-client judges decide from a client's messages alone: no connection, no report."""

from __future__ import annotations

import numpy as np
import pytest

from checks.decision import Decision
from checks.rllink_client import judging
from checks.rllink_client.chunks import Chunk, ChunkProblem, read_chunk
from checks.rllink_client.options import RLlinkClientOptions
from checks.rllink_client.policy import Policy, forward, log_softmax
from tests.checks.decisions import held

OPTIONS = RLlinkClientOptions(obs_dim=4, actions=2)


def _held(decisions: list[Decision]) -> dict[str, bool | None]:
    return {d.clause_id: held(d) for d in decisions}


def _chunk(policy: Policy, steps: int = 3, *, dist_offset: float = 0.0) -> Chunk:
    rng = np.random.default_rng(0)
    obs = rng.uniform(-1, 1, (steps + 1, 4))
    dist = forward(policy.versions[policy.seq], obs[:-1]) + dist_offset
    actions = [int(a) for a in dist.argmax(axis=1)]
    logp = log_softmax(dist)[np.arange(steps), actions]
    return Chunk(obs.tolist(), actions, [1.0] * steps, dist.tolist(), logp.tolist(), False, False)


def test_an_on_policy_chunk_holds_every_value_clause():
    policy = Policy(4, 2)
    judge = judging.EpisodeJudge(OPTIONS, "json", policy)
    held = _held(judge.chunk(_chunk(policy), "EPISODES #1, episode 0"))
    assert held == {
        "rllink-client.values.spaces": True,
        "rllink-client.values.logp": True,
        "rllink-client.onpolicy.weights": True,
    }
    assert judge.steps_since_state == 3


def test_dist_inputs_of_other_weights_miss_onpolicy():
    policy = Policy(4, 2)
    judge = judging.EpisodeJudge(OPTIONS, "json", policy)
    decisions = judge.chunk(_chunk(policy, dist_offset=0.5), "EPISODES #1, episode 0")
    miss = [d for d in decisions if d.clause_id == "rllink-client.onpolicy.weights"]
    assert miss and held(miss[0]) is False and "match no weights" in miss[0].actual


def test_out_of_range_actions_stop_at_the_spaces_clause():
    policy = Policy(4, 2)
    chunk = _chunk(policy)
    chunk.actions = [5, 0, 0]
    decisions = judging.EpisodeJudge(OPTIONS, "json", policy).chunk(chunk, "here")
    assert _held(decisions) == {"rllink-client.values.spaces": False}


def test_msgpack_chunks_must_continue_their_episodes():
    policy = Policy(4, 2)
    judge = judging.EpisodeJudge(OPTIONS, "msgpack", policy)
    first = _chunk(policy)
    first.id_, first.t_started, first.t = "a", 0, 3
    assert _held(judge.chunk(first, "one"))["rllink-client.chunk.continuity"] is True
    jumped = _chunk(policy)
    jumped.id_, jumped.t_started, jumped.t = "a", 7, 10
    assert _held(judge.chunk(jumped, "two"))["rllink-client.chunk.continuity"] is False


def test_request_types_and_handshake_order():
    assert held(judging.request_type("PING")) is True
    assert held(judging.request_type("PONG")) is False
    assert held(judging.ping_first("GET_CONFIG")) is False
    assert held(judging.config_state_first("EPISODES", True, False)) is False
    assert judging.no_episodes_list("EPISODES", None).clause_id == "rllink-client.episode.fields"


def test_batch_size_and_timesteps():
    held = _held(judging.batch({"type": "EPISODES_AND_GET_STATE", "timesteps": 32}, 32, 32, 4))
    assert held == {"rllink-client.batch.size": True, "rllink-client.batch.timesteps": True}
    held = _held(judging.batch({"type": "EPISODES_AND_GET_STATE"}, 30, 32, 4))
    assert held == {"rllink-client.batch.size": False, "rllink-client.batch.timesteps": False}


def test_an_unreadable_episode_names_the_clause_it_breaks():
    with pytest.raises(ChunkProblem) as caught:
        read_chunk({"obs": []}, "json")
    decision = judging.unreadable(caught.value, "EPISODES #2, episode 0")
    assert (decision.clause_id, held(decision)) == ("rllink-client.episode.fields", False)
    assert decision.actual.startswith("EPISODES #2, episode 0: ")


def test_a_frame_rllib_reads_and_one_it_cannot():
    read = judging.frame_read("PING", "json (first body byte b'{')")
    assert _held(read) == {
        "rllink-client.dialect": None,
        "rllink-client.frame.header": True,
        "rllink-client.frame.type": True,
    }
    assert _held(judging.frame_read("SET_STATE", None)) == {
        "rllink-client.frame.header": True,
        "rllink-client.frame.type": False,
    }
    unread = judging.frame_unread("dialect", "a json body", length=12, dialect="msgpack", settled=None)
    assert _held(unread) == {"rllink-client.frame.header": False}
    assert "a msgpack body" in unread[0].expected
    untyped = judging.frame_unread("type", "no type", length=12, dialect="json", settled="json (first byte)")
    assert _held(untyped) == {"rllink-client.dialect": None, "rllink-client.frame.type": False}


def test_the_turns_of_a_conversation():
    assert held(judging.waited(False, "PING", 0.2)) is True
    assert held(judging.waited(True, "PING", 0.2)) is False
    assert held(judging.spoke_first("127.0.0.1:5", "PING", 1.0)) is True
    silent = judging.spoke_first("127.0.0.1:5", None, 1.0)
    assert held(silent) is False and "nothing within 1s" in silent.actual
    assert "closed (EOF)" in judging.spoke_first("127.0.0.1:5", None, 1.0, closed="EOF").actual
    assert held(judging.after_episodes("EPISODES", 1.0)) is True
    assert held(judging.after_episodes(None, 1.0)) is False
    assert _held(judging.session_ended(True, "msgpack")) == {}
    assert _held(judging.session_ended(False, "json")) == {
        "rllink-client.req-resp.episodes-no-reply": None,
        "rllink-client.chunk.continuity": None,
    }
    assert _held(judging.reconnect("127.0.0.1:6", 2.0, 1.0)) == {"rllink-client.connect.retries": True}
    assert set(_held(judging.reconnect(None, 2.0, 1.0)).values()) == {None}
