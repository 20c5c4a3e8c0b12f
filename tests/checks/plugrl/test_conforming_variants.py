"""Conforming servers that differ in what SPEC lets them choose all pass, with no fail, warn or error.

Each variant is the zoo's core server with no fault, set up (or, in
`tests/zoo/plugrl_variants.py`, subclassed) the way a real server may
legitimately differ: batching across connections, no features, empty
metadata, other action dtypes and shapes, extra keys, pings, late metadata,
a slow policy, a run that stops.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect

from checks.core import Outcome, Verdict, run_suite
from checks.plugrl.probe import infer_message
from checks.plugrl.suite import SUITE
from tests.zoo.plugrl_core import ZooServer, running
from tests.zoo.plugrl_messages import pack, unpack
from tests.zoo.plugrl_variants import (
    ExtraActionKeys,
    LateMetadata,
    MatrixAction,
    PingFlood,
    RefusesCompressionOffers,
    TwoDimensionalAction,
)

VARIANT_OPTIONS: dict[str, Any] = {"timeout": 2.0, "patience": 0.3}
REUSE_CLAUSES = (
    "plugrl.10.1.reuse-offered",
    "plugrl.10.1.reuse-answered",
    "plugrl.10.1.reuse-all-rows",
    "plugrl.10.1.reuse-after-terminal",
    "plugrl.10.1.reuse-unknown-env",
    "plugrl.10.1.reuse-connection-scoped",
    "plugrl.10.1.reuse-malformed",
    "plugrl.10.1.reuse-rows",
)
# Decided on every answered infer, so a full run must have passed each of them.
ACTION_CLAUSES = (
    "plugrl.5.1.speaks-first",
    "plugrl.5.3.answered-with-action",
    "plugrl.5.3.time-major",
    "plugrl.5.3.env-ids-form",
    "plugrl.4.3.env-ids-order",
    "plugrl.5.3.action-numeric",
    "plugrl.5.3.same-dtype",
    "plugrl.5.3.same-shape",
    "plugrl.5.3.rows-follow-envs",
)
STOP_AFTER = 100  # feedbacks: more than the default phases send, far fewer than max_exchanges


# A server listing reuse-feedback-obs cannot be asked how it treats a reuse it does not offer.
LISTS_REUSE = {"plugrl.10.1.reuse-unoffered": Verdict.UNSUPPORTED}
NO_REUSE = {clause_id: Verdict.UNSUPPORTED for clause_id in REUSE_CLAUSES}


@dataclass(frozen=True)
class Variant:
    server_options: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    with_stop: bool = False
    # clause -> the verdict this variant must get besides `pass`
    expected: dict[str, Verdict] = field(default_factory=lambda: dict(LISTS_REUSE))
    factory: type[ZooServer] = ZooServer


# Clauses a variant gives nothing to judge: the engine records them `info` "not judged" (issue 10, item 1).
NOT_DECLARED = {
    clause_id: Verdict.INFO
    for clause_id in (
        "plugrl.5.1.features-list",
        "plugrl.5.1.declared-ints",
        "plugrl.10.protocol-version",
        "plugrl.5.1.declared-horizon",
        "plugrl.5.1.declared-dim",
    )
}
INTEGER_ACTIONS = {**LISTS_REUSE, "plugrl.5.3.finite-values": Verdict.INFO}

VARIANTS: dict[str, Variant] = {
    "plain": Variant(),
    "batching": Variant({"batching": True}),
    "no-features": Variant({"features": ()}, expected=NO_REUSE),
    "empty-metadata": Variant({"metadata": {}, "features": ()}, expected=NO_REUSE | NOT_DECLARED),
    "big-endian-f4-actions": Variant({"action_dtype": ">f4"}),
    "f8-actions": Variant({"action_dtype": "<f8"}),
    "300ms-policy": Variant({"policy_delay": 0.3}, options={"timeout": 2.0}),
    "stop-after": Variant({"stop_after": STOP_AFTER}, options={"max_exchanges": 3 * STOP_AFTER}, with_stop=True),
    "u1-actions": Variant({"action_dtype": "|u1"}, expected=INTEGER_ACTIONS),
    "i4-actions": Variant({"action_dtype": "<i4"}, expected=INTEGER_ACTIONS),
    "one-step-chunks": Variant({"horizon": 1}),
    "ping-flood": Variant(factory=PingFlood),
    "late-metadata": Variant(factory=LateMetadata),
    "refuses-compression-offers": Variant(factory=RefusesCompressionOffers),
    "extra-action-keys": Variant(factory=ExtraActionKeys),
    "two-dimensional-action": Variant(factory=TwoDimensionalAction),
    "matrix-action": Variant(factory=MatrixAction),
}
SLOW_POLICY = 0.75  # seconds per infer, of a 1 s step deadline


class RandomPolicyServer(ZooServer):
    """A sampling policy: the same observation gets a different chunk each time, which SPEC allows."""

    def action(self, connection, env_ids):
        return (
            np.random.default_rng()
            .uniform(-1, 1, (self.horizon, len(env_ids), self.action_dim))
            .astype(self.action_dtype)
        )


@pytest.mark.parametrize("name", list(VARIANTS))
async def test_conforming_variant_passes(name: str):
    variant = VARIANTS[name]
    async with running(variant.factory, **variant.server_options) as server:
        report = await run_suite(
            SUITE, server.url, {**VARIANT_OPTIONS, **variant.options}, include_optional=variant.with_stop
        )
        fed_back = server.feedbacks

    selected = {phase.name for phase in SUITE.select(include_optional=variant.with_stop)}
    wrong = [
        f"{r.phase}: {r.clause_id} {r.verdict}: {r.expected} / {r.actual}"
        for r in report.results.values()
        if r.verdict is not variant.expected.get(r.clause_id, Verdict.PASS)
        and not (r.verdict is Verdict.SKIP and r.phase not in selected)
    ]
    assert not wrong, f"{name}:\n" + "\n".join(wrong)
    assert report.outcome() is Outcome.PASS
    decided = {r.clause_id for r in report.results.values() if r.verdict is Verdict.PASS}
    assert set(ACTION_CLAUSES) <= decided
    if variant.with_stop:
        assert report.results[("stop", "plugrl.7.1.stop-close")].verdict is Verdict.PASS
        assert fed_back == STOP_AFTER


async def test_a_sampling_policy_is_recorded_not_failed_on_the_row_check():
    async with running(RandomPolicyServer) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, phases=["exchange"])
    row_check = report.results[("exchange", "plugrl.5.3.rows-follow-envs")]
    assert row_check.verdict is Verdict.INFO, row_check
    assert "differently" in row_check.actual
    assert report.outcome() is Outcome.PASS


async def test_a_policy_that_takes_most_of_each_deadline_still_passes_the_exchange_phase():
    """Every step is on time, so the phase as a whole must be too: no `error` for overrunning it."""
    async with running(ZooServer, policy_delay=SLOW_POLICY, batching=True) as server:
        report = await run_suite(SUITE, server.url, {"timeout": 1.0}, phases=["exchange"])
    wrong = [
        f"{r.clause_id} {r.verdict}: {r.actual}"
        for r in report.results.values()
        if r.phase == "exchange" and r.verdict is not Verdict.PASS
    ]
    assert not wrong, "\n".join(wrong)
    assert report.results[("exchange", "plugrl.1.1.large-frame")].verdict is Verdict.PASS


async def test_batching_server_waits_for_every_connected_client():
    """The batching variant really batches: one client's infer waits while another is connected and idle."""
    options = SUITE.parse_options(VARIANT_OPTIONS)
    async with running(ZooServer, batching=True) as server:
        async with connect(server.url, compression=None) as asking, connect(server.url, compression=None) as idle:
            await asking.recv()
            await idle.recv()
            await asking.send(pack(infer_message(options, [0])))
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(asking.recv(), 0.3)
            await idle.close()
            answer = unpack(await asyncio.wait_for(asking.recv(), 2.0))
    assert answer["message_type"] == "action"
    assert answer["data"]["env_ids"].tolist() == [0]


async def test_the_zoo_core_passes_the_feedback_timeout_phase():
    """The zoo's feedback-timeout faults each differ from this server by one hook."""
    async with running(ZooServer, feedback_timeout=1.0) as server:
        report = await run_suite(
            SUITE, server.url, {**VARIANT_OPTIONS, "feedback_timeout": 1.0}, phases=["feedback-timeout"]
        )
    own = ("plugrl.7.3.feedback-wait", "plugrl.7.3.feedback-timeout-close", "plugrl.7.3.feedback-timeout-enforced")
    assert {clause: report.results[("feedback-timeout", clause)].verdict for clause in own} == dict.fromkeys(
        own, Verdict.PASS
    )
    wrong = [r.clause_id for r in report.results.values() if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    assert not wrong and report.outcome() is Outcome.PASS
