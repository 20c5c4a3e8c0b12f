"""Targets and runs: validation, creation, updates, deletion, queueing and cancelling.

Routes and pages call these helpers, so both get the same rules and the
same field-pathed error messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pydantic
from sqlalchemy import delete, update
from sqlmodel import Session, col, select

from app.models import (
    ENDED_STATUSES,
    LABEL_PATTERN,
    ClauseResultRow,
    ParityRun,
    Run,
    RunAttempt,
    RunPublic,
    RunStatus,
    Schedule,
    ScheduleIn,
    Target,
    TargetCreate,
    TargetPublic,
    TargetUpdate,
    TranscriptRow,
    Webhook,
    WebhookDelivery,
    stored_id,
    utcnow,
)
from app.models_tap import TapTarget, TapWindow
from app.netpolicy import NetworkRefused, check_host
from app.redaction import REDACTED, redact_options, redact_url, secret_fields, unmask_url

# Re-exported: callers name them crud.TargetInvalid, crud.RunConflict, crud.live_run_ids.
from app.refusals import RunConflict as RunConflict
from app.refusals import TargetInvalid as TargetInvalid
from app.refusals import live_run_ids as live_run_ids
from app.tap_settings import tap_run_settings
from app.textsafe import unstorable_paths
from checks.core import HARNESS_VERSION, Gate, Suite, SuiteOptions
from checks.registry import find_suite, kind_names

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # fullmatch: `$` would admit "name\n"
RESERVED_NAMES = {"new"}  # page paths a target name would shadow (`/targets/new` is the add form)
MAX_EXPECTED_FAILURES = 1000


def _error(loc: Sequence[str | int], msg: str) -> dict[str, Any]:
    return {"loc": list(loc), "msg": msg}


def _pydantic_errors(exc: pydantic.ValidationError, prefix: Sequence[str | int] = ()) -> list[dict[str, Any]]:
    errors = []
    for error in exc.errors():
        msg = "unknown option" if error["type"] == "extra_forbidden" else error["msg"]
        errors.append(_error([*prefix, *error["loc"]], msg))
    return errors


def require_storable(values: dict[str, Any]) -> None:
    """TargetInvalid, with field paths, when any string in `values` cannot be stored."""
    errors = [
        _error(loc, "contains a NUL character or an unpaired surrogate, which cannot be stored")
        for loc in unstorable_paths(values)
    ]
    if errors:
        raise TargetInvalid(errors)


def target_create_from(values: dict[str, Any]) -> TargetCreate:
    """A `TargetCreate` from loose input (a form), or TargetInvalid with field paths."""
    try:
        return TargetCreate.model_validate(values)
    except pydantic.ValidationError as exc:
        raise TargetInvalid(_pydantic_errors(exc)) from None


def target_update_from(values: dict[str, Any]) -> TargetUpdate:
    try:
        return TargetUpdate.model_validate(values)
    except pydantic.ValidationError as exc:
        raise TargetInvalid(_pydantic_errors(exc)) from None


# ---------------------------------------------------------------- options


def _options_to_store(parsed: SuiteOptions) -> dict[str, Any]:
    """The options a user set, as JSON, with secrets kept in the clear for the runner."""
    stored = parsed.model_dump(mode="json", exclude_unset=True)
    for name in stored:
        value = getattr(parsed, name)
        if isinstance(value, (pydantic.SecretStr, pydantic.SecretBytes)):
            secret = value.get_secret_value()
            stored[name] = secret.decode() if isinstance(secret, bytes) else secret
    return stored


def _keep_masked_secrets(suite: Suite, new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """An edit that sends back a masked secret keeps the stored one."""
    merged = dict(new)
    for name in secret_fields(suite.options_model):
        if merged.get(name) == REDACTED and name in old:
            merged[name] = old[name]
    return merged


def run_url(run: Run, target: Target) -> str:
    """The URL a run connects to: its snapshot, with the password taken from the target."""
    return unmask_url(run.url, target.url)


def run_values(options_model: type[SuiteOptions], run: Run, target: Target) -> dict[str, Any]:
    """The option values a run executes with: its snapshot (secrets masked), the secrets taken from `target`."""
    values = {name: value for name, value in run.options.items() if value is not None}
    for name in secret_fields(options_model):
        values.pop(name, None)
        if target.options.get(name) not in (None, ""):
            values[name] = target.options[name]
    return values


def run_options(suite: Suite, run: Run, target: Target) -> SuiteOptions:
    """The options a run executes with: its snapshot, with secrets taken from the target."""
    return suite.parse_options(run_values(suite.options_model, run, target))


# ---------------------------------------------------------------- expected failures


def expected_failure_errors(suite: Suite, clause_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One error per id that is neither a clause of the suite nor an alias of one."""
    if len(clause_ids) > MAX_EXPECTED_FAILURES:
        return [_error(["expected_failures"], f"at most {MAX_EXPECTED_FAILURES} clause ids")]
    return [
        _error(["expected_failures", index], f"{clause_id!r} is not a clause of {suite.kind}")
        for index, clause_id in enumerate(clause_ids)
        if not suite.catalogue.knows(clause_id)
    ]


