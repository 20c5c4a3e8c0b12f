"""The rllink judges decide from observed messages alone: no connection, no report."""

from __future__ import annotations

import json

import msgpack
import numpy as np
import pytest

from checks.decision import Decision
from checks.errors import Malformed
from checks.rllink import codec, judging
from checks.rllink.options import RLlinkOptions
from tests.checks.decisions import held


def _held(decisions: list[Decision]) -> dict[str, bool | None]:
    return {d.clause_id: held(d) for d in decisions}


def _fault(body: bytes, dialect: codec.Dialect) -> Malformed:
    with pytest.raises(codec.BodyError) as caught:
        codec.decode_body(body, dialect)
    return caught.value


def test_a_body_in_the_other_dialect_misses_body_form_not_the_header():
    msgpack_pong = bytes(msgpack.packb({"type": "PONG"}))
    decision = judging.frame_fault(_fault(msgpack_pong, "json"), "json")
    assert (decision.clause_id, held(decision)) == ("rllink.body.form", False)
    assert "a msgpack body" in decision.actual


def test_trailing_bytes_miss_the_header_clause_and_a_list_body_misses_form():
    slipped = bytes(msgpack.packb({"type": "PONG"})) + b"\x00"
    assert judging.frame_fault(_fault(slipped, "msgpack"), "msgpack").clause_id == "rllink.frame.header"
    listed = judging.frame_fault(_fault(b'["PONG"]', "json"), "json")
    assert (listed.clause_id, held(listed)) == ("rllink.body.form", False)


def test_a_bad_header_misses_the_header_clause():
    with pytest.raises(codec.HeaderError) as caught:
        codec.strict_length(b"GARBAGE!", 1 << 20)
    decision = judging.frame_fault(caught.value, "json")
    assert (decision.clause_id, held(decision), decision.expected) == ("rllink.frame.header", False, "8 ASCII digits")
    assert caught.value.data == b"GARBAGE!"


def test_reply_type_passes_the_wanted_reply_and_names_the_overtaking_clause():
    assert _held(judging.reply_type({"type": "PONG"}, "PONG", "rllink.ping.pong")) == {"rllink.body.form": True}
    overtaken = judging.reply_type({"type": "PONG"}, "SET_STATE", "rllink.state.shape", "rllink.order.pipelined")
    assert _held(overtaken) == {"rllink.body.form": True, "rllink.order.pipelined": False}
    assert _held(judging.reply_type({"type": "FOO"}, "PONG", "rllink.ping.pong")) == {"rllink.body.form": False}


def test_opening_reply():
    assert _held(judging.opening_reply("PONG", "json")) == {
        "rllink.body.form": True,
        "rllink.listen.accepts": True,
        "rllink.ping.pong": True,
    }
    assert _held(judging.opening_reply("SET_STATE", "json")) == {"rllink.ping.pong": False}
    assert _held(judging.opening_reply("HELLO", "json")) == {"rllink.body.form": False}


def test_json_config_states_the_fragment_length():
    judged = judging.config({"type": "SET_CONFIG", "env_steps_per_sample": 32, "force_on_policy": True}, "json")
    assert _held(judged.decisions) == {"rllink.config.set-config": True}
    assert judged.fragment_length == 32
    bad = judging.config({"type": "SET_CONFIG", "env_steps_per_sample": True, "force_on_policy": 1}, "json")
    assert _held(bad.decisions) == {"rllink.config.set-config": False} and bad.fragment_length is None


def test_msgpack_config_must_be_bin():
    judged = judging.config({"type": "SET_CONFIG", "config": "text"}, "msgpack")
    assert _held(judged.decisions) == {"rllink.config.set-config": False}


def test_state_judges_the_module_arrays_and_the_sequence():
    message = {"type": "SET_STATE", "state": {"weights_seq_no": 3, "rl_module": {"w": np.ones(2, np.float32)}}}
    judged = judging.state(message, "msgpack", RLlinkOptions(), [1, 2], "GET_STATE")
    assert judged.seq == 3
    assert _held(judged.decisions) == {"rllink.state.shape": True, "rllink.seq.monotonic": True}
    lower = judging.state(message, "msgpack", RLlinkOptions(), [5], "a batch")
    assert _held(lower.decisions)["rllink.seq.monotonic"] is False
    empty = {"type": "SET_STATE", "state": {"weights_seq_no": 3, "rl_module": {}}}
    unusable = judging.state(empty, "msgpack", RLlinkOptions(), [], "GET_STATE")
    assert unusable.seq is None and _held(unusable.decisions) == {"rllink.state.shape": False}


def test_json_state_without_base64_is_unusable():
    judged = judging.state(
        {"type": "SET_STATE", "onnx_file": "%%", "weights_seq_no": 0}, "json", RLlinkOptions(), [], "x"
    )
    assert judged.seq is None


def test_batch_rises():
    assert _held(judging.batch_rises(0, [1, 2, 3])) == {"rllink.seq.monotonic": True, "rllink.seq.strict": True}
    # RLlib's stale-state race may repeat one number: still monotonic, no longer strict.
    assert _held(judging.batch_rises(0, [1, 1, 2])) == {"rllink.seq.monotonic": True, "rllink.seq.strict": False}
    assert _held(judging.batch_rises(0, [1, 1, 1])) == {"rllink.seq.monotonic": False, "rllink.seq.strict": False}


def test_exchanges():
    assert judging.episodes_silence(None, None) is None
    assert held(judging.episodes_silence(b"0000", None)) is False
    assert held(judging.episodes_silence(None, "closed by the peer")) is False
    assert judging.ping_alone(None, 0.5) is None and held(judging.ping_alone(b"x", 0.5)) is False
    assert held(judging.recovery("rllink.malformed.recovery", "a list body", "kept answering", "", True)) is True
    died = judging.recovery("rllink.payload.robustness", "bad episodes", "died", "refused", False)
    assert held(died) is False and died.expected == judging.RECOVERED
    assert judging.second_client("refused", 1.0) is None
    assert held(judging.second_client("hanging", 1.0)) is False


def test_the_malformed_error_keeps_the_offending_bytes():
    body = json.dumps(["PING"]).encode()
    assert _fault(body, "json").data == body


def test_replies_nobody_asked_for_and_replies_that_never_came():
    assert judging.unasked("SET_STATE", after_bare_episodes=True).clause_id == "rllink.episodes.no-reply"
    assert judging.unasked("PONG", after_bare_episodes=False).clause_id == "rllink.ping.pong"
    assert judging.unasked("SET_CONFIG", after_bare_episodes=False).clause_id == "rllink.order.pipelined"
    overtaken = judging.came_instead("rllink.order.pipelined", "SET_STATE", "PONG")
    assert held(overtaken) is False and overtaken.actual == "PONG came instead"
    silent = judging.no_reply("rllink.ping.pong", "PONG", 2.0, None)
    assert held(silent) is False and silent.expected == "PONG within 2s"
    assert "the connection ended (EOF)" in judging.no_reply("rllink.ping.pong", "PONG", 2.0, "EOF").actual
    assert held(judging.opening_unanswered(1.0, None)) is False
    assert [held(d) for d in judging.fragment_unknown()] == [None, None]
    assert held(judging.served_after_first_left("refused", None)) is True
    assert held(judging.served_after_first_left("refused", "connection refused")) is False
