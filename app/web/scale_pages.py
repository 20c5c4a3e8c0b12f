"""The workers page, and the target page's scale-out section (label warning, schedule, webhook deliveries).

The section is rendered by `_target_scale.html`, which asks `target_scale()`
(a template global registered here) for its data, so the target page's own
module needs no change.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlmodel import Session, col, select

from app.deps import SessionDep, SettingsDep
from app.models import Schedule, Target, Webhook, WebhookDelivery
from app.redaction import mask_secret_url
from app.web.pages import page_router
from app.web.templating import templates
from app.worker_status import label_warning, workers_status

router = page_router()


@router.get("/workers", response_class=HTMLResponse, include_in_schema=False)
def workers_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    status = workers_status(session, settings, getattr(request.app.state, "runner", None))
    context = {"title": "Workers", "status": status, "nav": "workers"}
    return templates.TemplateResponse(request, "workers.html", context)


def target_scale(request: Request, target: Target) -> dict[str, Any]:
    """What the target page shows about where and when its runs execute and who is told."""
    with Session(request.app.state.engine) as session:
        deliveries = session.exec(
            select(WebhookDelivery, Webhook.url)
            .where(WebhookDelivery.webhook_id == Webhook.id, Webhook.target_id == target.id)
            .order_by(col(WebhookDelivery.id).desc())
            .limit(10)
        ).all()
        return {
            "warning": label_warning(session, request.app.state.settings, target),
            "schedule": session.exec(select(Schedule).where(Schedule.target_id == target.id)).first(),
            "deliveries": [{"row": row, "url": mask_secret_url(url)} for row, url in deliveries],
        }


templates.env.globals["target_scale"] = target_scale
