"""API-only response shapes, beside the shared ones in app.models."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import Response
from sqlmodel import SQLModel

from app.models import ClauseResultPublic, RunPublic


class ClauseResultOut(ClauseResultPublic):
    """A clause result with its row id, for polling with `?after_id=`."""

    id: int


class ParityComparison(SQLModel):
    """What a parity run compared and found; the whole comparison is at `/api/v1/parity-runs/{id}`."""

    second: str  # the second target's name, or "golden NAME"
    comparison: str | None  # identical, divergent, undecided; None until finished
    divergence_count: int


class RunOut(RunPublic):
    """A run with its type: a parity run's `outcome` is not a conformance verdict, its `parity` says what it found."""

    type: Literal["conformance", "parity"]
    parity: ParityComparison | None = None


class TranscriptPublic(SQLModel):
    run_id: int
    number: int
    phase: str
    label: str
    frames: list[dict[str, Any]]
    dropped: int
    summarised: bool = False  # kept as a summary by retention: its frames are counted in `dropped`
    close_code: int | None
    close_reason: str | None
    closed_by: str | None


class RunExport(SQLModel):
    """Everything a run recorded, secrets redacted; `schema_version` changes when this shape does."""

    schema_version: int = 1
    run: RunPublic
    results: list[ClauseResultOut]
    transcripts: list[TranscriptPublic]


def documented_as(media_type: str) -> dict[str, Any]:
    """Route arguments for a plain `Response` body that the OpenAPI document names by its media type."""
    return {"response_class": Response, "responses": {200: {"content": {media_type: {}}}}}


class Health(SQLModel):
    status: str
    harness_version: str
    database: str
