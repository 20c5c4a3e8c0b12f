"""The plugrl-server judges on hand-built observations: no server, no connection.

A recorded exchange (the frames a server sent, decoded) goes through the same
judges the probe calls, which is what judging a transcript without a live
connection needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from checks.core import Report
from checks.decision import Decision, record
from checks.errors import NoReply, PeerClosed, Refused
from checks.plugrl import judging, judging_phases
from checks.plugrl.clauses import CATALOGUE
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.protocol import RESYNC_REASON, STOP_REASON
from checks.plugrl.rows import reused_rows, rows_follow_envs
from tests.checks.decisions import outcomes

METADATA = {"protocol_version": 1, "action_horizon": 2, "action_dim": 3, "features": ["reuse-feedback-obs"]}


def action_message(envs: list[int], action: Any, env_ids: Any = None) -> dict[str, Any]:
    ids = np.asarray(envs, dtype="<i8") if env_ids is None else env_ids
    return {"message_type": "action", "data": {"env_ids": ids, "action": action}}


def judge_action(message: dict[str, Any], envs: list[int], form: judging.ActionForm | None = None):
    return judging.action_message(message, envs, judging.ANSWERED, METADATA, form)


# ---------------------------------------------------------------- frames and metadata


def test_a_decoded_binary_frame_passes_the_frame_clauses_and_yields_its_message():
    data = pack({"message_type": "metadata", "data": METADATA})
    judged = judging.frame(data, unpack(data), "a metadata message")
    assert judged.stop is None and judged.value is not None
    assert outcomes(judged.decisions) == {judging.BINARY: "pass", judging.MSGPACK: "pass", judging.NDARRAY: "pass"}


def test_a_text_frame_fails_binary_frames_and_stops():
    judged = judging.frame("Traceback (most recent call last)", None, "an action message")
    assert judged.stop == "the server sent a text frame"
    assert outcomes(judged.decisions) == {judging.BINARY: "miss"}


@pytest.mark.parametrize(
    ("part", "clause"), [("array", judging.NDARRAY), ("message", judging.MSGPACK)], ids=["array", "message"]
)
def test_an_undecodable_frame_fails_the_clause_of_its_part(part, clause):
    judged = judging.frame(b"\xc1", CodecError("not msgpack", part), "an action message")
    assert judged.stop is not None
    assert outcomes(judged.decisions) == {judging.BINARY: "pass", clause: "miss"}


def test_the_codec_error_carries_the_head_of_the_offending_frame():
    with pytest.raises(CodecError) as caught:
        unpack(b"\xc1" + b"x" * 1000)
    assert caught.value.data.startswith(b"\xc1x") and len(caught.value.data) == 256
    assert caught.value.part == "message"


def test_metadata_fields_are_judged_when_sent():
    judged = judging.metadata_message({"message_type": "metadata", "data": METADATA}, judging.SPEAKS_FIRST)
    assert judged.value == METADATA
    assert set(outcomes(judged.decisions).values()) == {"pass"}
    bad = {"protocol_version": 2, "features": "reuse", "action_horizon": 0}
    judged = judging.metadata_message({"message_type": "metadata", "data": bad}, judging.SPEAKS_FIRST)
    assert outcomes(judged.decisions) == {
        judging.SPEAKS_FIRST: "pass",
        "plugrl.10.protocol-version": "miss",
        "plugrl.5.1.features-list": "miss",
        "plugrl.5.1.declared-ints": "miss",
    }


def test_a_first_message_that_is_not_metadata_fails_the_clause_at_stake():
    judged = judging.metadata_message({"message_type": "action", "data": {}}, "plugrl.7.2.accepts-after-error")
    assert judged.stop == "the server sent no metadata"
    assert outcomes(judged.decisions) == {"plugrl.7.2.accepts-after-error": "miss"}


def test_a_refused_handshake_is_charged_to_concurrency_only_alongside_another_connection():
    alone = judging.handshake(Refused("HTTP 503", status=503))
    alongside = judging.handshake(Refused("HTTP 503", status=503), alongside=True)
    assert outcomes(alone.decisions) == {judging.HANDSHAKE: "miss"} and alone.stop
    assert outcomes(alongside.decisions) == {judging.ALONGSIDE: "miss"}
    assert outcomes(judging.handshake(None).decisions) == {judging.HANDSHAKE: "pass"}


def test_no_frame_tells_silence_a_close_and_the_checkers_own_frame_cap_apart():
    silent = judging.no_frame("plugrl.4.2.keeps-open", "an action message", NoReply(timeout=2.0), 1024)
    assert silent.decisions == [
        Decision("plugrl.4.2.keeps-open", "miss", "an action message within 2s", "nothing arrived")
    ]
    closed = judging.no_frame("plugrl.4.2.keeps-open", "x", PeerClosed(by="peer", code=1011, reason="boom"), 1024)
    assert closed.decisions[0].outcome == "miss" and "the server closed it with code 1011" in closed.decisions[0].actual
    capped = judging.no_frame(
        "plugrl.4.2.keeps-open", "x", NoReply(timeout=2.0), 1024, refused=PeerClosed(by="checker", code=1009)
    )
    assert capped.decisions[0].outcome == "error" and "frame_cap of 1024" in capped.decisions[0].actual


# ---------------------------------------------------------------- actions


def test_a_conforming_action_passes_every_action_clause_and_sets_the_connection_form():
    action = np.zeros((2, 3, 3), dtype="<f4")
    judged = judge_action(action_message([2, 0, 1], action), [2, 0, 1])
    assert judged.stop is None and judged.value.action is action
    assert judged.value.form == judging.ActionForm(np.dtype("<f4"), (2, 3))
    assert set(outcomes(judged.decisions)) == set(judging.ACTION_CLAUSES)
    assert set(outcomes(judged.decisions).values()) == {"pass"}


def test_an_env_major_action_fails_time_major_and_is_not_judged_against_the_declaration():
    judged = judge_action(action_message([0, 1, 2], np.zeros((3, 2, 3), dtype="<f4")), [0, 1, 2])
    found = outcomes(judged.decisions)
    assert found["plugrl.5.3.time-major"] == "miss"
    assert "plugrl.5.1.declared-horizon" not in found and judged.value.form is None


def test_later_actions_keep_the_first_form_and_finite_values():
    first = judging.ActionForm(np.dtype("<f4"), (2, 3))
    action = np.full((2, 1, 3), np.nan, dtype="<f8")
    found = outcomes(judge_action(action_message([0], action), [0], first).decisions)
    assert found["plugrl.5.3.same-dtype"] == "miss"
    assert found["plugrl.5.3.same-shape"] == "pass"
    assert found["plugrl.5.3.finite-values"] == "miss"


def test_env_ids_are_judged_on_form_and_order_apart():
    action = np.zeros((2, 2, 3), dtype="<f4")
    found = outcomes(judge_action(action_message([0, 1], action, np.asarray([1, 0], dtype="<i4")), [0, 1]).decisions)
    assert found["plugrl.5.3.env-ids-form"] == "miss" and found["plugrl.4.3.env-ids-order"] == "miss"
    found = outcomes(judge_action(action_message([0, 1], action, [0, 1]), [0, 1]).decisions)
    assert found["plugrl.5.3.env-ids-form"] == "miss" and found["plugrl.4.3.env-ids-order"] == "pass"


def test_a_second_metadata_instead_of_an_action_stops():
    judged = judge_action({"message_type": "metadata", "data": METADATA}, [0])
    assert judged.stop == "the server sent metadata again"
    assert outcomes(judged.decisions) == {judging.METADATA_ONCE: "miss"}


# ---------------------------------------------------------------- closes and phases


def test_only_the_servers_own_resync_close_passes_a_fault_clause():
    clause = "plugrl.7.2.resync-malformed"
    resync = PeerClosed(by="peer", code=1001, reason=RESYNC_REASON)
    assert judging.resync(clause, "a fault", resync).outcome == "pass"
    for other in (
        PeerClosed(by="peer", code=1011, reason=RESYNC_REASON),
        PeerClosed(by="checker", code=1001, reason=RESYNC_REASON),
        PeerClosed(by="network"),
        NoReply(timeout=1.0),
    ):
        assert judging.resync(clause, "a fault", other).outcome == "miss", other


def test_the_integer_mask_is_handled_by_an_action_or_a_resync_and_recorded_either_way():
    for outcome, handled in (
        (("action", "action [0, 1]"), True),
        (PeerClosed(by="peer", code=1001, reason=RESYNC_REASON), True),
        (PeerClosed(by="peer", code=1011, reason="crash"), False),
        (NoReply(timeout=1.0), False),
    ):
        mask, handling = judging_phases.integer_mask(outcome)
        assert mask.outcome == "info"
        assert handling.outcome == ("pass" if handled else "miss"), outcome


def test_the_feedback_timeout_close_is_judged_on_time_and_reason():
    on_time = judging_phases.closed_while_owed(PeerClosed(by="peer", code=1001, reason="Feedback timeout"), 59.0, 60, 3)
    assert set(outcomes(on_time.decisions).values()) == {"pass"}
    early = judging_phases.closed_while_owed(PeerClosed(by="peer", code=1000, reason=""), 10.0, 60, 3)
    assert outcomes(early.decisions) == {
        "plugrl.7.3.feedback-wait": "miss",
        "plugrl.7.3.feedback-timeout-enforced": "pass",
        "plugrl.7.3.feedback-timeout-close": "miss",
    }
    assert outcomes(judging_phases.never_closed(63.0, 60, 3))["plugrl.7.3.feedback-timeout-close"] == "unsupported"


def test_the_stop_close():
    assert judging_phases.stop_close(PeerClosed(by="peer", code=1001, reason=STOP_REASON), 4, 10).outcome == "pass"
    assert judging_phases.stop_close(PeerClosed(by="peer", code=1000), 4, 10).outcome == "miss"
    assert judging_phases.stop_close(None, 10, 10).outcome == "miss"


def test_compression_is_declined_by_refusing_or_by_not_negotiating():
    assert judging_phases.compression(Refused("400")).outcome == "pass"
    assert judging_phases.compression([]).outcome == "pass"
    assert judging_phases.compression(["permessage-deflate"]).outcome == "miss"


# ---------------------------------------------------------------- rows


def test_rows_are_matched_only_once_the_run_shows_they_follow_observations():
    first = np.arange(6, dtype="<f4").reshape(1, 3, 2)
    nudged = {env: first.copy() for env in range(3)}
    for env in range(3):
        nudged[env][:, env] += 1
    good = rows_follow_envs(first, first.copy(), nudged, {(2, 1): first[:, [2, 1]]})
    assert [d.outcome for d in good] == ["pass", "pass"]
    mislaid = rows_follow_envs(first, first.copy(), nudged, {(2, 1): first[:, [1, 2]]})
    assert [d.outcome for d in mislaid] == ["miss", "miss"]
    constant = rows_follow_envs(first, first.copy(), {env: first for env in range(3)}, {})
    assert constant[0].outcome == "info" and constant[0].actual.startswith("not judged, because ")


def test_reused_rows_are_compared_with_the_answer_sent_in_full():
    full = np.ones((1, 2, 1), dtype="<f4")
    assert [d.outcome for d in reused_rows(full, full, [("reuse", full * 2, full)])] == ["miss"]
    assert [d.outcome for d in reused_rows(full, full, [("reuse", full.copy(), full)])] == ["pass"]
    assert reused_rows(full, full * 3, [("reuse", full, full)])[0].outcome == "info"


def test_recorded_decisions_take_the_clause_level_from_the_catalogue():
    report = Report(CATALOGUE)
    kept = record(report, [judging.resync("plugrl.10.1.reuse-unoffered", "x", NoReply(timeout=1.0))])
    assert not kept
    (result,) = report.results.values()
    assert result.verdict == "warn"  # a should clause: missed is a warning


def test_whether_reuse_is_offered_decides_the_feature_clauses_before_any_reuse():
    offered = {d.clause_id: d.outcome for d in judging_phases.reuse_offer(offered=True)}
    assert offered == {"plugrl.10.1.reuse-offered": "pass", "plugrl.10.1.reuse-unoffered": "unsupported"}
    unoffered = {d.clause_id: d.outcome for d in judging_phases.reuse_offer(offered=False)}
    assert unoffered["plugrl.10.1.reuse-offered"] == "unsupported"
    assert set(unoffered) == {"plugrl.10.1.reuse-offered", *judging_phases.REUSE_CLAUSES}
    refused = judging_phases.no_connection_after_error("a text frame", "no metadata within 2s")
    assert refused.clause_id == judging_phases.ACCEPTS_AFTER_ERROR and refused.missed
