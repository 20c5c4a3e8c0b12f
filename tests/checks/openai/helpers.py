"""Running the openai-chat suite against an app served on a free 127.0.0.1 port."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from checks.core import Report, Verdict, run_suite
from checks.openai.suite import SUITE
from tests.checks.openenv.serving import serve_in_thread

FAST = {"timeout": 5.0, "concurrency": 4, "repeats": 2}


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    with serve_in_thread(app, ready_path="/v1/models") as url:
        yield url + "/v1"


async def check(url: str, options: dict[str, Any] | None = None, phases: list[str] | None = None) -> Report:
    return await run_suite(SUITE, url, {**FAST, **(options or {})}, phases=phases)


def verdicts(report: Report, *wanted: Verdict) -> dict[str, str]:
    return {r.clause_id: f"{r.verdict}: {r.actual}" for r in report.results.values() if r.verdict in wanted}


def verdict_of(report: Report, clause_id: str) -> Verdict | None:
    from checks.core import VERDICT_RANK

    found = [r.verdict for r in report.results.values() if r.clause_id == clause_id]
    return max(found, key=VERDICT_RANK.__getitem__) if found else None
