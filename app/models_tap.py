"""Tables and API shapes of taps in the service: a target that is a tap, and each window a tap run judged.

A tap target is an ordinary `Target` (its kind is the upstream's kind, its URL the upstream) plus a
`TapTarget` row: where the tap listens and when its windows roll over. Every window of traffic is an
ordinary `Run` (so history, diffs and flaky marks read it like any run) plus a `TapWindow` row holding
the window's live counters: per clause judged / violated / first and last violation with their
evidence, messages per second, unjudged messages. The counters are written every few seconds, not per
message; a window that closed also has its clauses as `ClauseResultRow`s of phase `tap`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index
from sqlmodel import Field, SQLModel
from sqlmodel.main import SQLModelConfig

from app.models import DEFAULT_LABEL, LABEL_PATTERN, TargetPublic, utcnow

TAP_PHASE = "tap"  # the phase name of a tap window's clause results


class TapTarget(SQLModel, table=True):
    """What makes a target a tap: where it listens (empty: the worker's listen settings) and its rollover."""

    __tablename__ = "tap_target"

    target_id: int = Field(foreign_key="target.id", primary_key=True)
    listen: str = Field(default="", max_length=300)  # HOST:PORT within RLCONFORM_LISTEN_HOST / _PORTS
    roll_seconds: float | None = None
    roll_messages: int | None = None
    tap_options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class TapWindow(SQLModel, table=True):
    """One window of a tap's traffic: the run it is, and its counters as last written."""

    __tablename__ = "tap_window"
    __table_args__ = (Index("ix_tap_window_session", "session_id", "number"),)

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    session_id: str = Field(max_length=64)  # one tap's windows share it (a hosted tap: "run-<first run id>")
    number: int = 1  # the window's place in its tap, from 1
    listen_url: str = Field(default="", max_length=300)  # where clients connect (a hosted tap)
    ledger: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    messages_per_second: float = 0.0
    added_latency_ms: float | None = None  # measured by the tap when it can (None: not measured)
    unjudged: int = 0
    closed: bool = False
    updated_at: datetime = Field(default_factory=utcnow)


# ---------------------------------------------------------------- API shapes


class TapSettings(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    listen: str = Field(default="", max_length=300)
    roll_seconds: float | None = Field(default=None, gt=0, le=7 * 24 * 3600)
    roll_messages: int | None = Field(default=None, ge=1, le=2**31 - 1)
    options: dict[str, str] = Field(default_factory=dict)  # the tap's own options, e.g. preset=miles-session


class TapTargetCreate(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    kind: str = Field(max_length=32)
    upstream: str = Field(max_length=2048)
    description: str = Field(default="", max_length=2000)
    worker_label: str = Field(default=DEFAULT_LABEL, max_length=64, regex=LABEL_PATTERN)
    tap: TapSettings = Field(default_factory=TapSettings)


class TapTargetPublic(SQLModel):
    target: TargetPublic
    tap: TapSettings


class ViolationDoc(SQLModel):
    at: float = 0.0
    expected: str = Field(default="", max_length=4000)
    actual: str = Field(default="", max_length=4000)
    window: list[str] = Field(default_factory=list, max_length=20)


class ClauseTallyDoc(SQLModel):
    """One clause of a window as `checks.tap.ledger.Tally.to_dict` writes it."""

    clause_id: str = Field(max_length=128)
    level: str = Field(max_length=8)
    verdict: str = Field(max_length=16)
    judged: int = Field(default=0, ge=0)
    violated: int = Field(default=0, ge=0)
    errors: int = Field(default=0, ge=0)
    first_violation: ViolationDoc | None = None
    last_violation: ViolationDoc | None = None
    note: str = Field(default="", max_length=4000)


class LedgerDoc(SQLModel):
    """One window as `checks.tap.ledger.Ledger.to_dict` writes it."""

    seconds: float = Field(default=0.0, ge=0)
    connections: int = Field(default=0, ge=0)
    messages: int = Field(default=0, ge=0)
    judged_messages: int = Field(default=0, ge=0)
    unjudged_messages: int = Field(default=0, ge=0)
    outcome: str = Field(default="", max_length=16)
    clauses: list[ClauseTallyDoc] = Field(default_factory=list, max_length=2000)
    # The tap's own read-to-forward time (`RelayStats.forward_latency`), on an open window's counters.
    forward_p50_ms: float | None = Field(default=None, ge=0)
    forward_p99_ms: float | None = Field(default=None, ge=0)


class TapWindowPost(SQLModel):
    """One window a standalone tap (`rlconform tap --post`) sends: its counters so far, or once closed."""

    model_config = SQLModelConfig(extra="forbid")

    session_id: str = Field(min_length=1, max_length=64, regex=r"^[A-Za-z0-9._-]+\Z")
    number: int = Field(ge=1, le=2**31 - 1)
    closed: bool
    kind: str = Field(max_length=32)
    upstream: str = Field(default="", max_length=2048)
    messages_per_second: float = Field(default=0.0, ge=0)
    ledger: LedgerDoc


class TapWindowPublic(SQLModel):
    run_id: int
    session_id: str
    number: int
    closed: bool
    listen_url: str
    messages_per_second: float
    added_latency_ms: float | None
    unjudged: int
    ledger: dict[str, Any]
    updated_at: datetime
