"""Observation and infos checks judged after a step loop decide exactly what judging each step at once decides."""

from __future__ import annotations

import asyncio

import numpy as np

from checks.core import Report
from checks.rlmesh import codec, common
from checks.rlmesh.clauses import CATALOGUE
from checks.rlmesh.client import JoinSession, summarize_request
from checks.rlmesh.common import Contract, LaterChecks, check_infos, observe, step_request
from checks.rlmesh.judging import WARNING_KEY
from checks.rlmesh.proto import env_pb2, spaces_pb2

OBS = codec.Space("box", (2,), np.dtype("<f4"), np.full(2, -1, np.float32), np.full(2, 1, np.float32))
CONTRACT = Contract(env_pb2.HandshakeResponse(), 1, 0, "", {}, OBS, OBS)


def observation(kind: str, step: int) -> spaces_pb2.SpaceValue:
    if kind == "short":
        return spaces_pb2.SpaceValue(leaves=[b"\x00" * 4])  # a wrong layout
    value = 0.5 if kind == "inside" else 2.0 + step  # each outside value differs, so the first one shows
    return spaces_pb2.SpaceValue(leaves=[np.array([[value, 0.0]], np.float32).tobytes()])


def warning_infos(step: int) -> spaces_pb2.MetaMap:
    infos = spaces_pb2.MetaMap()
    entry = infos.entries[WARNING_KEY].list_value.items.add().map_value.entries
    entry["kind"].string_value = "observation"
    entry["detail"].string_value = f"out of bounds at step {step}"
    return infos


STEPS = ["inside", "inside", "outside", "inside", "short", "outside", "big"] + ["inside", "outside"] * 150


def results(deferred: bool) -> list[dict[str, object]]:
    report = Report(CATALOGUE)
    report.begin_phase("episodes")
    t = report.transcript("Join")
    later = LaterChecks(report, CONTRACT, t)
    report.check(True, "rlmesh.s1.step-shape", expected="", actual="before", evidence=t)
    for step, kind in enumerate(STEPS, 1):
        value = (
            spaces_pb2.SpaceValue(leaves=[b"\x00" * (common.LATER_MAX_BYTES + 8)])
            if kind == "big"
            else observation(kind, step)
        )
        infos = warning_infos(step) if kind == "outside" else spaces_pb2.MetaMap()
        if deferred:
            later.observe(value, 1, f"step {step}")
            later.infos(infos, f"step {step}")
        else:
            observe(report, CONTRACT, value, 1, f"step {step}", t)
            check_infos(report, infos, f"step {step}", t)
    later.flush()
    return [{k: v for k, v in r.to_dict().items() if k != "duration"} for r in report.results.values()]


def test_deferred_checks_decide_what_immediate_checks_decide_in_the_same_order() -> None:
    immediate = results(deferred=False)
    assert [r["verdict"] for r in immediate if r["clause_id"] == "rlmesh.v2.obs-in-space"] == ["fail"]
    assert any("step 3" in str(r["actual"]) for r in immediate)  # the first outside step is the one kept
    assert results(deferred=True) == immediate


def test_a_small_request_is_summarized_when_its_frame_is_read() -> None:
    class Call:
        async def write(self, request: env_pb2.JoinRequest) -> None:
            pass

    report = Report(CATALOGUE)
    report.begin_phase("episodes")
    t = report.transcript("Join")
    session = JoinSession(Call(), t, 1.0)  # type: ignore[arg-type]  # only write is used
    session.sent_at["opened"] = 0.0  # past the first request's wait for the stream's headers
    request = step_request(spaces_pb2.SpaceValue(leaves=[b"\x01" * 8]), ids=["e1"])
    asyncio.run(session.send(request))
    assert t.frames[-1].summary == summarize_request(request)
    assert t.frames[-1].summary.startswith("step id='rc-1' action leaves=[8]")
