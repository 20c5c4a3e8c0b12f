"""What the rlmesh phases share: the decoded contract, request builders, recording observation and session judges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from checks.core import PhaseStopped, Report, Transcript
from checks.decision import record
from checks.rlmesh import codec, judging
from checks.rlmesh.client import EDITION, Endpoint, JoinSession
from checks.rlmesh.judging import kind_of as kind_of  # re-exported: the parity script reads responses with it
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import core_pb2, env_pb2, spaces_pb2


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


async def fetch_contract(target: Endpoint, transcript: Transcript) -> Contract:
    """The contract, or a stop: without a usable contract env interaction cannot be judged."""
    response = await target.handshake(transcript)
    if not response.base.compatible or not response.HasField("env_contract"):
        raise PhaseStopped("the Handshake offered no compatible env contract", transcript)
    contract = response.env_contract
    try:
        obs = codec.space_from_proto(contract.spec.observation_space, "observation_space")
        act = codec.space_from_proto(contract.spec.action_space, "action_space")
    except codec.ContractError as exc:
        raise PhaseStopped(f"the contract's spaces are unusable: {exc}", transcript) from None
    if not 1 <= contract.num_envs <= 4096:
        raise PhaseStopped(f"num_envs {contract.num_envs} is unusable", transcript)
    return Contract(
        response,
        int(contract.num_envs),
        int(contract.autoreset_mode),
        contract.render_mode,
        dict(response.base.capabilities),
        obs,
        act,
    )


def lanes_to_exercise(ctx: Ctx, contract: Contract) -> list[int]:
    chosen = ctx.options.lanes or list(range(min(2, contract.num_envs)))
    return [lane for lane in chosen if 0 <= lane < contract.num_envs] or [0]


def seeds_for(ctx: Ctx, lanes: int, offset: int = 0) -> list[int]:
    return [ctx.options.seed + offset + lane for lane in range(lanes)]


def rng_for(ctx: Ctx, salt: int) -> np.random.Generator:
    return np.random.default_rng([ctx.options.seed, salt])


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
    action: spaces_pb2.SpaceValue | None, env_indices: list[int] | None = None, ids: list[str] | None = None
) -> env_pb2.JoinRequest:
    request = env_pb2.JoinRequest()
    step = request.step  # filled in place: building a StepRequest and then the JoinRequest copies it twice
    step.SetInParent()
    step.env_indices.extend(env_indices or [])
    step.episode_ids.extend(ids or [])
    if action is not None:
        step.action.CopyFrom(action)
    return request


def render_request(env_indices: list[int]) -> env_pb2.JoinRequest:
    return env_pb2.JoinRequest(render=env_pb2.RenderRequest(env_indices=env_indices))


def observe(
    report: Report, contract: Contract, value: spaces_pb2.SpaceValue, lanes: int, where: str, evidence: Transcript
) -> list[Any] | None:
    """Check one observation's layout and domain; the decoded leaves, or None if undecodable."""
    decisions, decoded = judging.observation(contract.obs, value, lanes, where)
    record(report, decisions, evidence)
    return decoded


def check_infos(report: Report, infos: spaces_pb2.MetaMap | None, where: str, evidence: Transcript) -> None:
    """Flag observation conformance warnings the server attached to its infos."""
    record(report, judging.conformance_warnings(infos, where), evidence)


LATER_LIMIT = 256  # checks queued before they are judged: bounds what the queue keeps alive
LATER_MAX_BYTES = 16 * 1024  # a larger observation is judged when it arrives rather than held
OBSERVATION_CLAUSES = ("rlmesh.v2.obs-layout", "rlmesh.v2.obs-in-space")
WARNING_CLAUSE = "rlmesh.v2.no-conformance-warning"


class LaterChecks:
    """A step loop's observation and infos checks, judged after the loop (or every LATER_LIMIT checks).

    Decoding and judging an observation is most of the checker's own cost on a
    step's path, and nothing in the loop waits for its verdict. Deferring it
    changes no result: the checks are judged in the order they were queued (a
    clause keeps its first worst decision), a check is judged at once when its
    clause has no result yet in the phase (so clauses are listed in the same
    order), and the owner flushes before the phase records anything else.
    """

    def __init__(self, report: Report, contract: Contract, evidence: Transcript) -> None:
        self.report, self.contract, self.evidence = report, contract, evidence
        self.queued: list[tuple[spaces_pb2.SpaceValue | None, spaces_pb2.MetaMap | None, int, str]] = []

    def observe(self, value: spaces_pb2.SpaceValue, lanes: int, where: str) -> None:
        decided = all(self.report.decided(clause) for clause in OBSERVATION_CLAUSES)
        if not decided or value.ByteSize() > LATER_MAX_BYTES:
            self.flush()
            observe(self.report, self.contract, value, lanes, where, self.evidence)
            return
        self._queue((value, None, lanes, where))

    def infos(self, infos: spaces_pb2.MetaMap, where: str) -> None:
        if not self.report.decided(WARNING_CLAUSE) or infos.ByteSize() > LATER_MAX_BYTES:
            self.flush()
            check_infos(self.report, infos, where, self.evidence)
            return
        self._queue((None, infos, 0, where))

    def _queue(self, check: tuple[spaces_pb2.SpaceValue | None, spaces_pb2.MetaMap | None, int, str]) -> None:
        self.queued.append(check)
        if len(self.queued) >= LATER_LIMIT:
            self.flush()

    def flush(self) -> None:
        """Judge every queued check, in the order queued."""
        queued, self.queued = self.queued, []
        for value, infos, lanes, where in queued:
            if value is not None:
                observe(self.report, self.contract, value, lanes, where, self.evidence)
            else:
                check_infos(self.report, infos, where, self.evidence)


def contract_unchanged(
    report: Report,
    first: env_pb2.HandshakeResponse,
    again: env_pb2.HandshakeResponse,
    expected: str,
    identical: str,
    changed: str,
    evidence: Transcript,
) -> None:
    """Whether a later Handshake offered the very env_contract of an earlier one, byte for byte."""
    record(report, judging.contract_stable(first, again, expected, identical, changed), evidence)


def finish_session(report: Report, session: JoinSession, evidence: Transcript) -> None:
    """Decide request-id echo for a session that is over."""
    missing = [] if session.ended is not None else session.unanswered()  # a failed stream leaves requests open
    record(report, judging.request_id_echo(session.stray, missing, len(session.answered)), evidence)
