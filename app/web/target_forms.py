"""Add, edit and delete targets from the browser.

The kind selects the suite; its options fields are generated from the
suite's options model. Bad input comes back as the same form, status 422,
with each message beside the field its path names. Changing the kind
without JavaScript: the "Show options for this kind" button re-renders the
form for the chosen kind (a tiny script presses it on change).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlencode

import pydantic
from annotated_types import MaxLen
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func
from sqlmodel import select
from starlette.datastructures import FormData

from app import crud, redaction
from app.deps import RunnerDep, SessionDep, SettingsDep, TargetDep
from app.models import Run, Target
from app.web.guard import WriteGuard
from app.web.options_form import (
    FieldErrors,
    OptionField,
    display_values,
    fields_from_schema,
    parse_options,
    submitted_values,
)
from app.web.pages import page_router
from app.web.templating import templates
from checks.core import Gate
from checks.registry import find_suite, kind_names

router = page_router()

# The stored limit on a target's name, read from the model so the form and the database agree.
NAME_LIMIT: int = next(m.max_length for m in Target.model_fields["name"].metadata if isinstance(m, MaxLen))
FORM_FIELDS = ("name", "kind", "url", "description", "gate", "schedule_minutes", "expected_failures", "confirm")


async def read_form(request: Request) -> FormData:
    return await request.form()


FormDep = Annotated[FormData, Depends(read_form)]


def available_kinds() -> list[dict[str, Any]]:
    kinds = []
    for kind in kind_names():
        suite = find_suite(kind)
        title = suite.title if suite is not None else "unavailable on this server"
        kinds.append({"kind": kind, "title": title, "available": suite is not None})
    return kinds


def default_kind() -> str:
    return next((k["kind"] for k in available_kinds() if k["available"]), kind_names()[0])


def suite_form(kind: str) -> dict[str, Any]:
    """What the form needs to know about a kind: URL hints, clauses and generated option fields."""
    suite = find_suite(kind)
    if suite is None:
        return {"kind": kind, "available": False, "fields": [], "clauses": [], "url_example": "", "schemes": []}
    return {
        "kind": kind,
        "available": True,
        "title": suite.title,
        "fields": fields_from_schema(suite.options_model.model_json_schema()),
        "clauses": list(suite.catalogue),
        "url_example": suite.url_example,
        "schemes": [f"{scheme}://" for scheme in suite.url_schemes] or ["HOST:PORT"],
        "listen": suite.listen,
    }


def errors_by_field(errors: FieldErrors) -> tuple[dict[str, list[str]], list[str]]:
    """Messages keyed by the form field their path names; the rest are shown above the form."""
    by_field: dict[str, list[str]] = {}
    general: list[str] = []
    for error in errors:
        loc = [str(part) for part in error["loc"] if part != "body"]
        if len(loc) >= 2 and loc[0] == "options":
            key = f"options.{loc[1]}"
        elif loc and loc[0] in FORM_FIELDS:
            key = loc[0]
        else:
            general.append(f"{'.'.join(loc) or 'target'}: {error['msg']}")
            continue
        by_field.setdefault(key, []).append(error["msg"])
    return by_field, general


def values_from_target(target: Target, fields: list[OptionField]) -> dict[str, Any]:
    return {
        "name": target.name,
        "url": redaction.redact_url(target.url),
        "description": target.description,
        "gate": target.gate,
        "schedule_minutes": "" if target.schedule_minutes is None else str(target.schedule_minutes),
        "expected_failures": list(target.expected_failures),
        "options": display_values(fields, target.options),
    }


def values_from_form(form: FormData, fields: list[OptionField]) -> dict[str, Any]:
    return {
        "name": str(form.get("name", "")).strip(),
        "url": str(form.get("url", "")).strip(),
        "description": str(form.get("description", "")),
        "gate": str(form.get("gate", Gate.DEFAULT)),
        "schedule_minutes": str(form.get("schedule_minutes", "")).strip(),
        "expected_failures": [str(v) for v in form.getlist("expected_failures")],
        "options": submitted_values(fields, form),
    }


def render_form(
    request: Request,
    *,
    kind: str,
    values: dict[str, Any],
    target: Target | None = None,
    errors: FieldErrors | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    field_errors, general = errors_by_field(errors or [])
    context = {
        "target": target,
        "kinds": available_kinds(),
        "suite": suite_form(kind),
        "values": values,
        "errors": field_errors,
        "general_errors": general,
        "gates": [str(gate) for gate in Gate],
        "name_limit": NAME_LIMIT,
        "nav": "new" if target is None else "targets",
    }
    return templates.TemplateResponse(request, "target_form.html", context, status_code=status_code)


def target_values(form: FormData, kind: str, current: dict[str, Any] | None) -> tuple[dict[str, Any], FieldErrors]:
    """The submitted target as API-shaped values, plus errors found before validation."""
    options, errors = parse_options(suite_form(kind)["fields"], form, current)
    schedule = str(form.get("schedule_minutes", "")).strip()
    values = {
        "kind": kind,
        "url": str(form.get("url", "")).strip(),
        "description": str(form.get("description", "")),
        "gate": str(form.get("gate", Gate.DEFAULT)),
        "schedule_minutes": schedule or None,
        "options": options,
        "expected_failures": [str(v) for v in form.getlist("expected_failures")],
    }
    return values, errors


def suite_errors(kind: str, values: dict[str, Any]) -> FieldErrors:
    """URL and options problems, found without saving anything.

    Used when the target's own fields are already invalid (so `crud` stops
    early), to show every problem at once instead of one round at a time.
    """
    suite = find_suite(kind)
    if suite is None:
        return []
    errors: FieldErrors = []
    try:
        suite.validate_url(values["url"])
    except ValueError as exc:
        errors.append({"loc": ["url"], "msg": str(exc)})
    try:
        suite.parse_options(values["options"])
    except pydantic.ValidationError as exc:
        errors.extend({"loc": ["options", *e["loc"]], "msg": e["msg"]} for e in exc.errors())
    return errors


def _save(
    save: Callable[[], Any], kind: str, values: dict[str, Any], errors: FieldErrors, check: Callable[[], Any]
) -> None:
    """Run `save`, or raise TargetInvalid with every problem found.

    `errors` are fields that did not even parse (an option's bad JSON): nothing is saved, and `check`
    (validation without saving) and the suite still look at every other field, so the form shows all
    problems at once rather than one round at a time.
    """
    if errors:
        found = list(errors)
        try:
            check()
        except crud.TargetInvalid as exc:
            found = _merged(found, exc.errors)
        raise crud.TargetInvalid(_merged(found, suite_errors(kind, values)))
    try:
        save()
    except crud.TargetInvalid as exc:
        exc.errors[:] = _merged(exc.errors, suite_errors(kind, values))
        raise


def _merged(errors: FieldErrors, more: FieldErrors) -> FieldErrors:
    """`errors` and those of `more` about a field `errors` says nothing about."""
    seen = {tuple(map(str, e["loc"])) for e in errors}
    return list(errors) + [e for e in more if tuple(map(str, e["loc"])) not in seen]


def _switching_kind(form: FormData) -> bool:
    return form.get("action") == "switch-kind"


@router.get("/targets/new", response_class=HTMLResponse, include_in_schema=False)
def new_target_form(request: Request, kind: str | None = None) -> HTMLResponse:
    kind = kind if kind in kind_names() else default_kind()
    values = {"gate": str(Gate.DEFAULT), "expected_failures": [], "options": {}}
    return render_form(request, kind=kind, values=values)


@router.post("/targets/new", include_in_schema=False, dependencies=[WriteGuard])
def create_target(request: Request, session: SessionDep, settings: SettingsDep, form: FormDep) -> Response:
    kind = str(form.get("kind", "")) or default_kind()
    fields = suite_form(kind)["fields"]
    if _switching_kind(form):
        values = values_from_form(form, fields) | {"options": {}, "expected_failures": []}
        return render_form(request, kind=kind, values=values)
    values, errors = target_values(form, kind, None)
    values["name"] = str(form.get("name", "")).strip()
    if len(values["name"]) > NAME_LIMIT:  # the field has no maxlength: a browser would cut a paste silently
        message = f"A name has at most {NAME_LIMIT} characters; this one has {len(values['name'])}."
        too_long = [{"loc": ["name"], "msg": message}]
        return render_form(request, kind=kind, values=values_from_form(form, fields), errors=too_long, status_code=422)
    networks = settings.allowed_networks
    try:
        _save(
            lambda: crud.create_target(session, crud.target_create_from(values), networks),
            kind,
            values,
            errors,
            lambda: crud.validate_target(session, crud.target_create_from(values), networks),
        )
    except crud.TargetInvalid as exc:
        return render_form(
            request, kind=kind, values=values_from_form(form, fields), errors=exc.errors, status_code=422
        )
    return RedirectResponse(f"/targets/{values['name']}", status_code=303)


@router.get("/targets/{name}/edit", response_class=HTMLResponse, include_in_schema=False)
def edit_target_form(request: Request, target: TargetDep) -> HTMLResponse:
    fields = suite_form(target.kind)["fields"]
    return render_form(request, kind=target.kind, values=values_from_target(target, fields), target=target)


@router.post("/targets/{name}/edit", include_in_schema=False, dependencies=[WriteGuard])
def update_target(
    request: Request, session: SessionDep, settings: SettingsDep, target: TargetDep, form: FormDep
) -> Response:
    kind = str(form.get("kind", "")) or target.kind
    fields = suite_form(kind)["fields"]
    if _switching_kind(form):
        values = values_from_form(form, fields) | {"options": {}, "expected_failures": []}
        return render_form(request, kind=kind, values=values, target=target)
    current = target.options if kind == target.kind else None
    values, errors = target_values(form, kind, current)

    def save() -> None:
        crud.update_target(session, target, crud.target_update_from(values), settings.allowed_networks)

    try:
        _save(save, kind, values, errors, lambda: None)  # only the URL and options can be wrong beside them
    except crud.TargetInvalid as exc:
        session.rollback()
        return render_form(
            request,
            kind=kind,
            values=values_from_form(form, fields),
            target=target,
            errors=exc.errors,
            status_code=422,
        )
    return RedirectResponse(f"/targets/{target.name}", status_code=303)


@router.get("/targets/{name}/delete", response_class=HTMLResponse, include_in_schema=False)
def confirm_delete(request: Request, session: SessionDep, target: TargetDep) -> HTMLResponse:
    """Asks before deleting, saying what goes with the target (its runs), with the button that deletes."""
    runs = session.exec(select(func.count()).select_from(Run).where(Run.target_id == target.id)).one()
    context = {"target": target, "runs": runs, "nav": "targets"}
    return templates.TemplateResponse(request, "target_delete.html", context)


@router.post("/targets/{name}/delete", include_in_schema=False, dependencies=[WriteGuard])
async def delete_target(
    request: Request, session: SessionDep, runner: RunnerDep, target: TargetDep, form: FormDep
) -> Response:
    if form.get("confirm") != "yes":
        fields = suite_form(target.kind)["fields"]
        errors = [{"loc": ["confirm"], "msg": "tick the box to confirm: the target's runs and results go too"}]
        return render_form(
            request,
            kind=target.kind,
            values=values_from_target(target, fields),
            target=target,
            errors=errors,
            status_code=400,
        )
    name = target.name
    await runner.delete_target(session, target)
    return RedirectResponse(f"/?{urlencode({'deleted': name})}", status_code=303)  # the list says it is gone
