"""What the client kinds' tests share (plugrl-client, rllink-client): the suite listens, announces its URL, and
a client is started against it, in-process or as `rlconform reference-client` beside `rlconform check --listen`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from checks.core import ListenPolicy, NullSink, Outcome, Report, Suite, run_suite

ROOT = Path(__file__).resolve().parents[2]


class Announcements(NullSink):
    """A sink that queues what the suite announces (its URL, and what to run against it)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def announce(self, url: str, message: str) -> None:
        self.queue.put_nowait((url, message))


async def grade_listening(
    suite: Suite,
    options: dict[str, Any],
    phases: list[str] | None,
    start_client: Callable[[str], Coroutine[Any, Any, Any]] | None,
    timeout: float,
) -> Report:
    """Run `suite` on 127.0.0.1 (port 0) and, once it announces its URL, `start_client(url)` beside it."""
    sink = Announcements()
    run = asyncio.create_task(run_suite(suite, "", options, phases, sink, listen=ListenPolicy("127.0.0.1", (0,))))
    url, _ = await asyncio.wait_for(sink.queue.get(), timeout=5)
    client = None if start_client is None else asyncio.create_task(start_client(url))
    try:
        return await asyncio.wait_for(run, timeout=timeout)
    finally:
        if client is not None:
            client.cancel()
            await asyncio.gather(client, return_exceptions=True)


def not_passed(report: Report) -> list[tuple[str, str, str]]:
    """The results other than pass, as (clause, verdict, actual): what a failed assertion shows."""
    return [(r.clause_id, r.verdict, r.actual) for r in report.results.values() if r.verdict != "pass"]


def assert_passes(report: Report) -> set[str]:
    """Every clause passes or is informational and the run passes; returns the clauses that passed."""
    bad = [(r.clause_id, r.verdict, r.actual) for r in report.results.values() if r.verdict not in ("pass", "info")]
    assert bad == []
    assert report.outcome() is Outcome.PASS
    return {r.clause_id for r in report.results.values() if r.verdict == "pass"}


def assert_fails_its_clause(report: Report, clause: str, verdict: str) -> None:
    assert verdict in {r.verdict for r in report.results.values() if r.clause_id == clause}, not_passed(report)


def assert_no_client_is_an_error(report: Report) -> None:
    assert report.outcome() is Outcome.ERROR
    assert all("no client connected" in r.actual for r in report.results.values() if r.verdict == "error")


def rlconform(*args: str) -> subprocess.Popen[str]:
    """`rlconform ARGS` from this checkout, its stdout a text pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def check_listen_passes_reference(kind: str, scheme: str, quick: Sequence[str], client: Sequence[str]) -> None:
    """`rlconform check KIND --listen` prints its SCHEME URL first, and `rlconform reference-client CLIENT URL`
    started on it passes: both exit 0."""
    check = rlconform("check", kind, "--listen", "127.0.0.1:0", "--option", "connect_deadline=20", *quick)
    started = None
    try:
        assert check.stdout is not None
        first = check.stdout.readline()
        assert first.startswith(f"waiting for a client at {scheme}://127.0.0.1:")
        url = first.split()[-1]
        started = rlconform("reference-client", client[0], url, *client[1:])
        assert check.wait(timeout=60) == 0, check.stdout.read()
        assert started.wait(timeout=30) == 0
    finally:
        for process in (check, started):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def check_no_client_exits_2(kind: str) -> None:
    """`rlconform check KIND --listen` that no client connects to exits 2 and says so."""
    check = rlconform("check", kind, "--listen", "127.0.0.1:0", "--option", "connect_deadline=0.5")
    try:
        output, _ = check.communicate(timeout=30)
    finally:
        if check.poll() is None:
            check.kill()
            check.wait()
    assert check.returncode == 2
    assert "no client connected" in output
