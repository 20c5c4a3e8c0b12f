"""The rlmesh suite's message rules as pure functions: an observed response or exchange in, Decisions out.

Nothing here holds a channel or a stream: the phases make the calls
(`client`, `session`) and record what these judges decide, and the same
judges can read the messages of a recorded exchange. This module holds the
Handshake's rules and those every Join exchange shares; `judging_episodes`,
`judging_lanes` and `judging_errors` hold those of the other phases.
"""

from __future__ import annotations

from typing import Any

import grpc

from checks.core import NoReply, seconds
from checks.decision import Decision, Judged, check, error, info, missed, passed
from checks.evidence import truncate
from checks.rlmesh import codec
from checks.rlmesh.client import JoinEnded, OverLimit, RpcFailed, StrayResponse, error_text, unknown_tags
from checks.rlmesh.proto import core_pb2, env_pb2, spaces_pb2

USABLE_AUTORESET = {core_pb2.AUTORESET_MODE_NEXT_STEP: "NEXT_STEP", core_pb2.AUTORESET_MODE_DISABLED: "DISABLED"}
WARNING_KEY = "rlmesh.conformance.warning"
CONTRACT_CLAUSES = (
    "rlmesh.h1.num-envs",
    "rlmesh.h1.autoreset-mode",
    "rlmesh.h1.spaces",
    "rlmesh.h1.render-mode-declared",
)
COMPATIBLE = "compatible=true with an env_contract"
REFUSED_GENERATION = "compatible=false in a HandshakeResponse"
INVALID_ARGUMENT = "gRPC INVALID_ARGUMENT"
VALID_ANSWER = "the response to a valid request"


# ---------------------------------------------------------------- Reading a Join response


def kind_of(response: env_pb2.JoinResponse) -> str:
    return response.WhichOneof("kind") or "(none)"


def describe(response: env_pb2.JoinResponse) -> str:
    if kind_of(response) == "error":
        return f"error {error_text(response.error)}"
    return f"a {kind_of(response)} response"


def recoverable(response: env_pb2.JoinResponse, *codes: int) -> bool:
    return kind_of(response) == "error" and response.error.is_recoverable and response.error.code in codes


def code_name(code: int) -> str:
    return env_pb2.EnvErrorCode.Name(code).removeprefix("ENV_ERROR_CODE_")


# ---------------------------------------------------------------- Handshake


def handshake(response: env_pb2.HandshakeResponse) -> list[Decision]:
    """What the first Handshake in rlmesh-wire-v1 says: compatible, who answers, and the env contract it offers."""
    base, has_contract = response.base, response.HasField("env_contract")
    decisions = [
        check(
            base.compatible and has_contract,
            "rlmesh.h1.compatible",
            expected=COMPATIBLE,
            actual=f"compatible={base.compatible}, env_contract {'present' if has_contract else 'absent'}, "
            f"error_message={truncate(base.error_message, 120)!r}",
        ),
        check(
            bool(base.peer_info.component.strip()),
            "rlmesh.h1.peer-info",
            expected="a non-empty component",
            actual=f"component={truncate(base.peer_info.component, 60)!r}",
        ),
    ]
    if not has_contract:
        decisions += [
            error(clause, "not judged: the Handshake returned no env_contract") for clause in CONTRACT_CLAUSES
        ]
    return [*decisions, *contract(response.env_contract), unknown_fields(response)]


def handshake_latency(took: float) -> Decision:
    return info("rlmesh.o1.handshake-latency", actual=f"first Handshake took {seconds(took)}")


def health(answer: str) -> Decision:
    return info("rlmesh.o1.health", actual=f"health for service '': {answer}")


def handshake_failed(exc: Exception) -> Decision:
    return missed("rlmesh.h1.compatible", expected=COMPATIBLE, actual=str(exc))


def contract(declared: core_pb2.EnvContract) -> list[Decision]:
    """num_envs, the autoreset mode, the two spaces and the render mode of an env contract."""
    mode = (
        core_pb2.AutoresetMode.Name(declared.autoreset_mode)
        if declared.autoreset_mode in core_pb2.AutoresetMode.values()
        else str(declared.autoreset_mode)
    )
    return [
        check(
            declared.num_envs >= 1,
            "rlmesh.h1.num-envs",
            expected="num_envs >= 1",
            actual=f"num_envs={declared.num_envs}",
        ),
        check(
            declared.autoreset_mode in USABLE_AUTORESET,
            "rlmesh.h1.autoreset-mode",
            expected="NEXT_STEP or DISABLED",
            actual=f"autoreset_mode={mode}",
        ),
        spaces(declared.spec),
        render_mode(declared),
    ]