def effective_expected_failures(suite: Suite, *lists: Sequence[str]) -> list[str]:
    """The union of `lists` under current clause ids (an alias counts as the clause it names)."""
    return list(dict.fromkeys(suite.catalogue.resolve(clause_id) for ids in lists for clause_id in ids))


# ---------------------------------------------------------------- targets


def validate_target(
    session: Session, data: TargetCreate, allowed_networks: Sequence[str], existing_id: int | None = None
) -> tuple[str, dict[str, Any]]:
    """Every rule a target must meet; returns the normalised URL and options to store."""
    name, kind, url, gate, options = data.name, data.kind, data.url, data.gate, data.options
    expected_failures, schedule_minutes = data.expected_failures, data.schedule_minutes
    errors: list[dict[str, Any]] = []
    if not NAME_PATTERN.fullmatch(name or "") or len(name) > 64:
        errors.append(_error(["name"], "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"))
    elif name.lower() in RESERVED_NAMES:
        errors.append(_error(["name"], f"{name!r} is reserved for a page of the dashboard"))
    else:
        clash = session.exec(select(Target.id).where(Target.name == name)).first()
        if clash is not None and clash != existing_id:
            errors.append(_error(["name"], f"a target named {name!r} already exists"))
    if gate not in {str(g) for g in Gate}:
        errors.append(_error(["gate"], f"gate must be one of {', '.join(str(g) for g in Gate)}"))
    if schedule_minutes is not None and not 1 <= schedule_minutes <= 7 * 24 * 60:
        errors.append(_error(["schedule_minutes"], "schedule must be between 1 minute and 1 week, or empty"))
    if not re.fullmatch(LABEL_PATTERN, data.worker_label or ""):
        errors.append(_error(["worker_label"], "use 1-64 letters, digits, '.', '_' or '-', starting with one"))

    stored_options = dict(options)
    if kind not in kind_names():
        errors.append(_error(["kind"], f"unknown kind {kind!r}; known kinds: {', '.join(kind_names())}"))
        raise TargetInvalid(errors)
    suite = find_suite(kind)
    if suite is None:
        errors.append(_error(["kind"], f"{kind} is unavailable on this server: its optional dependencies are missing"))
        raise TargetInvalid(errors)

    if suite.listen and url.strip():
        errors.append(_error(["url"], f"{kind} runs listen for the client they grade: leave the URL empty"))
    elif suite.listen:
        url = ""  # where to connect is announced when the run starts (option `listen` fixes HOST:PORT)
    else:
        url = _checked_url(suite, url, allowed_networks, errors)
    try:
        stored_options = _options_to_store(suite.parse_options(options))
    except pydantic.ValidationError as exc:
        errors.extend(_pydantic_errors(exc, ["options"]))
    errors.extend(expected_failure_errors(suite, expected_failures))
    if errors:
        raise TargetInvalid(errors)
    return url, stored_options


