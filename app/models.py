"""Tables and API shapes: targets, runs, clause results and transcripts.

Base classes hold the fields users send, `*Create`/`*Update` validate input,
`*Public` is what the API returns, and the `table=True` classes are stored.
"""

from __future__ import annotations

import enum
import json
import zlib
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import JSON, BigInteger, Boolean, Column, Index, LargeBinary, String, Text, UniqueConstraint, false
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import relationship
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel
from sqlmodel.main import SQLModelConfig

from app.models_clause import ClauseMessage
from app.models_clause import ClauseResultPublic as ClauseResultPublic
from app.models_history import ClauseHistory as ClauseHistory
from app.models_history import DiffCounts as DiffCounts
from app.models_history import DiffEntry as DiffEntry
from app.models_history import HistoryCell as HistoryCell
from app.models_history import RunDiff as RunDiff
from app.models_history import RunSummary as RunSummary
from app.models_history import TargetHistory as TargetHistory
from app.models_history import TrendPoint as TrendPoint
from app.names import LABEL_PATTERN as LABEL_PATTERN
from app.run_status import RunStatus as RunStatus
from checks.core import Gate, Outcome


def utcnow() -> datetime:
    return datetime.now(UTC)


# Ids and numbers are 32-bit INTEGER columns on PostgreSQL; a larger one can name no row, and
# must get a 404/422 rather than an overflow from the database driver.
DB_INT_MAX = 2**31 - 1


def parse_row_id(text: str) -> int | None:
    """`text` as a row id when it is plain ASCII digits within the database's range, else None."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        return None
    value = int(text)
    return value if value <= DB_INT_MAX else None


def stored_id(row: Target | Run) -> int:
    """The id of a row that is in the database (the models allow None only before the first insert)."""
    if row.id is None:
        raise ValueError(f"this {type(row).__name__} is not stored yet")
    return row.id


ENDED_STATUSES = {RunStatus.FINISHED, RunStatus.CANCELLED, RunStatus.INTERRUPTED}

DEFAULT_LABEL = "default"


class _EnumColumn(TypeDecorator[enum.StrEnum]):
    """A string enum stored as its value in a VARCHAR(16), as the schema has always had it."""

    impl = String
    cache_ok = True
    enum_type: type[enum.StrEnum]

    def __init__(self) -> None:
        super().__init__(length=16)

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else str(self.enum_type(value))

    def process_result_value(self, value: str | None, dialect: Dialect) -> enum.StrEnum | None:
        return None if value is None else self.enum_type(value)


class CompressedJSON(TypeDecorator[Any]):
    """A JSON value stored zlib-compressed: transcripts are most of a fleet's database, and compress ~8x."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        # Bytes are compressed already (`app.batch_writes` does it before its transaction); a JSON value never is.
        return value if value is None or isinstance(value, bytes) else compress_json(value)

    def process_result_value(self, value: bytes | None, dialect: Dialect) -> Any:
        return None if value is None else decompress_json(value)


