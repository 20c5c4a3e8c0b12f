"""The plugrl-server suite: drives a PlugRL training server the way clients may, and checks it.

Each phase runs on connections of its own, closed properly before the next.
Clauses any connection or any answered infer may decide (the handshake, the
frame format, the metadata, the action's form) are declared with their judges
and listed once, under the first phase that opens a connection. feedback-timeout (run only when named,
as it waits over a minute) and stop (which ends the run) are opt-in.
"""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.plugrl.clauses import CATALOGUE
from checks.plugrl.judging import ACTION_CLAUSES, CONNECTION_CLAUSES
from checks.plugrl.messages import FAULTS
from checks.plugrl.options import EXCHANGE_BUDGET_STEPS, PlugRLServerOptions, RunState
from checks.plugrl.phase_errors import errors_phase
from checks.plugrl.phase_exchange import exchange_phase
from checks.plugrl.phase_feedback_timeout import feedback_timeout_phase
from checks.plugrl.phase_patience import patience_phase
from checks.plugrl.phase_reuse import PHASE_CLAUSES as REUSE_PHASE_CLAUSES
from checks.plugrl.phase_reuse import reuse_phase
from checks.plugrl.phase_scoping import scoping_phase
from checks.plugrl.phase_stop import stop_phase

PHASES = (
    Phase(
        "exchange",
        exchange_phase,
        (
            "plugrl.1.1.no-compression",
            "plugrl.5.4.nested-info",
            "plugrl.5.2.ragged-batches",
            "plugrl.4.3.feedback-set",
            "plugrl.1.1.large-frame",
            "plugrl.4.2.keeps-open",
            "plugrl.5.3.rows-follow-envs",
            *CONNECTION_CLAUSES,
            *ACTION_CLAUSES,
        ),
        "metadata, declined compression, ragged batches, differing feedback sets, a 2.25 MiB frame, "
        "the action's layout and rows",
        budget=EXCHANGE_BUDGET_STEPS,
    ),
    Phase(
        "errors",
        errors_phase,
        (
            "plugrl.7.2.resync-malformed",
            "plugrl.7.2.resync-wrong-type",
            "plugrl.7.2.resync-not-msgpack",
            "plugrl.7.2.resync-bad-ndarray",
            "plugrl.4.2.resync-double-infer",
            "plugrl.5.4.resync-unsplittable-info",
            "plugrl.7.2.bystander-survives",
            "plugrl.7.2.accepts-after-error",
            "plugrl.6.concurrent-clients",
        ),
        "seven malformed inputs, each closed with a resync while a bystander connection keeps being answered",
        budget=4.0 * len(FAULTS) + 2,
    ),
    Phase(
        "scoping",
        scoping_phase,
        ("plugrl.4.4.connection-scoped", "plugrl.6.concurrent-clients"),
        "two connections open side by side, both using env index 0",
    ),
    Phase(
        "reuse",
        reuse_phase,
        REUSE_PHASE_CLAUSES,
        "reuse-feedback-obs, when the server lists it: valid reuses answered, impossible and malformed ones "
        "resynced, an integer mask's fate recorded; when it does not, a reuse refused",
        budget=24.0,
    ),
    Phase(
        "patience",
        patience_phase,
        ("plugrl.7.3.late-feedback",),
        "a feedback sent `patience` seconds after its action",
        budget=5.0,
        waits=lambda options: options.patience,
    ),
    # Before stop, which ends the run; only when named, as it waits over a minute by default.
    Phase(
        "feedback-timeout",
        feedback_timeout_phase,
        ("plugrl.7.3.feedback-wait", "plugrl.7.3.feedback-timeout-close", "plugrl.7.3.feedback-timeout-enforced"),
        "an action left without feedback: the server waits about `feedback_timeout` seconds, then closes "
        "with 1001 Feedback timeout",
        default=False,
        budget=6.0,
        named_only=True,
        waits=lambda options: options.feedback_timeout,
    ),
    Phase(
        "stop",
        stop_phase,
        ("plugrl.7.1.stop-close",),
        "exchange until the server ends the run",
        default=False,
        budget=120.0,
    ),
)

SUITE = Suite(
    kind="plugrl-server",
    title="PlugRL training server",
    url_schemes=("ws",),
    options_model=PlugRLServerOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    spec_version="1",
    url_example="ws://127.0.0.1:8000",
    new_state=RunState,
)