def spaces(spec: core_pb2.EnvSpec) -> Decision:
    """Both spaces present and well formed; a space too large for the checker is not judged, unless one is broken."""
    problems = []
    for name in ("action_space", "observation_space"):
        if not spec.HasField(name):
            problems.append(f"{name} absent")
            continue
        try:
            space = codec.space_from_proto(getattr(spec, name), name)
            problems.append(f"{name} {space.describe()}: ok")
        except codec.BeyondChecker as exc:
            problems.append(f"not judged: {exc}")
        except codec.ContractError as exc:
            problems.append(f"broken: {exc}")
    unjudgeable = [p for p in problems if p.startswith("not judged")]
    broken = [p for p in problems if not p.endswith(": ok") and p not in unjudgeable]
    if unjudgeable and not broken:
        return error("rlmesh.h1.spaces", "; ".join(problems))
    return check(
        not broken, "rlmesh.h1.spaces", expected="both spaces present and well-formed", actual="; ".join(problems)
    )


def render_mode(declared: core_pb2.EnvContract) -> Decision:
    if not declared.render_mode:
        return passed("rlmesh.h1.render-mode-declared", actual="no render_mode declared")
    listed = codec.map_to_python(declared.spec.metadata).get("render_modes")
    return check(
        isinstance(listed, list) and declared.render_mode in listed,
        "rlmesh.h1.render-mode-declared",
        expected="render_mode among metadata render_modes",
        actual=f"render_mode={truncate(declared.render_mode, 40)!r}, render_modes={truncate(repr(listed), 120)}",
    )


def unknown_fields(response: env_pb2.HandshakeResponse) -> Decision:
    return info(
        "rlmesh.h5.unknown-fields",
        actual=f"undeclared HandshakeResponse.base tags {unknown_tags(response.base)}, top-level tags "
        f"{unknown_tags(response)}; capabilities {dict(response.base.capabilities)}",
    )


def generation_gate(generation: str, other: env_pb2.HandshakeResponse | Exception) -> Decision:
    """Another generation is turned away in-band: compatible=false, an error_message, no contract."""
    if isinstance(other, Exception):
        return missed(
            "rlmesh.h2.generation-gate", expected=REFUSED_GENERATION, actual=f"generation {generation!r}: {other}"
        )
    return check(
        not other.base.compatible and bool(other.base.error_message.strip()) and not other.HasField("env_contract"),
        "rlmesh.h2.generation-gate",
        expected="compatible=false, an error_message, no env_contract",
        actual=f"generation {generation!r}: compatible={other.base.compatible}, "
        f"error_message={truncate(other.base.error_message, 120)!r}, "
        f"env_contract {'present' if other.HasField('env_contract') else 'absent'}",
    )


def missing_base(status: grpc.StatusCode | None, refusal: str = "") -> Decision:
    """A Handshake without `base` is refused with INVALID_ARGUMENT (`status` None: it was answered)."""
    if status is None:
        return missed("rlmesh.h2.missing-base", expected=INVALID_ARGUMENT, actual="a HandshakeResponse")
    return check(
        status is grpc.StatusCode.INVALID_ARGUMENT, "rlmesh.h2.missing-base", expected=INVALID_ARGUMENT, actual=refusal
    )


def contract_stable(
    first: env_pb2.HandshakeResponse, again: env_pb2.HandshakeResponse, expected: str, identical: str, changed: str
) -> Decision:
    """Whether a later Handshake offered the very env_contract of an earlier one, byte for byte."""
    before = first.env_contract.SerializeToString(deterministic=True)
    same = again.env_contract.SerializeToString(deterministic=True) == before
    return check(same, "rlmesh.h3.contract-stable", expected=expected, actual=identical if same else changed)


# ---------------------------------------------------------------- Join exchanges


def answered(response: env_pb2.JoinResponse, kind: str, where: str) -> Decision:
    """A valid request answered with its own kind of response."""
    return check(
        kind_of(response) == kind,
        "rlmesh.s1.answered",
        expected=f"a {kind} response",
        actual=f"{where}: {describe(response)}",
    )


def unanswered(actual: str, expected: str = VALID_ANSWER) -> Decision:
    """A valid request got something other than its response (an error, an end, a silence)."""
    return missed("rlmesh.s1.answered", expected=expected, actual=actual)


def answered_with(response: env_pb2.JoinResponse, kind: str, where: str) -> Judged[None] | None:
    """None when a valid request got its own kind of response; else its refusal (passes are left to `answered`)."""
    return None if kind_of(response) == kind else refused(f"{where}: {describe(response)}")