def compress_json(value: Any) -> bytes:
    return compress_json_text(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def compress_json_text(text: str) -> bytes:
    """What `CompressedJSON` stores for a value whose JSON text is `text`."""
    return zlib.compress(text.encode(), 6)


def decompress_json(data: bytes) -> Any:
    return json.loads(zlib.decompress(data))


class RunStatusColumn(_EnumColumn):
    cache_ok = True  # SQLAlchemy reads it from each class itself
    enum_type = RunStatus


class OutcomeColumn(_EnumColumn):
    cache_ok = True  # SQLAlchemy reads it from each class itself
    enum_type = Outcome


class GateColumn(_EnumColumn):
    cache_ok = True  # SQLAlchemy reads it from each class itself
    enum_type = Gate


# ---------------------------------------------------------------- targets


class TargetBase(SQLModel):
    name: str = Field(min_length=1, max_length=64, regex=r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", index=True, unique=True)
    kind: str = Field(max_length=32)
    url: str = Field(default="", max_length=2048)  # empty for client kinds: their runs listen
    description: str = Field(default="", max_length=2000)
    gate: str = Field(default="default", max_length=16)  # checks.core.Gate
    schedule_minutes: int | None = Field(default=None, ge=1, le=7 * 24 * 60)
    # The queue its runs go to: only workers started with this label execute them (inside that network).
    worker_label: str = Field(default=DEFAULT_LABEL, max_length=64, regex=LABEL_PATTERN)


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
    model_config = SQLModelConfig(extra="forbid")  # a misspelt or read-only field (e.g. name) is an error, not a no-op

    kind: str | None = None
    url: str | None = None
    description: str | None = None
    gate: str | None = None
    schedule_minutes: int | None = None
    worker_label: str | None = None
    options: dict[str, Any] | None = None
    expected_failures: list[str] | None = None


class TargetPublic(TargetBase):
    id: int
    options: dict[str, Any]  # secrets redacted
    expected_failures: list[str]
    created_at: datetime
    updated_at: datetime


# ---------------------------------------------------------------- runs


class RunBase(SQLModel):
    """The fields a stored run and its API shape share."""

    status: RunStatus = Field(default=RunStatus.QUEUED, sa_type=RunStatusColumn, index=True)
    outcome: Outcome | None = Field(default=None, sa_type=OutcomeColumn)
    phases: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    options: dict[str, Any] = Field(default_factory=dict, sa_type=JSON, nullable=False)  # redacted snapshot
    kind: str = Field(max_length=32)
    url: str = Field(max_length=2048)
    gate: Gate = Field(default=Gate.DEFAULT, sa_type=GateColumn)
    expected_failures: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    harness_version: str = Field(max_length=32)
    spec_version: str = Field(max_length=32)
    trigger: str = Field(default="api", max_length=16)  # api, browser, schedule, ci
    current_phase: str | None = Field(default=None, max_length=64)
    total_clauses: int = 0
    decided_clauses: int = 0
    counts: dict[str, int] = Field(default_factory=dict, sa_type=JSON, nullable=False)
    message: str = Field(default="", sa_type=Text, nullable=False)
    # Listen-mode runs: what the executing attempt announced last (app.listening: url, deadline, attempt...).
    announcement: dict[str, Any] | None = Field(default=None, sa_type=JSON, nullable=True)
    # When this service started the kind's reference client for the run ("Run the reference client").
    client_started_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow, index=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None


class Run(RunBase, table=True):
    __table_args__ = (
        Index("ix_run_target_created", "target_id", "created_at"),
        # One run per schedule tick, however many dispatchers saw the tick (NULLs never clash).
        Index("uq_run_target_scheduled_for", "target_id", "scheduled_for", unique=True),
        # Ids are never reused once a target's runs are deleted: links from CI and webhooks name one run forever.
        {"sqlite_autoincrement": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    target_id: int = Field(foreign_key="target.id", index=True)
    worker_label: str = Field(default=DEFAULT_LABEL, max_length=64)
    scheduled_for: datetime | None = None  # the schedule tick this run was queued for
    # Execution lease: whoever holds attempt `attempts` renews `lease_until`; expired, the run is re-queued.
    attempts: int = 0
    lease_until: datetime | None = Field(default=None, index=True)
    worker: str | None = Field(default=None, max_length=200)
    # the procrastinate job executing it (workers mode); its ids are bigint
    job_id: int | None = Field(default=None, sa_type=BigInteger)
    finished_phases: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class RunAttempt(SQLModel, table=True):
    """One execution attempt of a run: who ran it and how it ended."""

    __tablename__ = "run_attempt"
    __table_args__ = (UniqueConstraint("run_id", "number", name="uq_run_attempt_run_number"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    number: int
    worker: str = Field(max_length=200)
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    ending: str = Field(default="", max_length=32)  # finished, cancelled, handed back, lease expired...


class RunCreate(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    phases: list[str] | None = None
    options: dict[str, Any] | None = None  # overrides on top of the target's options
    # Clause ids allowed to fail in this run, on top of the target's own list.
    expected_failures: list[str] = Field(default_factory=list)
    trigger: Literal["api", "ci"] = "api"  # browser and schedule runs are started by the service itself


class RunPublic(RunBase):
    id: int
    target: str


# ---------------------------------------------------------------- results


class ClauseResultRow(SQLModel, table=True):
    """One decided clause of one phase of a run; written as soon as it is decided."""

    __tablename__ = "clause_result"
    id: int | None = Field(default=None, primary_key=True)
    # Every read names the run, so this one index serves them all and the foreign key. One row per
    # (run, phase, clause) is kept by the one writer the run's lease admits (app.recording), not by an
    # index of those strings, which on PostgreSQL was a fifth of a fleet's database (revision 0006).
    run_id: int = Field(foreign_key="run.id", index=True)
    phase: str = Field(max_length=64)
    clause_id: str = Field(max_length=128)
    level: str = Field(max_length=8)
    verdict: str = Field(max_length=16)
    message_id: int = Field(foreign_key="clause_message.id")  # its texts (`app.models_clause.message_id`)
    duration: float = 0.0
    checks: int = 1
    transcript_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    decided_at: datetime = Field(default_factory=utcnow)

    @property
    def expected(self) -> str:
        return str(getattr(self, "message").expected)  # noqa: B009 - `message` is mapped after the class

    @property
    def actual(self) -> str:
        return str(getattr(self, "message").actual)  # noqa: B009


# Joined into every read of whole rows, so a result carries its texts as it did when they were columns.
setattr(ClauseResultRow, "message", relationship(ClauseMessage, lazy="joined", innerjoin=True, viewonly=True))  # noqa: B010


class TranscriptRow(SQLModel, table=True):
    """The frames of one connection; `number` is the report's transcript id within the run.

    `frames` is stored compressed. A transcript of an older clean passing run is kept as a
    summary (`summarised`): its label and close, with its frames counted in `dropped`
    (`app.retention` decides which runs keep theirs whole).
    """

    __tablename__ = "transcript"

    # The key, and the run's index: results name a transcript by its number in the run, nothing by a row id.
    run_id: int = Field(foreign_key="run.id", primary_key=True)
    number: int = Field(primary_key=True)
    phase: str = Field(max_length=64)
    label: str = Field(max_length=512)
    frames: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(CompressedJSON, nullable=False))
    dropped: int = 0
    summarised: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default=false()))
    close_code: int | None = None
    close_reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    closed_by: str | None = Field(default=None, max_length=16)


# ---------------------------------------------------------------- workers, schedules, webhooks


class Worker(SQLModel, table=True):
    """A process executing runs (`rlconform worker`, or a service consuming labels itself)."""

    __tablename__ = "worker"

    name: str = Field(primary_key=True, max_length=200)
    host: str = Field(max_length=255)
    labels: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    concurrency: int = 1
    started_at: datetime = Field(default_factory=utcnow)
    heartbeat: datetime = Field(default_factory=utcnow, index=True)


class Schedule(SQLModel, table=True):
    """When a target gets a run on its own: a cron expression or an interval."""

    __tablename__ = "schedule"

    id: int | None = Field(default=None, primary_key=True)
    target_id: int = Field(foreign_key="target.id", unique=True)
    cron: str | None = Field(default=None, max_length=128)
    interval_seconds: int | None = None
    include_destructive: bool = False  # scheduled runs include opt-in destructive phases only when set
    created_at: datetime = Field(default_factory=utcnow)


class ScheduleIn(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    cron: str | None = Field(default=None, max_length=128)
    interval_seconds: int | None = Field(default=None, ge=1, le=7 * 24 * 3600)
    include_destructive: bool = False


class Webhook(SQLModel, table=True):
    __tablename__ = "webhook"

    id: int | None = Field(default=None, primary_key=True)
    target_id: int = Field(foreign_key="target.id", index=True)
    url: str = Field(max_length=2048)
    slack: bool = False  # a Slack-compatible body ({"text": ...}) instead of the full JSON
    created_at: datetime = Field(default_factory=utcnow)


class WebhookIn(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    url: str = Field(max_length=2048)
    slack: bool = False


class WebhookDelivery(SQLModel, table=True):
    """One notification of one ended run to one webhook, with its retries."""

    __tablename__ = "webhook_delivery"

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: int = Field(foreign_key="webhook.id", index=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    body: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: str = Field(default="pending", max_length=16, index=True)  # pending, delivered, failed
    attempts: int = 0
    next_attempt_at: datetime = Field(default_factory=utcnow)
    last_status: int | None = None
    last_error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    created_at: datetime = Field(default_factory=utcnow)
    delivered_at: datetime | None = None


# ---------------------------------------------------------------- parity runs and goldens


class ParityRun(SQLModel, table=True):
    """What makes a run a parity run: the other side, and what the comparison found.

    The run row itself (first target, label, status, lease) is an ordinary run, so a
    parity run is queued, claimed and executed like one; the second side is a target
    or a golden. Neither reference is a foreign key: deleting the second target or
    the golden leaves the finished comparison readable, with the names kept here.
    """

    __tablename__ = "parity_run"

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    second_target_id: int | None = None
    second_name: str = Field(max_length=128)  # the second target's name, or "golden NAME"
    golden_id: int | None = None
    script_version: str = Field(default="", max_length=32)
    verdict: str | None = Field(default=None, max_length=16)  # checks.parity.script.Status once finished
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # The golden documents of both sides (None where a side was not recorded), for saving one as a golden.
    recordings: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class Golden(SQLModel, table=True):
    """A saved recording (the `rlconform parity --golden` file) a later run of one target is compared with."""

    __tablename__ = "golden"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=64, unique=True, index=True)
    kind: str = Field(max_length=32)
    source: str = Field(default="", max_length=2048)  # the target or file it was recorded from
    source_run_id: int | None = None
    script_version: str = Field(default="", max_length=32)
    document: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
