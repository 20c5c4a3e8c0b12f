"""The "can I deploy?" page (a form and its answer), the compatibility matrix, and a run's identity line.

The run page's line is rendered by `run.html` asking `run_identity()` (a template global registered
here, as `app.web.scale_pages` does for the target page), so the run page's own module needs no change.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field, ValidationError
from sqlmodel import Session, col, select

from app.can_i_deploy import can_i_deploy
from app.compatibility import compatibility
from app.deployments import deployed, environment_names, identity_of
from app.deps import SessionDep
from app.models import Run, Target
from app.models_deploy import NAME_PATTERN, VERSION_PATTERN, RunIdentity
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()


class Question(BaseModel):
    """The form's three fields, as the API checks them."""

    target: str = Field(min_length=1, max_length=64)
    version: str = Field(min_length=1, max_length=128, pattern=VERSION_PATTERN)
    to: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN)


FIELD_WORDS = {
    "target": "pick a target",
    "version": "a version is letters, digits and . _ + : ~ -, starting with a letter or digit",
    "to": "an environment's name is letters, digits and . _ -, starting with a letter or digit",
}


def _problems(error: ValidationError) -> list[str]:
    return [FIELD_WORDS.get(str(e["loc"][0]), str(e["msg"])) for e in error.errors()]


@router.get("/can-i-deploy", response_class=HTMLResponse, include_in_schema=False)
def can_i_deploy_page(
    request: Request,
    session: SessionDep,
    target: Annotated[str, Query(max_length=200)] = "",
    version: Annotated[str, Query(max_length=200)] = "",
    to: Annotated[str, Query(max_length=200)] = "",
) -> HTMLResponse:
    asked = {"target": target.strip(), "version": version.strip(), "to": to.strip()}
    context: dict[str, Any] = {
        "title": "Can I deploy?",
        "nav": "deploy",
        "asked": asked,
        "targets": session.exec(select(Target).order_by(col(Target.name))).all(),
        "environments": environment_names(session),
        "deployed": deployed(session),
        "answer": None,
        "problems": [],
    }
    code = status.HTTP_200_OK
    if any(asked.values()):
        try:
            question = Question(**asked)
        except ValidationError as exc:
            context["problems"], code = _problems(exc), status.HTTP_422_UNPROCESSABLE_CONTENT
        else:
            chosen = session.exec(select(Target).where(Target.name == question.target)).first()
            if chosen is None:
                context["problems"], code = [f"there is no target named {question.target!r}"], status.HTTP_404_NOT_FOUND
            else:
                context["answer"] = can_i_deploy(session, chosen, question.version, question.to)
    return templates.TemplateResponse(request, "can_i_deploy.html", context, status_code=code)


@router.get("/compatibility", response_class=HTMLResponse, include_in_schema=False)
def compatibility_page(request: Request, session: SessionDep) -> HTMLResponse:
    rows = compatibility(session)
    kinds = list(dict.fromkeys(row.kind for row in rows))
    context = {"title": "Compatibility", "nav": "deploy", "rows": rows, "kinds": kinds}
    return templates.TemplateResponse(request, "compatibility.html", context)


def run_identity(request: Request, run: Run) -> RunIdentity | None:
    """What the run page says the run checked: the implementation and version, and who said so."""
    with Session(request.app.state.engine) as session:
        identity = identity_of(session, run.id)
        if identity is not None:
            session.expunge(identity)
        return identity


templates.env.globals["run_identity"] = run_identity
