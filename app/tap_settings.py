"""A hosted tap run's settings: what `app.crud` queues for a tap target, and the spec its tap runs with.

Apart from `app.tap_runs` (which stores taps through `app.crud`) so that `app.crud` can ask for
them without an import circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from app.models import Target
from app.models_tap import TapTarget
from app.refusals import RunConflict, TargetInvalid, live_run_ids

if TYPE_CHECKING:  # the tap's packages load where a tap is created or runs, not with every import of the app
    from checks.tap.run import TapSpec


def spec_for(kind: str, tap: TapTarget) -> TapSpec:
    from checks.tap.kinds import tap_spec

    return tap_spec(kind, {str(k): str(v) for k, v in tap.tap_options.items()})


def tap_run_settings(
    session: Session,
    target: Target,
    tap: TapTarget,
    phases: Sequence[str] | None,
    options: dict[str, Any] | None,
    errors: list[dict[str, Any]],
) -> tuple[list[str], dict[str, Any], int]:
    """A hosted tap run's phases (none: the traffic decides its clauses), options (the tap's) and clause count.

    TargetInvalid for phases or option overrides, after `errors` found before; RunConflict while another run of
    the tap is queued or running (a tap watches one stream at a time: a second run would contend for its
    listen address and clients)."""
    if phases:
        errors.append({"loc": ["phases"], "msg": "a tap run has no phases: the traffic it watches decides its clauses"})
    if options:
        errors.append({"loc": ["options"], "msg": "a tap's options are its target's (tap.options), not a run's"})
    if errors:
        raise TargetInvalid(errors)
    live = live_run_ids(session, target)
    if live:
        message = f"{target.name} is a tap and run {min(live)} is already watching it; stop that run first"
        raise RunConflict([{"loc": ["target"], "msg": message}])
    return [], dict(tap.tap_options), len(spec_for(target.kind, tap).catalogue)
