"""Parity pages: the form that starts a parity run, its comparison as a tree of paths, and the goldens.

The comparison page opens on the first divergence (path, reason, both sides'
values and bytes side by side), then the tree of every kept divergent path with
the branch leading to the first one open. Everything works without JavaScript;
the form's small script only narrows the second list to the first's kind and
warns, as the page does after a submit, when the two targets' worker labels differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session, col, select

from app import crud, parity_runs
from app.deps import RunDep, RunnerDep, SessionDep
from app.models import ENDED_STATUSES, Golden, Run, Target, TranscriptRow
from app.web.guard import WriteGuard
from app.web.pages import page_router
from app.web.templating import templates
from checks.parity.compare import format_path

router = page_router()


@dataclass
class PathNode:
    """One segment of the divergent paths; a leaf holds the divergence found there."""

    label: str
    path: str
    open: bool = False
    count: int = 0
    divergence: dict[str, Any] | None = None
    children: dict[str, PathNode] = field(default_factory=dict)


def path_tree(divergences: list[dict[str, Any]], first: dict[str, Any] | None) -> list[PathNode]:
    """Divergences as a tree of their path segments, in walk order; the branch to the first one is open."""
    root = PathNode("", "")
    first_path = first.get("path") if first else None
    for divergence in divergences:
        segments = divergence.get("segments") or [divergence.get("path", "?")]
        node, walked = root, []
        on_first = divergence.get("path") == first_path
        for segment in segments:
            walked.append(segment)
            key = json.dumps(segment)
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = PathNode(format_path((segment,)), format_path(tuple(walked)))
            child.count += 1
            child.open = child.open or on_first
            node = child
        node.divergence = divergence
    return list(root.children.values())


def _side_names(session: Session, run: Run) -> list[str]:
    parity = parity_runs.parity_of(session, run)
    first = session.get(Target, run.target_id)
    return [first.name if first else "deleted target", parity.second_name if parity else "?"]


def _form_context(session: Session, error: str = "", chosen: dict[str, str] | None = None) -> dict[str, Any]:
    kinds = parity_runs.parity_kinds()
    targets = session.exec(select(Target).where(col(Target.kind).in_(kinds)).order_by(col(Target.name))).all()
    return {
        "kinds": kinds,
        "targets": targets,
        "goldens": parity_runs.goldens(session),
        "error": error,
        "chosen": chosen or {},
        "nav": "parity",
    }


@router.get("/parity/new", response_class=HTMLResponse, include_in_schema=False)
def parity_form(request: Request, session: SessionDep, first: str = "") -> HTMLResponse:
    return templates.TemplateResponse(request, "parity_form.html", _form_context(session, chosen={"first": first}))


@router.post("/parity", include_in_schema=False, dependencies=[WriteGuard])
async def start_parity(request: Request, session: SessionDep, runner: RunnerDep) -> Response:
    form = await request.form()
    chosen = {key: str(form.get(key) or "") for key in ("first", "second")}
    first = session.exec(select(Target).where(Target.name == chosen["first"])).first()
    kind, _, name = chosen["second"].partition(":")
    second = session.exec(select(Target).where(Target.name == name)).first() if kind == "target" else None
    golden = session.exec(select(Golden).where(Golden.name == name)).first() if kind == "golden" else None
    try:
        if first is None:
            raise crud.TargetInvalid([{"loc": ["first"], "msg": "pick the first target"}])
        if second is None and golden is None:
            raise crud.TargetInvalid([{"loc": ["second"], "msg": "pick a second target or a golden"}])
        run = parity_runs.enqueue_parity(session, first, second=second, golden=golden, trigger="browser")
    except crud.TargetInvalid as exc:
        context = _form_context(session, str(exc), chosen)
        return templates.TemplateResponse(request, "parity_form.html", context, status_code=422)
    runner.wake()
    return RedirectResponse(f"/parity/{run.id}", status_code=303)


@router.get("/parity/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def parity_page(request: Request, session: SessionDep, run: RunDep) -> Response:
    parity = parity_runs.parity_of(session, run)
    if parity is None:
        return RedirectResponse(f"/runs/{run.id}", status_code=303)
    first = session.get(Target, run.target_id)
    second = session.get(Target, parity.second_target_id) if parity.second_target_id is not None else None
    result = parity.result
    divergences = (result or {}).get("divergences") or []
    transcripts = session.exec(
        select(TranscriptRow).where(TranscriptRow.run_id == run.id).order_by(col(TranscriptRow.number))
    ).all()
    context = {
        "run": run,
        "parity": parity,
        "first_target": first,
        "second_target": second,
        "names": _side_names(session, run),
        "result": result,
        "path_nodes": path_tree(divergences, (result or {}).get("first")),
        "warning": parity_runs.label_warning(first, second) if first else None,
        "live": run.status not in ENDED_STATUSES,
        "transcripts": transcripts,
        "nav": "parity",
    }
    return templates.TemplateResponse(request, "parity.html", context)


def _refused(request: Request, title: str, exc: Exception, back: str) -> Response:
    context = {"title": title, "messages": [str(exc)], "back": back}
    return templates.TemplateResponse(request, "message.html", context, status_code=422)


@router.post("/parity/{run_id}/golden", include_in_schema=False, dependencies=[WriteGuard])
async def save_golden(request: Request, session: SessionDep, run: RunDep) -> Response:
    form = await request.form()
    side = 1 if str(form.get("side")) == "1" else 0
    try:
        parity_runs.save_golden(session, run, side, str(form.get("name") or "").strip())
    except crud.TargetInvalid as exc:
        return _refused(request, "Golden not saved", exc, f"/parity/{run.id}")
    return RedirectResponse("/parity/new#goldens", status_code=303)


@router.post("/goldens", include_in_schema=False, dependencies=[WriteGuard])
async def upload_golden(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    upload = form.get("file")
    try:
        text = await upload.read() if upload is not None and not isinstance(upload, str) else b""
        document = json.loads(text or b"null")
        parity_runs.upload_golden(session, str(form.get("name") or "").strip(), document)
    except (ValueError, crud.TargetInvalid) as exc:
        return _refused(request, "Golden not uploaded", exc, "/parity/new#goldens")
    return RedirectResponse("/parity/new#goldens", status_code=303)
