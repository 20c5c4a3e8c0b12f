"""Schedules, webhooks and their deliveries per target; the workers executing runs."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request, Response, status
from sqlmodel import SQLModel, col, select

from app import crud, webhooks
from app.deps import WRITE, SessionDep, SettingsDep, TargetDep
from app.models import Schedule, ScheduleIn, Webhook, WebhookDelivery, WebhookIn, stored_id
from app.redaction import mask_secret_url
from app.worker_status import WorkerStatus, workers_status

router = APIRouter(tags=["scale-out"])


class WebhookPublic(SQLModel):
    id: int
    url: str  # scheme and host only: the rest of a webhook URL is its key (`mask_secret_url`)
    slack: bool

    @classmethod
    def of(cls, hook: Webhook) -> WebhookPublic:
        return cls(id=hook.id or 0, url=mask_secret_url(hook.url), slack=hook.slack)


class DeliveryPublic(SQLModel):
    id: int
    webhook_id: int
    run_id: int
    state: str
    attempts: int
    last_status: int | None
    last_error: str
    created_at: datetime
    delivered_at: datetime | None


@router.get("/targets/{name}/schedule", summary="The target's schedule (null: none)")
def read_schedule(target: TargetDep, session: SessionDep) -> Schedule | None:
    return session.exec(select(Schedule).where(Schedule.target_id == target.id)).first()


@router.put("/targets/{name}/schedule", dependencies=[WRITE], summary="Set the target's schedule (cron or interval)")
def put_schedule(data: ScheduleIn, target: TargetDep, session: SessionDep) -> Schedule | None:
    """`cron` (5 fields, or 6 with seconds last) or `interval_seconds`; scheduled runs leave out
    opt-in destructive phases unless `include_destructive` is true."""
    return crud.set_schedule(session, target, data)


@router.delete(
    "/targets/{name}/schedule", dependencies=[WRITE], status_code=status.HTTP_204_NO_CONTENT, summary="No schedule"
)
def delete_schedule(target: TargetDep, session: SessionDep) -> Response:
    crud.set_schedule(session, target, None)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/targets/{name}/webhooks", summary="The target's webhooks")
def list_webhooks(target: TargetDep, session: SessionDep) -> list[WebhookPublic]:
    hooks = session.exec(select(Webhook).where(Webhook.target_id == target.id).order_by(col(Webhook.id))).all()
    return [WebhookPublic.of(hook) for hook in hooks]


@router.post(
    "/targets/{name}/webhooks", dependencies=[WRITE], status_code=status.HTTP_201_CREATED, summary="Add a webhook"
)
def add_webhook(data: WebhookIn, target: TargetDep, session: SessionDep, settings: SettingsDep) -> WebhookPublic:
    """Told when a run of the target ends; the URL must pass the network policy, as target URLs do."""
    webhooks.validate_url(data.url, settings.allowed_networks)
    hook = Webhook(target_id=stored_id(target), url=data.url, slack=data.slack)
    session.add(hook)
    session.commit()
    session.refresh(hook)
    return WebhookPublic.of(hook)


@router.get("/targets/{name}/webhooks/deliveries", summary="The delivery log of the target's webhooks")
def list_deliveries(target: TargetDep, session: SessionDep, limit: int = 50) -> list[DeliveryPublic]:
    rows = session.exec(
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == Webhook.id, Webhook.target_id == target.id)
        .order_by(col(WebhookDelivery.id).desc())
        .limit(max(1, min(limit, 500)))
    ).all()
    return [DeliveryPublic.model_validate(row, from_attributes=True) for row in rows]


@router.get("/workers", summary="Workers (embedded: run processes), last heartbeat or lease renewal, current runs")
def list_workers(request: Request, session: SessionDep, settings: SettingsDep) -> WorkerStatus:
    return workers_status(session, settings, getattr(request.app.state, "runner", None))
