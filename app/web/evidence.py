"""`/runs/{run_id}/clauses/{phase}/{clause_id}`: one clause result and the wire transcript proving it."""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from sqlmodel import Session, col, select

from app.deps import RunDep, SessionDep, SettingsDep
from app.history import clause_timeline
from app.models import ClauseResultRow, Run, Target, TranscriptRow
from app.spec_page import spec_clauses
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

RECENT_RESULTS = 20
DIRECTIONS = {"sent": "→", "received": "←", "closed": "✕", "note": "•"}


def _result(session: Session, run: Run, phase: str, clause_id: str) -> ClauseResultRow:
    result = session.exec(
        select(ClauseResultRow).where(
            ClauseResultRow.run_id == run.id, ClauseResultRow.phase == phase, ClauseResultRow.clause_id == clause_id
        )
    ).first()
    if result is None:
        raise HTTPException(status_code=404, detail=f"run {run.id} has no result for {clause_id} in phase {phase}")
    return result


def _transcripts(session: Session, run: Run, numbers: list[int]) -> list[TranscriptRow]:
    if not numbers:
        return []
    return list(
        session.exec(
            select(TranscriptRow)
            .where(TranscriptRow.run_id == run.id, col(TranscriptRow.number).in_(numbers))
            .order_by(col(TranscriptRow.number))
        )
    )


def _transcript_dict(row: TranscriptRow) -> dict[str, Any]:
    return {
        "number": row.number,
        "phase": row.phase,
        "label": row.label,
        "frames": row.frames,
        "dropped": row.dropped,
        "close_code": row.close_code,
        "close_reason": row.close_reason,
        "closed_by": row.closed_by,
    }


def _last_received(transcripts: list[TranscriptRow]) -> str:
    """What the target last sent on the evidence's connections: what a result with no text of its own observed."""
    frames = [frame for row in transcripts for frame in row.frames if frame.get("direction") == "received"]
    return f"last frame from the target: {frames[-1].get('summary', '')}" if frames else ""


@router.get("/runs/{run_id}/clauses/{phase}/{clause_id}", response_class=HTMLResponse, include_in_schema=False)
def evidence_page(
    request: Request, session: SessionDep, settings: SettingsDep, run: RunDep, phase: str, clause_id: str
) -> HTMLResponse:
    result = _result(session, run, phase, clause_id)
    transcripts = _transcripts(session, run, result.transcript_ids)
    context = {
        "run": run,
        "target": session.get(Target, run.target_id),
        "result": result,
        "observed": result.actual or _last_received(transcripts),
        "spec": spec_clauses(settings.spec_path).get(clause_id),
        "transcripts": transcripts,
        "recent": clause_timeline(session, run.target_id, clause_id, RECENT_RESULTS),
        "directions": DIRECTIONS,
        "expected_failure": clause_id in run.expected_failures,
        "nav": "targets",
    }
    return templates.TemplateResponse(request, "evidence.html", context)


@router.get("/runs/{run_id}/clauses/{phase}/{clause_id}/raw", include_in_schema=False)
def evidence_raw(session: SessionDep, settings: SettingsDep, run: RunDep, phase: str, clause_id: str) -> Response:
    """The result, its SPEC clause and its transcripts as one JSON download."""
    result = _result(session, run, phase, clause_id)
    spec = spec_clauses(settings.spec_path).get(clause_id)
    document = {
        "run": {
            "id": run.id,
            "kind": run.kind,
            "url": run.url,
            "harness_version": run.harness_version,
            "spec_version": run.spec_version,
            "status": run.status,
            "outcome": run.outcome,
        },
        "clause": {
            "id": clause_id,
            "level": spec.level if spec else result.level,
            "statement": spec.statement if spec else None,
        },
        "result": {
            "phase": result.phase,
            "verdict": result.verdict,
            "expected": result.expected,
            "actual": result.actual,
            "duration": result.duration,
            "checks": result.checks,
            "decided_at": result.decided_at.isoformat(),
        },
        "transcripts": [_transcript_dict(row) for row in _transcripts(session, run, result.transcript_ids)],
    }
    filename = f"run-{run.id}-{phase}-{clause_id}.json".replace('"', "")
    return Response(
        json.dumps(document, indent=2),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
