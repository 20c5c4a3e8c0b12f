"""Tables and API shapes: targets, runs, clause results and transcripts.

Base classes hold the fields users send, `*Create`/`*Update` validate input,
`*Public` is what the API returns, and the `table=True` classes are stored.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ConfigDict
from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class RunStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


ENDED_STATUSES = {RunStatus.FINISHED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}


# ---------------------------------------------------------------- targets


class TargetBase(SQLModel):
    name: str = Field(min_length=1, max_length=64, regex=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", index=True, unique=True)
    kind: str = Field(max_length=32)
    url: str = Field(max_length=2048)
    description: str = Field(default="", max_length=2000)
    gate: str = Field(default="default", max_length=16)  # checks.core.Gate
    schedule_minutes: int | None = Field(default=None, ge=1, le=7 * 24 * 60)


class Target(TargetBase, table=True):
    id: int | None = Field(default=None, primary_key=True)
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    expected_failures: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class TargetCreate(TargetBase):
    options: dict[str, Any] = Field(default_factory=dict)
    expected_failures: list[str] = Field(default_factory=list)


class TargetUpdate(SQLModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt or read-only field (e.g. name) is an error, not a no-op

    kind: str | None = None
    url: str | None = None
    description: str | None = None
    gate: str | None = None
    schedule_minutes: int | None = None
    options: dict[str, Any] | None = None
    expected_failures: list[str] | None = None


class TargetPublic(TargetBase):
    id: int
    options: dict[str, Any]  # secrets redacted
    expected_failures: list[str]
    created_at: datetime
    updated_at: datetime


# ---------------------------------------------------------------- runs


class Run(SQLModel, table=True):
    __table_args__ = (Index("ix_run_target_created", "target_id", "created_at"),)

    id: int | None = Field(default=None, primary_key=True)
    target_id: int = Field(foreign_key="target.id", index=True)
    status: str = Field(default=RunStatus.QUEUED, max_length=16, index=True)
    outcome: str | None = Field(default=None, max_length=16)  # checks.core.Outcome
    phases: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))  # redacted snapshot
    kind: str = Field(max_length=32)
    url: str = Field(max_length=2048)
    gate: str = Field(default="default", max_length=16)
    expected_failures: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    harness_version: str = Field(max_length=32)
    spec_version: str = Field(max_length=32)
    trigger: str = Field(default="api", max_length=16)  # api, browser, schedule, ci
    current_phase: str | None = Field(default=None, max_length=64)
    total_clauses: int = 0
    decided_clauses: int = 0
    counts: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    message: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    created_at: datetime = Field(default_factory=utcnow, index=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None


class RunCreate(SQLModel):
    model_config = ConfigDict(extra="forbid")

    phases: list[str] | None = None
    options: dict[str, Any] | None = None  # overrides on top of the target's options
    trigger: Literal["api", "ci"] = "api"  # browser and schedule runs are started by the service itself


class RunPublic(SQLModel):
    id: int
    target: str
    status: str
    outcome: str | None
    phases: list[str]
    options: dict[str, Any]
    kind: str
    url: str
    gate: str
    expected_failures: list[str]
    harness_version: str
    spec_version: str
    trigger: str
    current_phase: str | None
    total_clauses: int
    decided_clauses: int
    counts: dict[str, int]
    message: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


# ---------------------------------------------------------------- results


class ClauseResultRow(SQLModel, table=True):
    """One decided clause of one phase of a run; written as soon as it is decided."""

    __tablename__ = "clause_result"
    __table_args__ = (
        UniqueConstraint("run_id", "phase", "clause_id", name="uq_clause_result_run_phase_clause"),
        Index("ix_clause_result_clause_run", "clause_id", "run_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    phase: str = Field(max_length=64)
    clause_id: str = Field(max_length=128)
    level: str = Field(max_length=8)
    verdict: str = Field(max_length=16)
    expected: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    actual: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    duration: float = 0.0
    checks: int = 1
    transcript_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    decided_at: datetime = Field(default_factory=utcnow)


class ClauseResultPublic(SQLModel):
    phase: str
    clause_id: str
    level: str
    verdict: str
    expected: str
    actual: str
    duration: float
    checks: int
    transcript_ids: list[int]


class TranscriptRow(SQLModel, table=True):
    """The frames of one connection; `number` is the report's transcript id within the run."""

    __tablename__ = "transcript"
    __table_args__ = (UniqueConstraint("run_id", "number", name="uq_transcript_run_number"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    number: int
    phase: str = Field(max_length=64)
    label: str = Field(max_length=512)
    frames: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    dropped: int = 0
    close_code: int | None = None
    close_reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    closed_by: str | None = Field(default=None, max_length=16)
