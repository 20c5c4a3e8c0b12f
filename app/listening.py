"""Listen-mode runs in the service: where they may listen, whom they accept, what they announce.

A client-kind run listens on the worker that executes it, with that worker's
`RLCONFORM_LISTEN_HOST` / `RLCONFORM_LISTEN_PORTS`, and accepts clients only
from sources `RLCONFORM_ALLOWED_NETWORKS` admits. What the run announces (the
URL to connect to, or a request to restart the client) is stored on the run
tagged with its attempt, so a run re-queued to another worker shows the new
worker's URL and never a dead one.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.models import Run, RunStatus, utcnow
from app.netpolicy import NetworkRefused, source_allowed
from checks.core import ListenPolicy, SuiteOptions
from checks.listen import split_host_port
from checks.registry import find_suite

WILDCARDS = ("0.0.0.0", "::")
# The command a run page offers; the README installs rlconform in .venv.
REFERENCE_CLIENT_COMMAND = ".venv/bin/rlconform reference-client {kind} {url}"
# A client reconnecting through a run's scenarios comes from a new port each time; a run names this many.
MAX_CLIENTS_NAMED = 20


class ListenRefused(NetworkRefused):
    """The run's `listen` option names an address this worker's listen settings do not allow."""


def listen_policy(
    host: str, ports: Sequence[int], allowed_networks: Sequence[str], options: SuiteOptions
) -> ListenPolicy:
    """Where this worker lets the run listen; ListenRefused when its `listen` option asks for elsewhere."""
    ports = tuple(ports) or (0,)
    requested = getattr(options, "listen", None)
    if requested:
        want_host, want_port = split_host_port(requested)
        if want_host != host or (ports != (0,) and want_port not in ports):
            span = "any port" if ports == (0,) else f"ports {ports[0]}-{ports[-1]}"
            raise ListenRefused(
                f"listen={requested} is outside this worker's listen settings ({host or 'any address'}, {span}; "
                "RLCONFORM_LISTEN_HOST / RLCONFORM_LISTEN_PORTS)"
            )
    allow = functools.partial(_source_allowed, tuple(allowed_networks))
    return ListenPolicy(host=host, ports=ports, allow=allow)


def _source_allowed(allowed: Sequence[str], address: str) -> bool:
    return source_allowed(address, allowed)


@dataclass(frozen=True)
class Announcing:
    """Turns one attempt's announcements into what the run stores."""

    attempt: int
    worker: str
    connect_deadline: float
    listen_host: str

    def stored(self, url: str, message: str, earlier: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the run stores of an announcement; the clients an `earlier` one named are kept."""
        if self.listen_host in WILDCARDS:  # a wildcard address reaches nobody: name this machine instead
            shown = f"[{self.listen_host}]" if ":" in self.listen_host else self.listen_host
            here = socket.gethostname()
            url, message = url.replace(f"{shown}:", f"{here}:", 1), message.replace(f"{shown}:", f"{here}:")
        now = utcnow()
        return {
            "url": url,
            "message": message,
            "at": now.isoformat(),
            "deadline": (now + timedelta(seconds=self.connect_deadline)).isoformat(),
            "attempt": self.attempt,
            "worker": self.worker,
            "waiting": True,
            "clients": list((earlier or {}).get("clients", [])),
        }


def answered(announcement: dict[str, Any]) -> dict[str, Any]:
    """The announcement once the run moved on (a client connected, or the wait ended)."""
    return {**announcement, "waiting": False}


def with_client(announcement: dict[str, Any], address: str) -> dict[str, Any]:
    """The announcement answered by a client from `address` (HOST:PORT), which it names from now on."""
    clients = list(announcement.get("clients", []))
    if address not in clients and len(clients) < MAX_CLIENTS_NAMED:
        clients.append(address)
    return {**answered(announcement), "clients": clients}


def current_announcement(run: Run) -> dict[str, Any] | None:
    """The announcement of the attempt executing the run now; an earlier attempt's URL is dead."""
    announcement = run.announcement
    if not announcement or announcement.get("attempt") != run.attempts:
        return None
    return announcement


def reference_command(reference_client: str, url: str) -> str:
    return REFERENCE_CLIENT_COMMAND.format(kind=reference_client, url=url) if reference_client else ""


def announcement_view(run: Run) -> dict[str, Any] | None:
    """What a live run page shows of the announcement: the URL, the command, seconds left to connect."""
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        return None
    announcement = current_announcement(run)
    if announcement is None:
        return None
    suite = find_suite(run.kind)
    deadline = datetime.fromisoformat(announcement["deadline"])
    return {
        **announcement,
        "remaining": max(0, round((deadline - utcnow()).total_seconds())),
        "command": reference_command(suite.reference_client if suite else "", announcement["url"]),
    }