def _checked_url(suite: Suite, url: str, allowed_networks: Sequence[str], errors: list[dict[str, Any]]) -> str:
    """The normalised URL of a target the runs connect to; what is wrong goes to `errors`."""
    try:
        url = suite.validate_url(url)
    except ValueError as exc:
        errors.append(_error(["url"], str(exc)))
        return url
    host, port = suite.host_port(url)
    try:
        check_host(host, port, allowed_networks)
    except NetworkRefused as exc:
        errors.append(_error(["url"], str(exc)))
    return url


def create_target(session: Session, data: TargetCreate, allowed_networks: Sequence[str]) -> Target:
    """Validate and store a new target; its URL must lie in `allowed_networks` (empty allows any)."""
    require_storable(data.model_dump())
    url, options = validate_target(session, data, allowed_networks)
    target = Target(
        name=data.name,
        kind=data.kind,
        url=url,
        description=data.description,
        gate=data.gate,
        schedule_minutes=data.schedule_minutes,
        worker_label=data.worker_label,
        options=options,
        expected_failures=list(dict.fromkeys(data.expected_failures)),
    )
    session.add(target)
    session.flush()
    sync_interval_schedule(session, target)
    session.commit()
    session.refresh(target)
    return target


def sync_interval_schedule(session: Session, target: Target) -> None:
    """The target's `schedule_minutes` as its row in the schedule table (a cron schedule is set apart)."""
    schedule = session.exec(select(Schedule).where(Schedule.target_id == target.id)).first()
    if target.schedule_minutes is None:
        if schedule is not None and schedule.cron is None:
            session.delete(schedule)
        return
    schedule = schedule or Schedule(target_id=stored_id(target))
    schedule.cron, schedule.interval_seconds = None, target.schedule_minutes * 60
    session.add(schedule)


def set_schedule(session: Session, target: Target, data: ScheduleIn | None) -> Schedule | None:
    """Replace the target's schedule (None removes it); a cron expression or an interval, not both."""
    from croniter import croniter

    existing = session.exec(select(Schedule).where(Schedule.target_id == target.id)).first()
    if existing is not None:
        session.delete(existing)
        session.flush()
    target.schedule_minutes = None
    if data is None:
        session.add(target)
        session.commit()
        return None
    if (data.cron is None) == (data.interval_seconds is None):
        raise TargetInvalid([_error(["cron"], "give either a cron expression or an interval, not both")])
    if data.cron is not None and not croniter.is_valid(data.cron):
        raise TargetInvalid([_error(["cron"], f"{data.cron!r} is not a cron expression")])
    schedule = Schedule(target_id=stored_id(target), **data.model_dump())
    if data.interval_seconds is not None and data.interval_seconds % 60 == 0:
        target.schedule_minutes = data.interval_seconds // 60
    session.add_all([schedule, target])
    session.commit()
    session.refresh(schedule)
    return schedule


