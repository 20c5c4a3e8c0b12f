"""Notifications: when a run ends, each webhook of its target gets a JSON body, retried with backoff.

The body names the run, its outcome, the clauses that regressed or recovered
since the target's previous finished run, and links to the pages. A delivery
row is written in the transaction that ends the run, so a notification is
never lost to a crash; `deliver_due` sends what is due (from the operations
queue in workers mode, from the in-process scheduler otherwise). Webhook URLs
obey the network policy, as targets do: a refused host gets no request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.crud import TargetInvalid
from app.history import conformance_runs
from app.models import ClauseResultRow, Run, RunStatus, Target, Webhook, WebhookDelivery, utcnow
from app.netpolicy import NetworkRefused, check_host, check_host_async
from app.redaction import mask_secret_url
from checks.core import Verdict, truncate, worst

log = logging.getLogger("rlconform.webhooks")

CLAIM_SECONDS = 60  # a delivery being sent is not picked again by another process for this long
BATCH = 20


def validate_url(url: str, allowed_networks: Sequence[str]) -> None:
    """TargetInvalid unless `url` is an http(s) URL whose host the network policy allows."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetInvalid([{"loc": ["url"], "msg": "a webhook URL is http:// or https:// with a host"}])
    try:
        check_host(parts.hostname, parts.port, allowed_networks)
    except NetworkRefused as exc:
        raise TargetInvalid([{"loc": ["url"], "msg": str(exc)}]) from None


def _rolled_up(session: Session, run_id: int) -> dict[str, Verdict]:
    rows = session.exec(
        select(ClauseResultRow.clause_id, ClauseResultRow.verdict).where(ClauseResultRow.run_id == run_id)
    ).all()
    by_clause: dict[str, list[Verdict]] = {}
    for clause_id, verdict in rows:
        by_clause.setdefault(clause_id, []).append(Verdict(verdict))
    rolled = {clause_id: worst(verdicts) for clause_id, verdicts in by_clause.items()}
    return {clause_id: verdict for clause_id, verdict in rolled.items() if verdict is not None}


def notification(session: Session, run: Run, target: Target, public_url: str) -> dict[str, Any]:
    """The JSON body for an ended run: outcome, regressed and recovered clauses, links."""
    failing = run.gate.failing() | {Verdict.ERROR}
    now = _rolled_up(session, run.id or 0)
    previous = session.exec(
        select(Run.id)
        .where(
            Run.target_id == run.target_id, Run.status == RunStatus.FINISHED, col(Run.id) < run.id, conformance_runs()
        )
        .order_by(col(Run.id).desc())
        .limit(1)
    ).first()
    before = _rolled_up(session, previous) if previous is not None else {}
    regressed = sorted(c for c, v in now.items() if v in failing and c in before and before[c] not in failing)
    recovered = sorted(c for c, v in now.items() if v not in failing and before.get(c) in failing)
    base = public_url.rstrip("/")
    links = {"run": f"{base}/runs/{run.id}", "target": f"{base}/targets/{target.name}"}
    if previous is not None:
        links["diff"] = f"{base}/runs/{run.id}/diff?against={previous}"
    return {
        "event": "run.ended",
        "target": target.name,
        "run": {"id": run.id, "status": str(run.status), "trigger": run.trigger, "message": run.message},
        "outcome": str(run.outcome) if run.outcome else None,
        "previous_run": previous,
        "regressed": regressed,
        "recovered": recovered,
        "links": links,
    }


def slack_body(body: dict[str, Any]) -> dict[str, Any]:
    """A Slack incoming-webhook body (`text` in mrkdwn) carrying the same facts."""
    run, links = body["run"], body["links"]
    lines = [
        f"*{body['target']}* run <{links['run']}|#{run['id']}> {run['status']}: *{body['outcome'] or 'no outcome'}*"
    ]
    if body["regressed"]:
        lines.append("regressed: " + ", ".join(f"`{c}`" for c in body["regressed"][:20]))
    if body["recovered"]:
        lines.append("recovered: " + ", ".join(f"`{c}`" for c in body["recovered"][:20]))
    return {"text": "\n".join(lines)}