def refused(actual: str) -> Judged[None]:
    """A valid request refused (`unanswered`), and so the end of the exchanges that needed its answer."""
    return Judged(None, [unanswered(actual)], f"a valid request was refused (see rlmesh.s1.answered): {actual}")


def broken_off(exc: Exception) -> str:
    """Why a session's exchanges stopped, for the clauses left undecided."""
    if isinstance(exc, OverLimit):
        return f"a message exceeded the max_message_bytes option: {exc}"
    if isinstance(exc, codec.ValueMismatch):
        return f"an observation does not decode (see rlmesh.v2.obs-layout): {exc}"
    return str(exc)


def opening_failed(exc: RpcFailed | JoinEnded | NoReply) -> Judged[None]:
    """What a Handshake or a valid request that failed outside any session's own handling proves, and the stop."""
    if isinstance(exc, RpcFailed):
        return Judged(None, [], f"the Handshake failed: {exc}")
    if isinstance(exc, StrayResponse):
        echo = missed("rlmesh.e5.request-id-echo", expected="the response echoing the request's id", actual=str(exc))
        return Judged(None, [echo], str(exc))
    if isinstance(exc, JoinEnded) and exc.status is grpc.StatusCode.FAILED_PRECONDITION:
        # Join retries a refusal while the previous session winds down, so this one outlasted that.
        refusal = missed(
            "rlmesh.c1.reopen",
            expected="a new session while rlconform holds no other",
            actual=f"refused even after the previous session had time to wind down: {exc}",
        )
        return Judged(None, [refusal], str(exc))
    if isinstance(exc, OverLimit):
        return Judged(None, [], broken_off(exc))
    return refused(f"a valid request went unanswered: {exc}")


def recoverable_error(response: env_pb2.JoinResponse, clause_id: str, code: int, where: str) -> Decision:
    """`response` is the recoverable error `code` that `clause_id` asks for."""
    return check(
        recoverable(response, code),
        clause_id,
        expected=f"a recoverable {code_name(code)}",
        actual=f"{where}: {describe(response)}",
    )


def fatal_end(end: grpc.StatusCode | None) -> Decision:
    """After a non-recoverable error the stream ends (`end` its status; None: it stayed open)."""
    if end is None:
        return missed(
            "rlmesh.e2.fatal-ends-stream",
            expected="the end of the stream",
            actual="the stream stayed open after a non-recoverable error",
        )
    return passed("rlmesh.e2.fatal-ends-stream", actual=f"the stream ended with gRPC {end.name}")


def unknown_join_tags(tags: set[int]) -> Decision:
    return info("rlmesh.h5.unknown-fields", actual=f"undeclared JoinResponse tags seen: {sorted(tags)}")


def request_id_echo(stray: list[str], unanswered: list[str], answered: int) -> Decision:
    """One response per request, ids echoed: no stray ids, and (on a stream that did not fail) none unanswered."""
    problems = []
    if stray:
        problems.append(f"responses with unknown or repeated ids {[truncate(s, 30) for s in stray[:5]]}")
    if unanswered:
        problems.append(f"requests never answered {unanswered[:5]}")
    return check(
        not problems,
        "rlmesh.e5.request-id-echo",
        expected="one response per request, ids echoed",
        actual="; ".join(problems) or f"{answered} responses matched their requests",
    )


def observation(
    space: codec.Space, value: spaces_pb2.SpaceValue, lanes: int, where: str
) -> tuple[list[Decision], list[Any] | None]:
    """One observation's layout and domain, and its decoded leaves (None when it does not decode)."""
    try:
        decoded = codec.decode(space, value, lanes)
    except codec.ValueMismatch as exc:
        layout = missed(
            "rlmesh.v2.obs-layout", expected=f"{space.describe()} for {lanes} lane(s)", actual=f"{where}: {exc}"
        )
        return [layout], None
    reason = codec.outside(space, decoded)
    return [
        passed("rlmesh.v2.obs-layout", actual=f"{where}: {lanes} lane(s) decoded"),
        check(
            reason is None,
            "rlmesh.v2.obs-in-space",
            expected=f"inside {space.describe()}",
            actual=f"{where}: {reason}" if reason else f"{where}: inside",
        ),
    ], decoded


def conformance_warnings(infos: spaces_pb2.MetaMap | None, where: str) -> Decision:
    """No observation conformance warning among the server's infos.

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
    return check(
        not observed,
        "rlmesh.v2.no-conformance-warning",
        expected="no observation conformance warning",
        actual=f"{where}: {truncate(repr(observed), 300)}" if observed else f"{where}: none",
    )
