"""Phase `handshake`: generation gate, the contract and its spaces, capabilities.

Each exchange is one Handshake; `judging` decides what its response (or refusal) says.
"""

from __future__ import annotations

import time

import grpc

from checks.core import Report
from checks.decision import record
from checks.rlmesh import judging
from checks.rlmesh.client import Endpoint, RpcFailed
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.session import phase_endpoint

OTHER_GENERATIONS = ("rlmesh-wire-v2", "")


async def handshake_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with phase_endpoint(ctx) as target:
        first = await _first_handshake(report, target)
        await _other_generations(report, target)
        await _without_base(report, target)
        t = report.transcript("Handshake again")
        again = await target.handshake(t)
        stable = judging.contract_stable(
            first,
            again,
            "a byte-identical env_contract",
            "identical",
            "the env_contract changed between two Handshakes",
        )
        record(report, stable, t)
        t = report.transcript("grpc.health.v1 Check")
        record(report, judging.health(await target.health(t)), t)


async def _first_handshake(report: Report, target: Endpoint) -> env_pb2.HandshakeResponse:
    """The generation we speak: compatible, with a contract. A refusal stops the phase (after the verdict)."""
    t = report.transcript("Handshake rlmesh-wire-v1")
    started = time.monotonic()
    try:
        response = await target.handshake(t)
    except RpcFailed as exc:
        if exc.status is not grpc.StatusCode.RESOURCE_EXHAUSTED:  # that one is our own size limit
            record(report, judging.handshake_failed(exc), t)
        raise
    record(report, judging.handshake_latency(time.monotonic() - started), t)
    record(report, judging.handshake(response), t)
    return response


async def _other_generations(report: Report, target: Endpoint) -> None:
    """Other generations must be turned away in-band, without a contract."""
    for generation in OTHER_GENERATIONS:
        t = report.transcript(f"Handshake {generation or 'empty generation'}")
        try:
            other: env_pb2.HandshakeResponse | RpcFailed = await target.handshake(t, generation)
        except RpcFailed as exc:
            other = exc
        record(report, judging.generation_gate(generation, other), t)


async def _without_base(report: Report, target: Endpoint) -> None:
    t = report.transcript("Handshake without base")
    try:
        await target.handshake(t, None)
    except RpcFailed as exc:
        record(report, judging.missing_base(exc.status, str(exc)), t)
    else:
        record(report, judging.missing_base(None), t)
