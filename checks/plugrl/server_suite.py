"""The plugrl-server suite: drives a PlugRL training server the way clients may, and checks it.

Phases, each on connections of its own, closed properly before the next:
exchange (compression, metadata, ragged batches, feedback sets, a big frame,
action layout and content), errors (seven malformed inputs, each with a
bystander connection), scoping (two connections side by side, both using
env 0), reuse (section 10.1; `reuse_phase.py`), patience (a late feedback)
and, opt-in, feedback-timeout (section 7.3, only when named;
`feedback_timeout_phase.py`) and stop.

A server may batch across connections and wait for every connected client
before it infers (SPEC 6), so whenever a phase holds two connections it
drives both; a connection waiting on a fault is closed before its bystander
is expected to be answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pydantic

from checks.core import Phase, PhaseContext, Suite, SuiteOptions, TargetUnreachable
from checks.plugrl import clauses as C
from checks.plugrl.codec import DEFAULT_MAX_FRAME, pack
from checks.plugrl.feedback_timeout_phase import PHASE_CLAUSES as FEEDBACK_TIMEOUT_CLAUSES
from checks.plugrl.feedback_timeout_phase import phase_feedback_timeout
from checks.plugrl.messages import FAULTS, feedback_message, infer_message
from checks.plugrl.probe import Abort, Probe, together
from checks.plugrl.reuse_phase import PHASE_CLAUSES, phase_reuse
from checks.plugrl.rows import check_rows
from checks.wire import Closed, HandshakeFailed, NoReply

# The exchange phase's deadline, in timeouts: it takes 14 steps with the default 5 exchanges,
# each of which a slow but conforming policy may spend most of a timeout on.
EXCHANGE_BUDGET_STEPS = 20.0


class PlugRLServerOptions(SuiteOptions):
    patience: float = pydantic.Field(
        5.0, ge=0, le=59, description="Seconds the patience phase waits before sending a feedback (SPEC allows 60)."
    )
    state_key: str = pydantic.Field("obs", min_length=1, description="Name of the states array sent to the policy.")
    state_dim: int = pydantic.Field(3, ge=1, le=4096, description="Width of the states array.")
    image_key: str | None = pydantic.Field(
        None, description="Name of a camera image to send too, if the policy needs one."
    )
    image_size: int = pydantic.Field(224, ge=1, le=2048, description="Height and width of that image.")
    exchanges: int = pydantic.Field(
        5,
        ge=1,
        le=1000,
        description=f"Plain infer/feedback rounds at the end of exchange (the phase has {EXCHANGE_BUDGET_STEPS:g} "
        "timeouts in all, so many rounds need a fast policy).",
    )
    feedback_timeout: float = pydantic.Field(
        C.FEEDBACK_TIMEOUT,
        gt=0,
        le=3600,
        description="Seconds the server is expected to wait for a feedback before it closes (SPEC 7.3: 60, "
        "unless raised on both sides); the feedback-timeout phase waits this plus a timeout.",
    )
    max_exchanges: int = pydantic.Field(
        2000, ge=1, le=1_000_000, description="Rounds the stop phase runs before it gives up waiting for the stop."
    )
    frame_cap: int = pydantic.Field(
        DEFAULT_MAX_FRAME, ge=1024 * 1024, le=1 << 30, description="Largest frame the checker accepts, in bytes."
    )
    api_key: pydantic.SecretStr | None = pydantic.Field(
        None, description="Sent as 'Authorization: Api-Key <key>' in every handshake (SPEC 1.2)."
    )


# Clauses any connection or any answered infer may decide.
CONNECTION_CLAUSES = (
    C.HANDSHAKE,
    C.SPEAKS_FIRST,
    C.BINARY_FRAMES,
    C.MSGPACK_MAP,
    C.NDARRAY_FORM,
    C.FEATURES_LIST,
    C.DECLARED_INTS,
    C.PROTOCOL_VERSION,
)
ACTION_CLAUSES = (
    C.METADATA_ONCE,
    C.ANSWERED_WITH_ACTION,
    C.ACTION_ARRAY,
    C.ACTION_NUMERIC,
    C.TIME_MAJOR,
    C.HORIZON_POSITIVE,
    C.ENV_IDS_FORM,
    C.ENV_IDS_ORDER,
    C.DECLARED_HORIZON,
    C.DECLARED_DIM,
    C.SAME_DTYPE,
    C.SAME_SHAPE,
    C.FINITE_VALUES,
)


def guarded(own: tuple[str, ...], body: Callable[[PhaseContext], Awaitable[None]]):
    """A phase that stops at its first dead end: its own undecided clauses become `error`."""

    async def run(ctx: PhaseContext) -> None:
        try:
            await body(ctx)
        except Abort as exc:
            ctx.report.error_undecided(own, f"not exercised: the phase stopped early ({exc})")

    run.__name__ = body.__name__
    return run


# ---------------------------------------------------------------- exchange


async def phase_exchange(ctx: PhaseContext) -> None:
    report, options = ctx.report, ctx.options
    offered = Probe(ctx, "offers permessage-deflate")
    try:
        await offered.connect(compression="deflate")
    except HandshakeFailed as exc:
        # Refusing a client that offers compression never negotiates it either.
        report.passed(C.NO_COMPRESSION, "the offer declined", f"the handshake was refused: {exc}", offered.transcript)
    else:
        assert offered.ws is not None
        report.check(
            "permessage-deflate" not in offered.ws.extensions,
            C.NO_COMPRESSION,
            "the offer declined",
            f"negotiated extensions: {offered.ws.extensions or 'none'}",
            offered.transcript,
        )
    finally:
        await offered.close()

    probe = Probe(ctx, "exchange")
    try:
        await probe.open()
        first = await probe.infer([0, 1, 2])
        # The done env carries nested per-env episode statistics in info.
        await probe.feedback([0, 1, 2], done=[True, False, False])
        await probe.infer([0, 1, 2], at_stake=C.NESTED_INFO)
        await probe.feedback([0, 1, 2])
        single = await probe.infer([0], at_stake=C.RAGGED_BATCHES)  # n goes 3 -> 1
        await probe.feedback([0])
        await probe.infer([0, 1, 2], at_stake=C.RAGGED_BATCHES)  # and 1 -> 3
        await probe.feedback([1, 2])  # env 0's chunk is still running
        reordered = await probe.infer([2, 1], at_stake=C.FEEDBACK_SET)
        await probe.feedback([0, 2, 1], done=[False, True, False])
        repeats = [await probe.cycle([0, 1, 2], at_stake=C.KEEPS_OPEN) for _ in range(options.exchanges)]
        check_rows(report, probe, first, repeats[-1], {(0,): single, (2, 1): reordered})
    finally:
        await probe.close()
    # Last, and as the first infer of a connection of its own: a frame cap fails this
    # clause alone, and a server that tires after some infers is not taken for one.
    big = Probe(ctx, "a 2.25 MiB infer")
    try:
        await big.open()
        await big.infer([0, 1, 2], at_stake=C.LARGE_FRAME, big=True)
        await big.feedback([0, 1, 2], at_stake=C.LARGE_FRAME)
    finally:
        await big.close()


# ---------------------------------------------------------------- errors


async def phase_errors(ctx: PhaseContext) -> None:
    options = ctx.options
    bystander: Probe | None = None
    try:
        for clause, what, after_infer, fault in FAULTS:
            if bystander is None:
                bystander = Probe(ctx, "bystander")
                await bystander.open()
            faulty = Probe(ctx, f"faulty: {what}")
            try:
                await faulty.open(alongside=True)
                if after_infer:
                    await together(faulty.infer([0, 1]), bystander.infer([0]))
                    await bystander.feedback([0])
                # The bystander asks meanwhile: a batching server may be waiting for it, and
                # gets until the faulty connection is closed, plus a deadline, to answer.
                meanwhile = bystander.cycle([0], at_stake=C.BYSTANDER_SURVIVES, timeout=2 * ctx.timeout)
                resync = faulty.fault(fault(options), clause, what)
                _, alive = await together(_went_through(resync), _went_through(meanwhile))
            finally:
                await faulty.close()
            if alive:  # and once more, now that the fault is certainly behind it
                alive = await _went_through(bystander.cycle([0], at_stake=C.BYSTANDER_SURVIVES))
            if not alive:
                await bystander.close()
                bystander = None
            await _new_connection_after(ctx, what)
    finally:
        if bystander is not None:
            await bystander.close()


async def _went_through(step: Awaitable[Any]) -> bool:
    """Whether a step went through; a failure is already recorded under its clause."""
    try:
        await step
    except Abort:
        return False
    return True


async def _new_connection_after(ctx: PhaseContext, what: str) -> None:
    fresh = Probe(ctx, f"new connection after {what}")
    try:
        await fresh.open(at_stake=C.ACCEPTS_AFTER_ERROR)
    except (TargetUnreachable, Abort) as exc:
        ctx.report.failed(
            C.ACCEPTS_AFTER_ERROR,
            f"a new connection after {what}, with metadata",
            f"it failed: {exc}",
            fresh.transcript,
        )
        raise Abort("the server takes no new connections") from None
    finally:
        await fresh.close()


# ---------------------------------------------------------------- scoping


async def phase_scoping(ctx: PhaseContext) -> None:
    first, second = Probe(ctx, "scoping A"), Probe(ctx, "scoping B")
    try:
        await first.open()
        await second.open(alongside=True)
        for done in (False, True, False):
            await together(
                first.infer([0, 1], at_stake=C.CONNECTION_SCOPED),
                second.infer([0], at_stake=C.CONNECTION_SCOPED),
            )
            await together(first.feedback([0, 1], done=[done, False]), second.feedback([0]))
    finally:
        await first.close()
        await second.close()


# ---------------------------------------------------------------- patience


async def phase_patience(ctx: PhaseContext) -> None:
    options = ctx.options
    probe = Probe(ctx, "late feedback")
    try:
        await probe.open()
        await probe.infer([0, 1])
        assert probe.ws is not None
        try:
            frame = await probe.ws.recv(options.patience)
        except NoReply:
            pass  # the quiet we wanted: nothing was due
        except Closed as closed:
            ctx.report.failed(
                C.LATE_FEEDBACK,
                f"the connection open through a {options.patience:g}s pause",
                f"closed during it: {closed}",
                probe.transcript,
            )
            return
        else:
            kind, shown = probe.decoder.summarize(frame)
            ctx.report.failed(
                C.LATE_FEEDBACK,
                "nothing from the server while the client steps",
                f"a {kind} frame: {shown}",
                probe.transcript,
            )
            return
        await probe.feedback([0, 1], at_stake=C.LATE_FEEDBACK)
        await probe.infer([0, 1], at_stake=C.LATE_FEEDBACK)
        await probe.feedback([0, 1])
    finally:
        await probe.close()


# ---------------------------------------------------------------- stop


async def phase_stop(ctx: PhaseContext) -> None:
    report, options = ctx.report, ctx.options
    probe = Probe(ctx, "until stop")
    try:
        await probe.open()
        assert probe.ws is not None
        for count in range(options.max_exchanges):
            try:
                await probe.ws.send(pack(infer_message(options, [0, 1, 2])), "infer [0, 1, 2]")
                await probe.ws.recv()
                done = [count % 5 == 4] * 3
                await probe.ws.send(pack(feedback_message(options, [0, 1, 2], done)), "feedback [0, 1, 2]")
            except Closed as closed:
                report.check(
                    closed.by == "target" and closed.code == C.GOING_AWAY and closed.reason == C.STOP_REASON,
                    C.STOP_CLOSE,
                    f"close 1001 {C.STOP_REASON!r}",
                    f"after {count} exchanges, {closed}",
                    probe.transcript,
                )
                return
            except NoReply as exc:
                report.failed(
                    C.STOP_CLOSE, "an answer or the stop", f"nothing arrived within {exc.timeout:g}s", probe.transcript
                )
                return
        report.failed(
            C.STOP_CLOSE,
            f"the stop within max_exchanges = {options.max_exchanges}",
            "the server was still answering",
            probe.transcript,
        )
    finally:
        await probe.close()


# ---------------------------------------------------------------- the suite


def _phase(
    name: str,
    body,
    own: tuple[str, ...],
    description: str,
    *,
    shared: tuple[str, ...] = (),
    default: bool = True,
    budget: float = 6.0,
    named_only: bool = False,
    waits=None,
) -> Phase:
    """A phase listing its own clauses; `shared` ones are decided on every connection, listed once."""
    return Phase(name, guarded(own, body), own + shared, description, default, budget, named_only, waits)


PHASES = (
    _phase(
        "exchange",
        phase_exchange,
        (
            C.NO_COMPRESSION,
            C.NESTED_INFO,
            C.RAGGED_BATCHES,
            C.FEEDBACK_SET,
            C.LARGE_FRAME,
            C.KEEPS_OPEN,
            C.ROWS_FOLLOW_ENVS,
        ),
        "metadata, declined compression, ragged batches, differing feedback sets, a 2.25 MiB frame, "
        "the action's layout and rows",
        shared=CONNECTION_CLAUSES + ACTION_CLAUSES,
        budget=EXCHANGE_BUDGET_STEPS,
    ),
    _phase(
        "errors",
        phase_errors,
        (
            C.RESYNC_MALFORMED,
            C.RESYNC_WRONG_TYPE,
            C.RESYNC_NOT_MSGPACK,
            C.RESYNC_BAD_NDARRAY,
            C.RESYNC_DOUBLE_INFER,
            C.RESYNC_UNSPLITTABLE_INFO,
            C.BYSTANDER_SURVIVES,
            C.ACCEPTS_AFTER_ERROR,
        ),
        "seven malformed inputs, each closed with a resync while a bystander connection keeps being answered",
        shared=(C.CONCURRENT_CLIENTS,),
        budget=4.0 * len(FAULTS) + 2,
    ),
    _phase(
        "scoping",
        phase_scoping,
        (C.CONNECTION_SCOPED, C.CONCURRENT_CLIENTS),
        "two connections open side by side, both using env index 0",
    ),
    _phase(
        "reuse",
        phase_reuse,
        PHASE_CLAUSES,
        "reuse-feedback-obs, when the server lists it: valid reuses answered, impossible and malformed ones "
        "resynced; when it does not, a reuse refused",
        shared=(C.CONCURRENT_CLIENTS,),
        budget=24.0,
    ),
    _phase(
        "patience",
        phase_patience,
        (C.LATE_FEEDBACK,),
        "a feedback sent `patience` seconds after its action",
        budget=5.0,
        waits=lambda options: options.patience,
    ),
    # Before stop, which ends the run; only when named, as it waits over a minute by default.
    _phase(
        "feedback-timeout",
        phase_feedback_timeout,
        FEEDBACK_TIMEOUT_CLAUSES,
        "an action left without feedback: the server waits about `feedback_timeout` seconds, then closes "
        "with 1001 Feedback timeout",
        default=False,
        budget=6.0,
        named_only=True,
        waits=lambda options: options.feedback_timeout,
    ),
    _phase("stop", phase_stop, (C.STOP_CLOSE,), "exchange until the server ends the run", default=False, budget=120.0),
)

SUITE = Suite(
    kind="plugrl-server",
    title="PlugRL training server",
    url_schemes=("ws",),
    options_model=PlugRLServerOptions,
    phases=PHASES,
    catalogue=C.CATALOGUE,
    spec_version="1",
    url_example="ws://127.0.0.1:8000",
)

__all__ = ["SUITE", "PlugRLServerOptions"]
