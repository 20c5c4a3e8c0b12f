"""Service settings from `RLCONFORM_*` environment variables; `rlconform serve` flags override them."""

from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from croniter import croniter
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url

from app.names import label_problem
from app.netpolicy import HOST_NAME, UNIX_PREFIX
from checks.spec import SPEC_PATH


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RLCONFORM_", extra="ignore")

    database_url: str = Field("sqlite:///./rlconform.db", description="SQLAlchemy URL of the results database.")
    database_password: SecretStr | None = Field(
        None,
        description="The database password, kept out of `database_url` so that it needs no URL escaping.",
    )
    host: str = Field("127.0.0.1", description="Address the service binds.")
    port: int = Field(8080, ge=0, le=65535)
    max_concurrent_runs: int = Field(4, ge=1, le=256, description="Runs executed at the same time.")
    run_processes: int = Field(
        default_factory=lambda: min(2, os.cpu_count() or 1),
        ge=0,
        le=64,
        description="Embedded mode: run processes started beside the web process, so runs use more than one "
        "core (default: 2, or 1 on a one-core machine); 0 executes every run in the web process.",
    )
    api_token: SecretStr | None = Field(
        None,
        description="When set, every write needs `Authorization: Bearer`: at least 16 characters, no whitespace.",
    )
    auth_failures_per_minute: int = Field(
        10, ge=1, description="Failed logins and wrong bearer tokens a client may send a minute before 429."
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names and addresses the service answers to in `Host` (comma separated, `*` for any); "
        "empty: localhost, 127.0.0.1 and [::1], and with RLCONFORM_HOST=0.0.0.0 also this machine's names "
        "and addresses. Any other `Host` gets 400 (DNS rebinding).",
    )
    demo: bool = Field(True, description="Start each in-process reference server and register it as a demo target.")
    allowed_networks: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="CIDRs, host names and `unix:` sockets runs may connect to (comma separated); empty: any "
        "address but link-local and cloud metadata ones (169.254.0.0/16, fe80::/10, fd00:ec2::254), no Unix socket.",
    )
    retention_runs: int = Field(500, ge=1, description="Finished runs kept per target; older ones are pruned.")
    retention_whole_passing: int = Field(
        20,
        ge=0,
        description="Clean passing runs per target whose transcripts are kept whole; older ones keep summaries "
        "(runs that failed, errored or warned keep theirs whole).",
    )
    scheduler_interval: float = Field(30.0, gt=0, description="Seconds between checks for scheduled runs.")
    spec_path: Path = Field(SPEC_PATH, description="The SPEC.md that clause pages quote.")
    public_url: str = Field("", description="Base URL of the dashboard for links in notifications.")
    listen_host: str = Field(
        "",
        description="Address client-kind runs listen on for the client they grade; empty: the address the "
        "service binds. With 0.0.0.0 the announced URL names this machine's host name.",
    )
    listen_ports: Annotated[tuple[int, ...], NoDecode] = Field(
        (0,),
        description="Ports client-kind runs may listen on, e.g. `9000-9100` or `9000,9005`; empty: any free port.",
    )

    # -- scale-out (PostgreSQL): workers, leases, schedules, webhooks
    executor: Literal["auto", "embedded", "workers"] = Field(
        "auto",
        description="Who executes runs: `embedded` (this process), `workers` (procrastinate workers, "
        "PostgreSQL only); `auto` picks workers on PostgreSQL, embedded on SQLite.",
    )
    service_labels: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["default"],
        description="In workers mode, worker labels this service also executes itself (comma separated; empty: none).",
    )
    lease_seconds: float = Field(30.0, gt=0, description="A running run's lease; re-queued when not renewed in time.")
    max_attempts: int = Field(3, ge=1, description="Executions of a run before it ends `interrupted`.")
    tap_flush_seconds: float = Field(2.0, gt=0, le=3600, description="How often a tap run writes its counters.")
    tap_judging: Literal["thread", "process"] = Field(
        "process",
        description="Where a hosted tap judges: a judging process of its own (spawned), so judging never holds the "
        "GIL the relay needs, or a thread of the worker.",
    )
    worker_heartbeat: float = Field(10.0, gt=0, description="Seconds between a worker's heartbeats.")
    poll_interval: float = Field(5.0, gt=0, description="Workers' fallback poll for jobs (LISTEN/NOTIFY is first).")
    shutdown_grace: float = Field(20.0, ge=0, description="A draining worker's wait before handing runs back.")
    schedule_tick_cron: str = Field(
        "* * * * * *",
        description="How often schedules are looked at (cron, 6th field seconds): a run is queued within one "
        "tick of its due time.",
    )
    ops_tick_cron: str = Field("* * * * * */5", description="How often leases and webhooks are looked at.")
    retention_tick_cron: str = Field(
        "17 * * * *", description="How often retention is applied to every target, idle ones included."
    )
    webhook_attempts: int = Field(6, ge=1, description="Deliveries of one notification before giving up.")
    webhook_backoff: float = Field(2.0, gt=0, description="First retry delay in seconds; doubles each time.")

    @field_validator("schedule_tick_cron", "ops_tick_cron", "retention_tick_cron", mode="after")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        if not croniter.is_valid(value):
            raise ValueError(f"{value!r} is not a cron expression (5 fields, or 6 with seconds last)")
        return value

    @field_validator("service_labels", mode="before")
    @classmethod
    def _split_labels(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("service_labels")
    @classmethod
    def _whole_labels(cls, labels: list[str]) -> list[str]:
        problem = next(filter(None, map(label_problem, labels)), None)
        if problem:
            raise ValueError(problem)
        return labels

    @field_validator("listen_ports", mode="before")
    @classmethod
    def _port_range(cls, value: object) -> object:
        return parse_ports(value) if isinstance(value, str) else value

    @property
    def listen_address(self) -> str:
        return self.listen_host or self.host

    @property
    def uses_workers(self) -> bool:
        if self.executor == "auto":
            return self.database_url.startswith("postgresql")
        return self.executor == "workers"

    @field_validator("allowed_networks", "allowed_hosts", mode="before")
    @classmethod
    def _split_networks(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("allowed_networks", mode="after")
    @classmethod
    def _networks_or_names(cls, entries: list[str]) -> list[str]:
        # A mistyped CIDR would otherwise become a host name that matches nothing, silently.
        for entry in entries:
            if entry.startswith(UNIX_PREFIX) and len(entry) > len(UNIX_PREFIX):
                continue  # a Unix socket runs may use, named whole
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                if not HOST_NAME.fullmatch(entry.removeprefix("*.")):
                    raise ValueError(f"{entry!r} is neither a CIDR (10.0.0.0/8) nor a host name (*.internal)") from None
        return entries

    @model_validator(mode="after")
    def _password_into_url(self) -> Settings:
        if self.database_password is not None:
            url = make_url(self.database_url).set(password=self.database_password.get_secret_value())
            self.database_url = url.render_as_string(hide_password=False)  # escapes `@`, `:`, `/`, `%`...
        return self

    @field_validator("api_token", mode="after")
    @classmethod
    def _empty_token_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        token = value.get_secret_value()
        if any(character.isspace() for character in token):
            # A form login would take it as typed while `Bearer` headers are stripped: writes would fail.
            raise ValueError("the API token contains whitespace (a space, tab or newline); remove it")
        if len(token) < MIN_TOKEN_LENGTH:
            raise ValueError(f"the API token is {len(token)} characters; use at least {MIN_TOKEN_LENGTH}")
        return value


MAX_LISTEN_PORTS = 65535
MIN_TOKEN_LENGTH = 16  # a shorter token is guessed too soon, even at 10 tries a minute


def parse_ports(text: str) -> tuple[int, ...]:
    """`9000-9100,9200` as the ports it names, in order; empty text is (0,): any free port."""
    ports: list[int] = []
    for part in (part.strip() for part in text.split(",")):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
        except ValueError:
            raise ValueError(f"{part!r} is neither a port (9000) nor a range (9000-9100)") from None
        if not 1 <= low <= high <= MAX_LISTEN_PORTS:
            raise ValueError(f"{part!r}: ports run from 1 to 65535, low to high")
        ports.extend(range(low, high + 1))
    return tuple(dict.fromkeys(ports)) or (0,)


@lru_cache
def get_settings() -> Settings:
    return Settings()
