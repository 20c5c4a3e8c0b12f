"""PlugRL through the tap: the reference pair passes every clause the traffic decides; zoo servers and zoo
clients, each driven by the conforming peer, are flagged with the clause their one fault breaks."""

from __future__ import annotations

import asyncio

import pytest

from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.tap import plugrl
from checks.tap.ledger import NEEDS_ACTIVE_RUN
from checks.verdicts import Outcome, Verdict
from tests.checks.tap.conftest import tapping
from tests.zoo.plugrl_client import probe, transport
from tests.zoo.plugrl_server import faults_content

SESSION_SECONDS = 8.0
SERVER_FAULTS = {
    "EnvMajor": (faults_content.EnvMajor, "plugrl.5.3.time-major"),
    "NoEnvIds": (faults_content.NoEnvIds, "plugrl.4.3.env-ids-order"),
    "ActionAsList": (faults_content.ActionAsList, "plugrl.5.3.action-array"),
    "InvalidMsgpack": (faults_content.InvalidMsgpack, "plugrl.2.msgpack-map"),
    "NaNActions": (faults_content.NaNActions, "plugrl.5.3.finite-values"),
    "DriftingDtype": (faults_content.DriftingDtype, "plugrl.5.3.same-dtype"),
    "MetadataTwice": (faults_content.MetadataTwice, "plugrl.4.1.metadata-once"),
}
CLIENT_FAULTS = {
    "JsonText": (transport.JsonText, "plugrl-client.2.binary-frames"),
    "OffersDeflate": (transport.OffersDeflate, "plugrl-client.1.1.no-compression"),
    "NoStepIds": (transport.NoStepIds, "plugrl-client.5.2.infer-form"),
    "DoubleInfer": (transport.DoubleInfer, "plugrl-client.4.2.alternation"),
    # Its early infer reaches the tap after the metadata went by: the traffic shows two infers in a row.
    "EarlyInfer": (transport.EarlyInfer, "plugrl-client.4.2.alternation"),
    "ReusesUnoffered": (probe.ReusesUnoffered, "plugrl-client.10.1.reuse-only-offered"),
}


async def drive(client: ReferenceClient) -> None:
    """One session of `client`, however it ends: a conforming client may give up on a broken server."""
    try:
        await asyncio.wait_for(client.session(), SESSION_SECONDS)
    except Exception:
        pass


async def test_the_reference_client_and_server_pass_through_the_tap():
    server = await start_reference_server("127.0.0.1", 0, stop_after=30)
    try:
        async with tapping(plugrl.spec(), f"ws://127.0.0.1:{server.port}") as tapped:
            ended = await ReferenceClient(tapped.url).session()
    finally:
        await server.close()
    assert ended == "stop"  # the server's stop close reached the client as it was sent
    verdicts = tapped.verdicts()
    assert set(verdicts.values()) == {Verdict.PASS}, verdicts
    assert tapped.ledger.outcome() is Outcome.PASS
    for clause in ("plugrl.5.3.time-major", "plugrl-client.4.2.alternation", "plugrl-client.10.1.reuse-held-only"):
        assert tapped.ledger.tallies[clause].judged >= 4, clause
    assert tapped.ledger.tallies["plugrl.6.concurrent-clients"].skip_reason == NEEDS_ACTIVE_RUN
    assert tapped.ledger.unjudged == 0 and tapped.ledger.judged_messages == tapped.ledger.messages


@pytest.mark.parametrize("name", sorted(SERVER_FAULTS))
async def test_a_zoo_server_is_flagged_with_its_clause(name):
    factory, clause = SERVER_FAULTS[name]
    server = await factory(stop_after=12).start()
    try:
        async with tapping(plugrl.spec(), f"ws://127.0.0.1:{server.port}") as tapped:
            await drive(ReferenceClient(tapped.url))
    finally:
        await server.close()
    assert clause in tapped.flagged(), tapped.verdicts()
    tally = tapped.ledger.tallies[clause]
    assert tally.first is not None and tally.first.window[0].startswith("connection ")
    client_side = {c for c in tapped.flagged() if c.startswith("plugrl-client.")}
    assert client_side == set(), client_side  # the conforming client is not blamed for the server's fault


@pytest.mark.parametrize("name", sorted(CLIENT_FAULTS))
async def test_a_zoo_client_is_flagged_with_its_clause(name):
    factory, clause = CLIENT_FAULTS[name]
    features = () if name == "ReusesUnoffered" else ("reuse-feedback-obs",)
    server = await start_reference_server("127.0.0.1", 0, stop_after=12, features=features)
    try:
        async with tapping(plugrl.spec(), f"ws://127.0.0.1:{server.port}") as tapped:
            await drive(factory(tapped.url))
    finally:
        await server.close()
    assert clause in tapped.flagged(), tapped.verdicts()
    server_side = {c for c in tapped.flagged() if c.startswith("plugrl.")}
    assert server_side <= {"plugrl.1.1.no-compression"}, server_side  # the reference server is not blamed