def update_target(session: Session, target: Target, data: TargetUpdate, allowed_networks: Sequence[str]) -> Target:
    """Apply the fields `data` sets; a kind change revalidates URL, options and expected failures."""
    changes = data.model_dump(exclude_unset=True)
    require_storable(changes)
    # An empty kind, URL or gate keeps the stored one, as does null for any field but the schedule (null: none).
    kept = {name: value for name, value in changes.items() if name == "schedule_minutes" or value not in (None, "")}
    if isinstance(kept.get("url"), str):
        kept["url"] = unmask_url(kept["url"], target.url)  # a masked password sent back keeps the stored one
    # Not validated by pydantic here: `validate_target` reports every broken rule with its field path.
    merged = TargetCreate.model_construct(**(target.model_dump(include=set(TargetCreate.model_fields)) | kept))
    if "options" in kept and merged.kind == target.kind:
        suite = find_suite(merged.kind)
        if suite is not None:
            merged.options = _keep_masked_secrets(suite, merged.options, target.options)
    url, stored_options = validate_target(session, merged, allowed_networks, existing_id=target.id)
    target.kind, target.url, target.gate = merged.kind, url, merged.gate
    target.options = stored_options
    target.expected_failures = list(dict.fromkeys(merged.expected_failures))
    target.schedule_minutes = merged.schedule_minutes
    target.worker_label = merged.worker_label
    if changes.get("description") is not None:
        target.description = changes["description"][:2000]
    target.updated_at = utcnow()
    session.add(target)
    if "schedule_minutes" in changes:
        sync_interval_schedule(session, target)
    session.commit()
    session.refresh(target)
    return target


def delete_runs(session: Session, run_ids: Sequence[int | None]) -> None:
    if not run_ids:
        return
    session.exec(delete(ClauseResultRow).where(col(ClauseResultRow.run_id).in_(run_ids)))
    session.exec(delete(ParityRun).where(col(ParityRun.run_id).in_(run_ids)))
    session.exec(delete(TapWindow).where(col(TapWindow.run_id).in_(run_ids)))
    session.exec(delete(RunAttempt).where(col(RunAttempt.run_id).in_(run_ids)))
    session.exec(delete(WebhookDelivery).where(col(WebhookDelivery.run_id).in_(run_ids)))
    session.exec(delete(TranscriptRow).where(col(TranscriptRow.run_id).in_(run_ids)))
    session.exec(delete(Run).where(col(Run.id).in_(run_ids)))


def delete_target(session: Session, target: Target) -> None:
    """Delete the target with its runs, results and transcripts (cancel live runs first: `Runner.delete_target`)."""
    run_ids = list(session.exec(select(Run.id).where(Run.target_id == target.id)))
    delete_runs(session, run_ids)
    webhook_ids = list(session.exec(select(Webhook.id).where(Webhook.target_id == target.id)))
    if webhook_ids:
        session.exec(delete(WebhookDelivery).where(col(WebhookDelivery.webhook_id).in_(webhook_ids)))
    session.exec(delete(Webhook).where(col(Webhook.target_id) == target.id))
    session.exec(delete(Schedule).where(col(Schedule.target_id) == target.id))
    session.exec(delete(TapTarget).where(col(TapTarget.target_id) == target.id))
    session.delete(target)
    session.commit()


def target_public(target: Target) -> TargetPublic:
    data = target.model_dump()
    data["url"] = redact_url(target.url)
    data["options"] = redact_options(target.kind, target.options)
    return TargetPublic.model_validate(data)


# ---------------------------------------------------------------- runs


def enqueue_run(
    session: Session,
    target: Target,
    *,
    phases: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    expected_failures: Sequence[str] = (),
    trigger: str = "api",
    scheduled_for: datetime | None = None,
    include_optional: bool = False,
) -> Run:
    """Queue a run of the target's suite; option overrides go on top of the target's options.

    The run keeps a redacted snapshot of the options it will use, and as its
    expected failures the target's plus `expected_failures`, under current
    clause ids, so every reader judges the run alike. Call `Runner.wake()` afterwards.
    When the session carries a `requeue` hook (workers mode), the run's job is
    deferred in the same transaction.
    """
    require_storable(
        {
            "phases": list(phases or []),
            "options": dict(options or {}),
            "expected_failures": list(expected_failures),
            "trigger": trigger,
        }
    )
    suite = find_suite(target.kind)
    if suite is None:
        raise TargetInvalid([_error(["kind"], f"{target.kind} is unavailable on this server")])
    errors = expected_failure_errors(suite, expected_failures)  # reported with the settings' errors, if any
    tap = session.get(TapTarget, target.id) if target.id is not None else None
    if tap is not None:
        selected, snapshot, total = tap_run_settings(session, target, tap, phases, options, errors)
    else:
        selected, snapshot = _suite_run_settings(suite, target, phases, options, include_optional, errors)
        total = _expected_total(suite)
    run = Run(
        target_id=stored_id(target),
        status=RunStatus.QUEUED,
        phases=selected,
        options=snapshot,
        kind=target.kind,
        url=redact_url(target.url),  # the runner takes the password from the target, as it does secret options
        gate=Gate(target.gate),
        expected_failures=effective_expected_failures(suite, target.expected_failures, expected_failures),
        harness_version=HARNESS_VERSION,
        spec_version=suite.spec_version,
        trigger=trigger[:16],
        total_clauses=total,
        counts={},
        worker_label=target.worker_label,
        scheduled_for=scheduled_for,
    )
    session.add(run)
    requeue = session.info.get("requeue")
    if requeue is not None:
        requeue(session, run)
    session.commit()
    session.refresh(run)
    return run


