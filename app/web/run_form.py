"""`/targets/{name}/run-options`: one run with phases and options picked in the browser.

The form lists the suite's phases (the default ones ticked, opt-in ones such as a
run-ending `stop` not) and its options, filled with the target's values. What is
submitted applies to that run only, as `POST /api/v1/targets/{name}/runs` with
`phases` and `options` does; the target keeps its own settings. Secrets are left
out: a run takes them from its target. A tap's run takes neither phases nor options.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic_core import PydanticUndefined, to_jsonable_python
from starlette.datastructures import FormData

from app import crud, tap_runs
from app.deps import RunnerDep, SessionDep, TargetDep
from app.models import Target
from app.web.guard import WriteGuard
from app.web.options_form import FieldErrors, OptionField, display_values, parse_options, submitted_values
from app.web.pages import page_router
from app.web.target_forms import FormDep, errors_by_field, suite_form
from app.web.templating import templates
from checks.core import Suite
from checks.registry import find_suite

router = page_router()


def run_fields(kind: str) -> list[OptionField]:
    """The options a run may set: every one of the kind's but its secrets."""
    return [option for option in suite_form(kind)["fields"] if not option.secret]


def run_overrides(
    suite: Suite, fields: list[OptionField], form: FormData, current: dict[str, Any]
) -> tuple[dict[str, Any], FieldErrors]:
    """What the submitted fields change, on top of the target's options.

    The form shows the target's values; a field left empty (or set to the default) means the default, so a
    value the target sets is overridden with the default rather than kept.
    """
    parsed, errors = parse_options(fields, form, current)
    failed = {str(error["loc"][-1]) for error in errors}
    overrides: dict[str, Any] = {}
    for option in fields:
        if option.name in parsed:
            overrides[option.name] = parsed[option.name]
        elif option.name in current and option.name not in failed:
            default = suite.options_model.model_fields[option.name].get_default(call_default_factory=True)
            if default is not PydanticUndefined:
                overrides[option.name] = to_jsonable_python(default)
    return overrides, errors


def render(
    request: Request,
    target: Target,
    *,
    chosen: list[str],
    values: dict[str, str],
    errors: FieldErrors | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    suite = find_suite(target.kind)
    field_errors, general = errors_by_field(errors or [])
    for error in errors or []:
        if [str(part) for part in error["loc"]] == ["phases"]:
            field_errors.setdefault("phases", []).append(error["msg"])
    context = {
        "target": target,
        "phases": suite.phases if suite is not None else [],
        "chosen": chosen,
        "suite": suite_form(target.kind) | {"fields": run_fields(target.kind)},
        "values": {"options": values},
        "errors": field_errors,
        "general_errors": [message for message in general if not message.startswith("phases:")],
        "nav": "targets",
    }
    return templates.TemplateResponse(request, "run_form.html", context, status_code=status_code)


@router.get("/targets/{name}/run-options", response_class=HTMLResponse, include_in_schema=False)
def run_options_form(request: Request, session: SessionDep, target: TargetDep) -> Response:
    suite = find_suite(target.kind)
    if suite is None or tap_runs.target_tap(session, target) is not None:
        why = "it is a tap: its runs take the tap's settings" if suite else f"{target.kind} is unavailable here"
        context = {"title": f"No options for {target.name}", "messages": [why], "back": f"/targets/{target.name}"}
        return templates.TemplateResponse(request, "message.html", context)
    chosen = [phase.name for phase in suite.select()]
    return render(request, target, chosen=chosen, values=display_values(run_fields(target.kind), target.options))


@router.post("/targets/{name}/run-options", include_in_schema=False, dependencies=[WriteGuard])
def start_run_with_options(
    request: Request, session: SessionDep, target: TargetDep, runner: RunnerDep, form: FormDep
) -> Response:
    suite = find_suite(target.kind)
    fields = run_fields(target.kind)
    chosen = [str(name) for name in form.getlist("phase")]
    if suite is None:
        return RedirectResponse(f"/targets/{target.name}/run-options", status_code=303)
    overrides, errors = run_overrides(suite, fields, form, target.options)
    if not chosen:
        errors.append({"loc": ["phases"], "msg": "pick at least one phase"})
    try:
        if errors:
            raise crud.TargetInvalid(errors)
        run = crud.enqueue_run(session, target, phases=chosen, options=overrides, trigger="browser")
    except crud.TargetInvalid as exc:
        values = submitted_values(fields, form)
        return render(request, target, chosen=chosen, values=values, errors=exc.errors, status_code=422)
    runner.wake()
    return RedirectResponse(f"/runs/{run.id}", status_code=303)
