"""`/targets/new-tap`: add a tap target from the browser (the kind watched, the upstream, where the tap
listens and when its windows roll over). Bad input comes back as the same form, status 422, with each
message beside its field."""

from __future__ import annotations

from typing import Any

import pydantic
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import crud, tap_runs
from app.deps import SessionDep, SettingsDep
from app.models import DEFAULT_LABEL
from app.models_tap import TapTargetCreate
from app.web.guard import WriteGuard
from app.web.pages import page_router
from app.web.target_forms import FormDep
from app.web.templating import templates

router = page_router()
TEXT_FIELDS = ("name", "kind", "upstream", "description", "worker_label", "listen", "roll_seconds", "roll_messages")


def tap_kinds() -> list[str]:
    from checks.tap.kinds import TAP_KINDS

    return list(TAP_KINDS)


def _render(
    request: Request, values: dict[str, str], errors: dict[str, list[str]], status_code: int = 200
) -> HTMLResponse:
    context = {"values": values, "errors": errors, "kinds": tap_kinds(), "nav": "new"}
    return templates.TemplateResponse(request, "tap_form.html", context, status_code=status_code)


@router.get("/targets/new-tap", response_class=HTMLResponse, include_in_schema=False)
def new_tap_form(request: Request) -> HTMLResponse:
    return _render(request, {"kind": tap_kinds()[0], "worker_label": "default"}, {})


def _options(text: str) -> dict[str, str]:
    """`key=value` lines (or comma separated pairs) as the tap's options."""
    pairs = [item.strip() for line in text.splitlines() for item in line.split(",") if item.strip()]
    options = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"{pair!r}: give KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def _body(values: dict[str, str], options: str) -> dict[str, Any]:
    tap: dict[str, Any] = {"listen": values["listen"], "options": _options(options)}
    for name in ("roll_seconds", "roll_messages"):
        if values[name]:
            tap[name] = values[name]
    body: dict[str, Any] = {key: values[key] for key in ("name", "kind", "upstream", "description")}
    return body | {"worker_label": values["worker_label"] or DEFAULT_LABEL, "tap": tap}


def _errors(problems: list[dict[str, Any]]) -> dict[str, list[str]]:
    by_field: dict[str, list[str]] = {}
    for problem in problems:
        loc = [str(part) for part in problem.get("loc", []) if str(part) not in ("body", "tap")]
        field = loc[0] if loc and loc[0] in (*TEXT_FIELDS, "options") else "general"
        by_field.setdefault(field, []).append(str(problem.get("msg", "")))
    return by_field


@router.post("/targets/new-tap", include_in_schema=False, dependencies=[WriteGuard])
def create_tap_target(request: Request, session: SessionDep, settings: SettingsDep, form: FormDep) -> Response:
    values = {name: str(form.get(name, "")).strip() for name in TEXT_FIELDS}
    values["options"] = str(form.get("options", ""))
    try:
        data = TapTargetCreate.model_validate(_body(values, values["options"]))
        tap_runs.create_tap_target(session, data, settings.allowed_networks)
    except ValueError as exc:
        if isinstance(exc, pydantic.ValidationError):
            problems = [{"loc": e["loc"], "msg": e["msg"]} for e in exc.errors()]
        else:
            problems = [{"loc": ["options"], "msg": str(exc)}]
        return _render(request, values, _errors(problems), status_code=422)
    except crud.TargetInvalid as exc:
        return _render(request, values, _errors(exc.errors), status_code=422)
    return RedirectResponse(f"/targets/{values['name']}", status_code=303)
