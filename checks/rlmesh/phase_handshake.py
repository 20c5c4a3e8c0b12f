"""Phase `handshake`: generation gate, the contract and its spaces, capabilities."""

from __future__ import annotations

import time

import grpc

from checks.core import seconds, truncate
from checks.rlmesh import codec
from checks.rlmesh.client import RpcFailed, unknown_tags
from checks.rlmesh.common import contract_unchanged
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import core_pb2
from checks.rlmesh.session import phase_endpoint

USABLE_AUTORESET = {core_pb2.AUTORESET_MODE_NEXT_STEP: "NEXT_STEP", core_pb2.AUTORESET_MODE_DISABLED: "DISABLED"}


async def handshake_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with phase_endpoint(ctx) as target:
        # The generation we speak: compatible, with a contract.
        t = report.transcript("Handshake rlmesh-wire-v1")
        started = time.monotonic()
        try:
            response = await target.handshake(t)
        except RpcFailed as exc:
            if exc.code is not grpc.StatusCode.RESOURCE_EXHAUSTED:  # that one is our own size limit
                report.failed(
                    "rlmesh.h1.compatible", expected="compatible=true with an env_contract", actual=str(exc), evidence=t
                )
            raise
        report.info(
            "rlmesh.o1.handshake-latency",
            actual=f"first Handshake took {seconds(time.monotonic() - started)}",
            evidence=t,
        )
        base, has_contract = response.base, response.HasField("env_contract")
        report.check(
            base.compatible and has_contract,
            "rlmesh.h1.compatible",
            expected="compatible=true with an env_contract",
            actual=f"compatible={base.compatible}, env_contract {'present' if has_contract else 'absent'}, "
            f"error_message={truncate(base.error_message, 120)!r}",
            evidence=t,
        )
        report.check(
            bool(base.peer_info.component.strip()),
            "rlmesh.h1.peer-info",
            expected="a non-empty component",
            actual=f"component={truncate(base.peer_info.component, 60)!r}",
            evidence=t,
        )
        if not has_contract:
            for clause in (
                "rlmesh.h1.num-envs",
                "rlmesh.h1.autoreset-mode",
                "rlmesh.h1.spaces",
                "rlmesh.h1.render-mode-declared",
            ):
                report.error(clause, "not judged: the Handshake returned no env_contract", t)
        contract = response.env_contract
        report.check(
            contract.num_envs >= 1,
            "rlmesh.h1.num-envs",
            expected="num_envs >= 1",
            actual=f"num_envs={contract.num_envs}",
            evidence=t,
        )
        mode = (
            core_pb2.AutoresetMode.Name(contract.autoreset_mode)
            if contract.autoreset_mode in core_pb2.AutoresetMode.values()
            else str(contract.autoreset_mode)
        )
        report.check(
            contract.autoreset_mode in USABLE_AUTORESET,
            "rlmesh.h1.autoreset-mode",
            expected="NEXT_STEP or DISABLED",
            actual=f"autoreset_mode={mode}",
            evidence=t,
        )
        problems = []
        for name in ("action_space", "observation_space"):
            if not contract.spec.HasField(name):
                problems.append(f"{name} absent")
                continue
            try:
                space = codec.space_from_proto(getattr(contract.spec, name), name)
                problems.append(f"{name} {space.describe()}: ok")
            except codec.BeyondChecker as exc:
                problems.append(f"not judged: {exc}")
            except codec.ContractError as exc:
                problems.append(f"broken: {exc}")
        unjudged = [p for p in problems if p.startswith("not judged")]
        broken = [p for p in problems if not p.endswith(": ok") and p not in unjudged]
        if unjudged and not broken:
            report.error("rlmesh.h1.spaces", "; ".join(problems), t)
        else:
            report.check(
                not broken,
                "rlmesh.h1.spaces",
                expected="both spaces present and well-formed",
                actual="; ".join(problems),
                evidence=t,
            )

        metadata = codec.map_to_python(contract.spec.metadata)
        declared = metadata.get("render_modes")
        if contract.render_mode:
            listed = isinstance(declared, list) and contract.render_mode in declared
            report.check(
                listed,
                "rlmesh.h1.render-mode-declared",
                expected="render_mode among metadata render_modes",
                actual=f"render_mode={truncate(contract.render_mode, 40)!r}, "
                f"render_modes={truncate(repr(declared), 120)}",
                evidence=t,
            )
        else:
            report.passed("rlmesh.h1.render-mode-declared", actual="no render_mode declared", evidence=t)

        tags = unknown_tags(response.base)
        report.info(
            "rlmesh.h5.unknown-fields",
            actual=f"undeclared HandshakeResponse.base tags {tags}, top-level tags {unknown_tags(response)}; "
            f"capabilities {dict(base.capabilities)}",
            evidence=t,
        )

        # Other generations must be turned away in-band, without a contract.
        for generation in ("rlmesh-wire-v2", ""):
            t = report.transcript(f"Handshake {generation or 'empty generation'}")
            try:
                other = await target.handshake(t, generation)
            except RpcFailed as exc:
                report.failed(
                    "rlmesh.h2.generation-gate",
                    expected="compatible=false in a HandshakeResponse",
                    actual=f"generation {generation!r}: {exc}",
                    evidence=t,
                )
                continue
            report.check(
                not other.base.compatible
                and bool(other.base.error_message.strip())
                and not other.HasField("env_contract"),
                "rlmesh.h2.generation-gate",
                expected="compatible=false, an error_message, no env_contract",
                actual=f"generation {generation!r}: compatible={other.base.compatible}, "
                f"error_message={truncate(other.base.error_message, 120)!r}, "
                f"env_contract {'present' if other.HasField('env_contract') else 'absent'}",
                evidence=t,
            )

        t = report.transcript("Handshake without base")
        try:
            await target.handshake(t, None)
            report.failed(
                "rlmesh.h2.missing-base", expected="gRPC INVALID_ARGUMENT", actual="a HandshakeResponse", evidence=t
            )
        except RpcFailed as exc:
            report.check(
                exc.code is grpc.StatusCode.INVALID_ARGUMENT,
                "rlmesh.h2.missing-base",
                expected="gRPC INVALID_ARGUMENT",
                actual=str(exc),
                evidence=t,
            )

        t = report.transcript("Handshake again")
        contract_unchanged(
            report,
            response,
            await target.handshake(t),
            "a byte-identical env_contract",
            "identical",
            "the env_contract changed between two Handshakes",
            t,
        )

        t = report.transcript("grpc.health.v1 Check")
        report.info("rlmesh.o1.health", actual=f"health for service '': {await target.health(t)}", evidence=t)