def enqueue_deliveries(session: Session, run: Run, public_url: str) -> int:
    """One pending delivery per webhook of the run's target (inside the transaction ending the run)."""
    if run.status == RunStatus.CANCELLED:
        return 0
    hooks = session.exec(select(Webhook).where(Webhook.target_id == run.target_id)).all()
    target = session.get(Target, run.target_id)
    if not hooks or target is None:
        return 0
    body = notification(session, run, target, public_url)
    for hook in hooks:
        payload = slack_body(body) if hook.slack else body
        session.add(WebhookDelivery(webhook_id=hook.id or 0, run_id=run.id or 0, body=payload))
    return len(hooks)


def _claim(engine: Engine) -> list[tuple[int, str, dict[str, Any]]]:
    now = utcnow()
    with Session(engine) as session:
        due = session.exec(
            select(WebhookDelivery, Webhook.url)
            .where(
                WebhookDelivery.webhook_id == Webhook.id,
                WebhookDelivery.state == "pending",
                col(WebhookDelivery.next_attempt_at) <= now,
            )
            .order_by(col(WebhookDelivery.id))
            .limit(BATCH)
            .with_for_update(skip_locked=True, of=WebhookDelivery)
        ).all()
        claimed = [(delivery.id or 0, url, delivery.body) for delivery, url in due]
        if claimed:
            session.exec(
                update(WebhookDelivery)
                .where(col(WebhookDelivery.id).in_([c[0] for c in claimed]))
                .values(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
            )
        session.commit()
        return claimed


def _record(engine: Engine, delivery_id: int, status: int | None, error: str, attempts: int, backoff: float) -> None:
    with Session(engine) as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        if delivery is None:
            return
        delivery.attempts += 1
        delivery.last_status, delivery.last_error = status, truncate(error, 500)
        if status is not None and 200 <= status < 300:
            delivery.state, delivery.delivered_at = "delivered", utcnow()
        elif delivery.attempts >= attempts:
            delivery.state = "failed"
        else:
            delivery.next_attempt_at = utcnow() + timedelta(seconds=backoff * 2 ** (delivery.attempts - 1))
        session.add(delivery)
        session.commit()


async def _send(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], allowed: Sequence[str]
) -> tuple[int | None, str]:
    parts = urlsplit(url)
    try:
        address = await check_host_async(parts.hostname or "", parts.port, allowed)
        target, headers, extensions = httpx.URL(url), {}, {}
        if address is not None and address != target.host:
            # Post to the address just checked, so a name that answers differently the second time
            # (DNS rebinding) cannot send the request elsewhere; the name stays in Host and SNI.
            headers = {"host": target.netloc.decode("ascii")}
            extensions = {"sni_hostname": target.host}
            target = target.copy_with(host=address)
        response = await client.post(target, json=body, headers=headers, extensions=extensions)
    except NetworkRefused as exc:
        return None, f"refused by the network policy: {exc}"
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}".replace(url, mask_secret_url(url))  # the URL is a secret
    return response.status_code, "" if response.is_success else f"HTTP {response.status_code}"


async def deliver_due(engine: Engine, allowed_networks: Sequence[str], attempts: int, backoff: float) -> int:
    """Send every due delivery once; returns how many were tried."""
    claimed = await asyncio.to_thread(_claim, engine)
    if not claimed:
        return 0
    async with httpx.AsyncClient(timeout=10.0, follow_redirects=False) as client:
        outcomes = await asyncio.gather(*(_send(client, url, body, allowed_networks) for _, url, body in claimed))
    for (delivery_id, _, _), (status, error) in zip(claimed, outcomes, strict=True):
        await asyncio.to_thread(_record, engine, delivery_id, status, error, attempts, backoff)
    return len(claimed)
