"""What the rlmesh phases share: options, the decoded contract, observation checks."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any

import grpc
import numpy as np
import pydantic

from checks.core import PhaseContext, PhaseFunction, Report, SuiteOptions, Transcript, truncate
from checks.rlmesh import codec
from checks.rlmesh.client import (
    EDITION,
    Endpoint,
    JoinSession,
    NoReply,
    OverLimit,
    RpcFailed,
    StrayResponse,
    StreamEnded,
    error_text,
)
from checks.rlmesh.proto import core_pb2, env_pb2

WARNING_KEY = "rlmesh.conformance.warning"
_episode_counter = itertools.count(1)


class RlmeshOptions(SuiteOptions):
    seed: int = pydantic.Field(0, ge=0, lt=2**62, description="Base seed; lane i is seeded with seed + i.")
    episodes: int = pydantic.Field(2, ge=1, le=100, description="Episodes to finish on each exercised lane.")
    step_budget: int = pydantic.Field(400, ge=1, le=100_000, description="Most steps the episodes phase sends.")
    lanes: list[int] | None = pydantic.Field(
        None, description="Lanes to exercise in lane probes (default: the first two)."
    )
    latency_bound_ms: float | None = pydantic.Field(
        None, gt=0, description="Median step round-trip bound; without it step latency is information."
    )
    max_message_bytes: int = pydantic.Field(
        16 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="Largest message accepted from the target."
    )


@dataclass
class Contract:
    """The handshake's env contract, decoded once per phase."""

    response: env_pb2.HandshakeResponse
    num_envs: int
    autoreset: int
    render_mode: str
    capabilities: dict[str, str]
    obs: codec.Space
    act: codec.Space

    @property
    def subset_step(self) -> bool:
        return self.capabilities.get("subset_step", "").strip().lower() == "true"

    @property
    def next_step(self) -> bool:
        return self.autoreset == core_pb2.AUTORESET_MODE_NEXT_STEP


class NoContract(Exception):
    """The target gave no usable contract, so env interaction cannot be judged."""


class Unanswered(Exception):
    """A valid request got something other than its response (a `rlmesh.s1.answered` failure)."""


def expect(response: env_pb2.JoinResponse, kind: str, where: str) -> env_pb2.JoinResponse:
    if kind_of(response) != kind:
        raise Unanswered(f"{where}: {describe(response)}")
    return response


def not_judged(report: Report, clauses: tuple[str, ...], exc: Exception, evidence: Transcript) -> None:
    """Record why the rest of a phase could not be decided; a valid request refused is itself a failure."""
    if isinstance(exc, Unanswered):
        report.failed("rlmesh.s1.answered", "the response to a valid request", str(exc), evidence)
        why = f"a valid request was refused (see rlmesh.s1.answered): {exc}"
    elif isinstance(exc, OverLimit):
        why = f"a message exceeded the max_message_bytes option: {exc}"
    elif isinstance(exc, codec.ValueMismatch):
        why = f"an observation does not decode (see rlmesh.v2.obs-layout): {exc}"
    else:
        why = str(exc)
    report.error_undecided(clauses, f"not judged: {why}", evidence)


def guarded(run: PhaseFunction, clauses: tuple[str, ...]) -> PhaseFunction:
    """`run`, with a failed opening exchange turned into verdicts instead of a harness error.

    Every phase opens with a Handshake and a Join whose first request is a
    valid reset. When the target gives no usable contract there, or ends or
    stalls that exchange, the phase's clauses cannot be judged; and a valid
    request left unanswered is itself a `rlmesh.s1.answered` failure (a Join
    refused as a second session, while rlconform holds none, `rlmesh.c1.reopen`).
    """

    @functools.wraps(run)
    async def phase(ctx: PhaseContext) -> None:
        try:
            await run(ctx)
        except (NoContract, RpcFailed, StreamEnded, NoReply) as exc:
            report = ctx.report
            mine = [t for t in report.transcripts.values() if t.phase == report.phase]
            evidence = mine[-1] if mine else report.transcript("opening exchange")
            if isinstance(exc, RpcFailed):
                exc = NoContract(f"the Handshake failed: {exc}")
            elif isinstance(exc, StrayResponse):
                report.failed("rlmesh.e5.request-id-echo", "the response echoing the request's id", str(exc), evidence)
            elif isinstance(exc, StreamEnded) and exc.code is grpc.StatusCode.FAILED_PRECONDITION:
                # Join retries a refusal while the previous session winds down, so this one outlasted that.
                report.failed(
                    "rlmesh.c1.reopen",
                    "a new session while rlconform holds no other",
                    f"refused even after the previous session had time to wind down: {exc}",
                    evidence,
                )
            elif isinstance(exc, (StreamEnded, NoReply)) and not isinstance(exc, OverLimit):
                exc = Unanswered(f"a valid request went unanswered: {exc}")
            not_judged(report, clauses, exc, evidence)

    return phase


def endpoint(ctx: PhaseContext) -> Endpoint:
    return Endpoint(ctx.url, ctx.timeout, ctx.options.max_message_bytes)


