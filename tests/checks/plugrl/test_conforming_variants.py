"""Conforming servers that differ in what SPEC lets them choose all pass, with no fail, warn or error.

Each variant is the zoo's core server with no fault, set up (or, in
`tests/zoo/plugrl_server/variants.py`, subclassed) the way a real server may
legitimately differ: batching across connections, no features, empty
metadata, other action dtypes and shapes, extra keys, pings, late metadata,
a slow policy, a run that stops, policies the row check cannot judge (by row
position, constant, sampling) and a lenient reading of a 0/1 integer reuse mask.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.client import connect

from checks.core import Outcome, Verdict, run_suite
from checks.plugrl.probe import infer_message
from checks.plugrl.suite import SUITE
from tests.checks.server_zoo import cli_check
from tests.zoo.plugrl_server.core import ZooServer, running
from tests.zoo.plugrl_server.messages import pack, unpack
from tests.zoo.plugrl_server.variants import (
    AcceptsIntegerMask,
    ConstantPolicy,
    ExtraActionKeys,
    LateMetadata,
    MatrixAction,
    PingFlood,
    RefusesCompressionOffers,
    RowIndexPolicy,
    SamplingPolicy,
    TwoDimensionalAction,
)

from .test_zoo import QUICK_CLI_ARGS

VARIANT_OPTIONS: dict[str, Any] = {"timeout": 2.0, "patience": 0.3}
REUSE_CLAUSES = (
    "plugrl.10.1.reuse-offered",
    "plugrl.10.1.reuse-answered",
    "plugrl.10.1.reuse-all-rows",
    "plugrl.10.1.reuse-after-terminal",
    "plugrl.10.1.reuse-unknown-env",
    "plugrl.10.1.reuse-connection-scoped",
    "plugrl.10.1.reuse-malformed",
    "plugrl.10.1.reuse-integer-mask",
    "plugrl.10.1.reuse-integer-mask-handled",
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


# A server listing reuse-feedback-obs cannot be asked how it treats a reuse it does not offer;
# whether it takes an integer mask is recorded, never judged.
LISTS_REUSE = {"plugrl.10.1.reuse-unoffered": Verdict.UNSUPPORTED, "plugrl.10.1.reuse-integer-mask": Verdict.INFO}
NO_REUSE = {clause_id: Verdict.UNSUPPORTED for clause_id in REUSE_CLAUSES}
# The row check is not judged for a policy that does not show each row following its env's observation.
ROWS_NOT_JUDGED = {**LISTS_REUSE, "plugrl.5.3.rows-follow-envs": Verdict.INFO}


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
    "row-index-policy": Variant(factory=RowIndexPolicy, expected=ROWS_NOT_JUDGED),
    "constant-policy": Variant(factory=ConstantPolicy, expected=ROWS_NOT_JUDGED),
    # Nor is reuse-rows, which relies on the same determinism.
    "sampling-policy": Variant(
        factory=SamplingPolicy, expected={**ROWS_NOT_JUDGED, "plugrl.10.1.reuse-rows": Verdict.INFO}
    ),
    "accepts-integer-mask": Variant(factory=AcceptsIntegerMask),
}
SLOW_POLICY = 0.75  # seconds per infer, of a 1 s step deadline


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
    assert set(ACTION_CLAUSES) - set(variant.expected) <= decided
    if variant.with_stop:
        assert report.results[("stop", "plugrl.7.1.stop-close")].verdict is Verdict.PASS
        assert fed_back == STOP_AFTER


@pytest.mark.parametrize(
    ("factory", "because"),
    [
        (SamplingPolicy, "answered the same observations [0, 1, 2] differently"),
        (RowIndexPolicy, "nudging env 0's observation changed no value"),
        (ConstantPolicy, "nudging env 0's observation changed no value"),
    ],
)
async def test_a_policy_not_shown_to_follow_observations_is_not_judged_on_the_row_check(factory, because):
    async with running(factory) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, phases=["exchange"])
    row_check = report.results[("exchange", "plugrl.5.3.rows-follow-envs")]
    assert row_check.verdict is Verdict.INFO, row_check
    assert row_check.actual.startswith("not judged, because ") and because in row_check.actual, row_check.actual
    assert report.outcome() is Outcome.PASS


class MixesTheBatch(ZooServer):
    """Adds the batch's mean observation to every row: env j's observation moves every env's action."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return (chunk + chunk.mean(axis=1, keepdims=True)).astype(self.action_dtype)


async def test_a_policy_that_mixes_the_envs_of_a_batch_is_not_judged_on_the_row_check():
    async with running(MixesTheBatch) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, phases=["exchange"])
    row_check = report.results[("exchange", "plugrl.5.3.rows-follow-envs")]
    assert row_check.verdict is Verdict.INFO and "mixes the envs of a batch" in row_check.actual, row_check
    assert report.outcome() is Outcome.PASS


@pytest.mark.parametrize(
    ("factory", "outcome"), [(AcceptsIntegerMask, "accepted: answered with an action"), (ZooServer, "refused: ")]
)
async def test_an_integer_reuse_mask_is_recorded_whether_accepted_or_refused(factory, outcome):
    async with running(factory) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, phases=["reuse"])
    mask = report.results[("reuse", "plugrl.10.1.reuse-integer-mask")]
    assert mask.verdict is Verdict.INFO and mask.actual.startswith(outcome), mask
    assert report.results[("reuse", "plugrl.10.1.reuse-malformed")].verdict is Verdict.PASS
    assert report.outcome() is Outcome.PASS


# The variants the row and reuse rules were loosened for, through the real CLI.
CLI_VARIANTS = ("row-index-policy", "constant-policy", "sampling-policy", "accepts-integer-mask")


@pytest.mark.parametrize("name", CLI_VARIANTS)
async def test_cli_exits_0_against_a_variant_the_rules_now_admit(name: str):
    variant = VARIANTS[name]
    async with running(variant.factory, **variant.server_options) as server:
        code, output, errors = await cli_check("plugrl-server", server.url, *QUICK_CLI_ARGS)
    assert code == 0, f"exit {code}\n{output}\n{errors}"


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
