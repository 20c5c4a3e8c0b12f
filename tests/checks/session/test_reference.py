"""The reference session server: both modes pass the suite, and v1 and v2 give bitwise-identical samples."""

import numpy as np
import pytest

from checks.core import Outcome, Transcript, run_suite
from checks.session.agent import run_schedule
from checks.session.backend import token_logprob
from checks.session.reference import start_reference_server
from checks.session.routes import SessionClient
from checks.session.samples import decode_samples
from checks.session.suite import SUITE


@pytest.mark.parametrize("tree", ["v1", "v2"])
async def test_reference_passes_every_phase(tree):
    running = await start_reference_server(tree=tree)
    try:
        report = await run_suite(SUITE, running.url, {"timeout": 5})
    finally:
        await running.close()
    bad = [r.to_dict() for r in report.results.values() if r.verdict.value in ("fail", "warn", "error")]
    assert report.outcome() is Outcome.PASS and not bad, bad


async def _schedule_samples(tree):
    running = await start_reference_server(tree=tree)
    try:
        async with SessionClient(running.url, Transcript(1, "t", tree), 5) as http:
            sid = await http.new_session()
            run = await run_schedule(http, sid, {"temperature": 0, "seed": 7}, streamed=("append_user",))
            reply = await http.samples(sid, {"max_seq_len": None, "metadata": {"reward": 1.0}})
        return run, decode_samples(reply.raw)
    finally:
        await running.close()


async def test_v1_and_v2_samples_are_bitwise_identical():
    _, (v1, meta1) = await _schedule_samples("v1")
    _, (v2, meta2) = await _schedule_samples("v2")
    assert len(v1) == len(v2) == 1
    for name, array in v1[0].tensors.items():
        other = v2[0].tensors[name]
        assert (array.dtype.str, array.shape, array.tobytes()) == (other.dtype.str, other.shape, other.tobytes()), name
    projected = {k: v for k, v in v2[0].fields.items() if k != "reward"}
    projected["metadata"] = {k: v for k, v in projected["metadata"].items() if k != "leaf"}
    assert v1[0].fields == projected
    linear = {k: v for k, v in meta2["session_metadata"].items() if k not in ("tree", "agent")}
    assert meta1["session_metadata"] == linear
    assert v2[0].fields["metadata"]["leaf"]["path_node_ids"] == [0, 1, 2, 3, 6, 7, 8]


def test_logprobs_do_not_survive_float32():
    values = np.array([token_logprob(c, p, t) for c in range(3) for p in range(40) for t in range(20, 30)])
    assert (values < 0).all()
    assert (values.astype(np.float32).astype(np.float64) != values).all()