async def fetch_contract(target: Endpoint, transcript: Transcript) -> Contract:
    response = await target.handshake(transcript)
    if not response.base.compatible or not response.HasField("env_contract"):
        raise NoContract("the Handshake offered no compatible env contract")
    contract = response.env_contract
    try:
        obs = codec.space_from_proto(contract.spec.observation_space, "observation_space")
        act = codec.space_from_proto(contract.spec.action_space, "action_space")
    except codec.ContractError as exc:
        raise NoContract(f"the contract's spaces are unusable: {exc}") from None
    if not 1 <= contract.num_envs <= 4096:
        raise NoContract(f"num_envs {contract.num_envs} is unusable")
    return Contract(
        response,
        int(contract.num_envs),
        int(contract.autoreset_mode),
        contract.render_mode,
        dict(response.base.capabilities),
        obs,
        act,
    )


def lanes_to_exercise(ctx: PhaseContext, contract: Contract) -> list[int]:
    chosen = ctx.options.lanes or list(range(min(2, contract.num_envs)))
    return [lane for lane in chosen if 0 <= lane < contract.num_envs] or [0]


def seeds_for(ctx: PhaseContext, lanes: int, offset: int = 0) -> list[int]:
    return [ctx.options.seed + offset + lane for lane in range(lanes)]


def episode_ids(lanes: int) -> list[str]:
    batch = next(_episode_counter)
    return [f"rlconform-{batch}-{lane}" for lane in range(lanes)]


def reset_request(
    seeds: list[int] | None = None, ids: list[str] | None = None, env_indices: list[int] | None = None
) -> env_pb2.JoinRequest:
    return env_pb2.JoinRequest(
        reset=env_pb2.ResetRequest(seeds=seeds or [], episode_ids=ids or [], env_indices=env_indices or [])
    )


def configure_request(contract: Contract) -> tuple[str, env_pb2.JoinRequest]:
    """A pin of the edition rlconform speaks if the Handshake listed it, else of the first listed (or none)."""
    listed = [edition for edition in contract.response.base.supported_workflow_editions if len(edition) <= 64]
    edition = EDITION if EDITION in listed else (listed[0] if listed else "")
    return edition, env_pb2.JoinRequest(configure=env_pb2.ConfigureEnvRequest(selected_workflow_edition=edition))


def step_request(
    action: Any, env_indices: list[int] | None = None, ids: list[str] | None = None
) -> env_pb2.JoinRequest:
    step = env_pb2.StepRequest(env_indices=env_indices or [], episode_ids=ids or [])
    if action is not None:
        step.action.CopyFrom(action)
    return env_pb2.JoinRequest(step=step)


def kind_of(response: env_pb2.JoinResponse) -> str:
    return response.WhichOneof("kind") or "(none)"


def describe(response: env_pb2.JoinResponse) -> str:
    if kind_of(response) == "error":
        return f"error {error_text(response.error)}"
    return f"a {kind_of(response)} response"


def observe(
    report: Report, contract: Contract, value: Any, lanes: int, where: str, evidence: Transcript
) -> list[Any] | None:
    """Check one observation's layout and domain; the decoded leaves, or None if undecodable."""
    try:
        decoded = codec.decode(contract.obs, value, lanes)
    except codec.ValueMismatch as exc:
        report.failed(
            "rlmesh.v2.obs-layout", f"{contract.obs.describe()} for {lanes} lane(s)", f"{where}: {exc}", evidence
        )
        return None
    report.passed("rlmesh.v2.obs-layout", actual=f"{where}: {lanes} lane(s) decoded", evidence=evidence)
    reason = codec.outside(contract.obs, decoded)
    report.check(
        reason is None,
        "rlmesh.v2.obs-in-space",
        f"inside {contract.obs.describe()}",
        f"{where}: {reason}" if reason else f"{where}: inside",
        evidence,
    )
    return decoded


def check_infos(report: Report, infos: Any, where: str, evidence: Transcript) -> None:
    """Flag observation conformance warnings the server attached to its infos.

    A multi-lane response may pack per-lane infos as a list under `final_info`
    (fact sheet 4.5), so the warnings of each lane's entry count as well.
    """
    top = codec.map_to_python(infos) if infos is not None else {}
    per_lane = top.get("final_info")
    scopes = [top, *(per_lane if isinstance(per_lane, list) else [])]
    entries = [
        entry
        for scope in scopes
        if isinstance(scope, dict) and isinstance(scope.get(WARNING_KEY), list)
        for entry in scope[WARNING_KEY]
    ]
    observed = [w for w in entries if isinstance(w, dict) and w.get("kind") == "observation"]
    report.check(
        not observed,
        "rlmesh.v2.no-conformance-warning",
        "no observation conformance warning",
        f"{where}: {truncate(repr(observed), 300)}" if observed else f"{where}: none",
        evidence,
    )


def finish_session(report: Report, session: JoinSession, evidence: Transcript) -> None:
    """Decide request-id echo for a session that is over."""
    fatal_end = session.ended is not None
    missing = [] if fatal_end else session.unanswered()
    problems = []
    if session.stray:
        problems.append(f"responses with unknown or repeated ids {[truncate(s, 30) for s in session.stray[:5]]}")
    if missing:
        problems.append(f"requests never answered {missing[:5]}")
    report.check(
        not problems,
        "rlmesh.e5.request-id-echo",
        "one response per request, ids echoed",
        "; ".join(problems) or f"{len(session.answered)} responses matched their requests",
        evidence,
    )


def rng_for(ctx: PhaseContext, salt: int) -> np.random.Generator:
    return np.random.default_rng([ctx.options.seed, salt])