def _suite_run_settings(
    suite: Suite,
    target: Target,
    phases: Sequence[str] | None,
    options: dict[str, Any] | None,
    include_optional: bool,
    errors: list[dict[str, Any]],
) -> tuple[list[str], dict[str, Any]]:
    """The phases a suite run selects and the redacted snapshot of its options; TargetInvalid names what is
    wrong, after `errors` found before."""
    selected: list[str] = []
    try:
        selected = [phase.name for phase in suite.select(list(phases) if phases else None, include_optional)]
    except ValueError as exc:
        errors.append(_error(["phases"], str(exc)))
    overrides = dict(options or {})
    for name in sorted(secret_fields(suite.options_model)):
        # A run keeps only a redacted snapshot and takes secrets from its target, so an override would be lost.
        if overrides.get(name) not in (None, REDACTED):
            errors.append(_error(["options", name], "a secret cannot be overridden for one run; set it on the target"))
    overrides = _keep_masked_secrets(suite, overrides, target.options)
    try:
        parsed = suite.parse_options({**target.options, **overrides})
    except pydantic.ValidationError as exc:
        errors.extend(_pydantic_errors(exc, ["options"]))
    if errors:
        raise TargetInvalid(errors)
    return selected, redact_options(target.kind, parsed.model_dump(mode="json"))


def _expected_total(suite: Suite) -> int:
    """How many clauses the run will decide, for its progress bar: every phase's, selected or skipped.

    A phase may decide clauses it does not declare; a finished run's total is what it decided.
    """
    return len({clause_id for phase in suite.phases for clause_id in phase.clauses})


def cancel_run(session: Session, run: Run, message: str = "cancelled") -> Run:
    """Mark a run that is not executing in this process as cancelled; ended runs stay as they are.

    A run executing here is cancelled through `Runner.cancel(run_id)`,
    which keeps its decided clauses and then records the status.
    """
    if run.status in ENDED_STATUSES:
        return run
    session.exec(
        update(Run)
        .where(col(Run.id) == run.id, col(Run.status).in_([RunStatus.QUEUED, RunStatus.RUNNING]))
        .values(status=RunStatus.CANCELLED, finished_at=utcnow(), current_phase=None, message=message)
    )
    session.commit()
    session.refresh(run)
    return run


def run_public(run: Run, target_name: str) -> RunPublic:
    data = run.model_dump()
    data["target"] = target_name
    data["url"] = redact_url(run.url)
    data["options"] = redact_options(run.kind, run.options)
    return RunPublic.model_validate(data)


def runs_public(session: Session, runs: Sequence[Run]) -> list[RunPublic]:
    ids = {run.target_id for run in runs}
    rows = session.exec(select(Target.id, Target.name).where(col(Target.id).in_(ids))).all() if ids else []
    names = {target_id: name for target_id, name in rows}
    return [run_public(run, names.get(run.target_id, "?")) for run in runs]
