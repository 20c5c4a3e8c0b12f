"""Tables and API shapes of "can I deploy?": which implementation and version each run checked, and what is
deployed where.

A run's identity (`run_identity`) is given by CI (`rlconform ci --version`) or read from the wire once its
suite ends (`checks.identity`); a version given wins over one read. A deployment (`deployment`) says a
target's version runs in an environment: an environment holds one current version per target (recording
another replaces it), while released versions (`released`, as Pact's record-release) coexist beside it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import field_validator
from sqlalchemy import Column, ForeignKey, Integer, UniqueConstraint
from sqlmodel import Field, SQLModel
from sqlmodel.main import SQLModelConfig

from app.models import utcnow

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # an environment's name, as a target's
# A version as CI names it: a tag, a semver, a git SHA; no spaces nor slashes, so it reads in a URL and a matrix.
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+:~-]*$"

IdentitySource = Literal["wire", "given"]


def whole_match(pattern: str, value: str, what: str) -> str:
    """`value` when all of it matches `pattern` (a trailing newline included: `$` alone would let one by)."""
    if re.fullmatch(pattern.removeprefix("^").removesuffix("$"), value) is None:
        raise ValueError(f"{what} must match {pattern}")
    return value


class RunIdentity(SQLModel, table=True):
    """The implementation and version one run checked; absent when neither CI nor the wire said."""

    __tablename__ = "run_identity"

    run_id: int = Field(sa_column=Column(Integer, ForeignKey("run.id", ondelete="CASCADE"), primary_key=True))
    implementation: str | None = Field(default=None, max_length=128)
    version: str | None = Field(default=None, max_length=128, index=True)
    source: str = Field(max_length=8)  # IdentitySource: where `version` came from
    evidence: str = Field(default="", max_length=500)  # what the wire showed, when it was read
    read_at: datetime = Field(default_factory=utcnow)


class Deployment(SQLModel, table=True):
    """A target's version running in an environment: its current one, or a released one beside it."""

    __tablename__ = "deployment"
    __table_args__ = (
        UniqueConstraint("environment", "target_id", "version", "released", name="uq_deployment_version"),
    )

    id: int | None = Field(default=None, primary_key=True)
    environment: str = Field(max_length=64, index=True)
    target_id: int = Field(sa_column=Column(Integer, ForeignKey("target.id", ondelete="CASCADE"), nullable=False))
    version: str = Field(max_length=128)
    released: bool = False
    recorded_at: datetime = Field(default_factory=utcnow)


# ---------------------------------------------------------------- API shapes


class _VersionChecked(SQLModel):
    """A body whose `version` (a field of the subclass, in its own place) must match VERSION_PATTERN whole."""

    @field_validator("version", check_fields=False)
    @classmethod
    def _whole_version(cls, value: str) -> str:
        return whole_match(VERSION_PATTERN, value, "a version")


class VersionGiven(_VersionChecked):
    """The version CI names for a run (`rlconform ci --version`), and optionally the implementation."""

    model_config = SQLModelConfig(extra="forbid")

    version: str = Field(min_length=1, max_length=128, regex=VERSION_PATTERN)
    implementation: str | None = Field(default=None, min_length=1, max_length=128)


class RunIdentityPublic(SQLModel):
    run_id: int
    implementation: str | None
    version: str | None
    source: str
    evidence: str
    read_at: datetime


class DeploymentCreate(_VersionChecked):
    model_config = SQLModelConfig(extra="forbid")

    target: str = Field(min_length=1, max_length=64)
    version: str = Field(min_length=1, max_length=128, regex=VERSION_PATTERN)
    environment: str = Field(min_length=1, max_length=64, regex=NAME_PATTERN)
    released: bool = False  # beside the current version (record-release), not replacing it

    @field_validator("environment")
    @classmethod
    def _whole_name(cls, value: str) -> str:
        return whole_match(NAME_PATTERN, value, "an environment's name")


class DeploymentPublic(SQLModel):
    environment: str
    target: str
    kind: str
    version: str
    released: bool
    recorded_at: datetime


class EnvironmentPublic(SQLModel):
    name: str
    deployments: list[DeploymentPublic]
