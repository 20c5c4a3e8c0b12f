"""A kind's conforming runs: the reference peer to start and the shortened options to run its suite with.

Each kind declares its runs in `checks/<kind>/conforming.py` (`RUNS`), named by the `conforming`
part of its record. They are the pass side of "no clause that cannot fail, and none that cannot
pass" (issue 19): tests/checks/test_every_clause_decidable.py drives every kind's runs in process
and requires each MUST and SHOULD clause decided `pass` on one of them (or on a real peer), so a
run declares what it takes to decide a clause `pass` that the default options leave undecided.
The declarations are data: nothing here starts a server or runs a suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ServerRun:
    """The suite of a server kind run against a reference server started in process.

    `start` is a "module:attribute" reference to an async `start(host, port, **start_args)` returning a
    running server (its `url`, an async `close()`), as a kind's `demo_server` is; the suite runs at its
    `url` with `options`, its `phases` (None: every phase) and, if `include_optional`, the optional ones.
    """

    name: str
    start: str
    options: Mapping[str, Any]
    start_args: Mapping[str, Any] = field(default_factory=dict)
    phases: tuple[str, ...] | None = None
    include_optional: bool = False


@dataclass(frozen=True)
class ClientRun:
    """The suite of a client kind, listening on a free port, graded on its reference client.

    `drive` is a "module:attribute" reference to an async `drive(url, **drive_args)` that runs the
    reference client against the URL the listening run announces, until the run ends (it is cancelled then).
    """

    name: str
    drive: str
    options: Mapping[str, Any]
    drive_args: Mapping[str, Any] = field(default_factory=dict)
    phases: tuple[str, ...] | None = None


ConformingRun = ServerRun | ClientRun
