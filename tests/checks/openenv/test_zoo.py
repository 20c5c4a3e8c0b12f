"""Each broken OpenEnv server in tests/zoo is flagged with its clause, and with nothing unrelated."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.core import Gate, Verdict
from tests.checks.openenv.envs import QUIZ_OPTIONS
from tests.checks.openenv.helpers import check, verdict_of, verdicts
from tests.checks.openenv.serving import serve_in_thread, wait_until_up
from tests.zoo.openenv.catalogue import ZOO

ROOT = Path(__file__).resolve().parents[3]


def test_the_zoo_has_at_least_twelve_broken_servers():
    assert len(ZOO) >= 12


@contextlib.contextmanager
def serve_process(module: str) -> Iterator[str]:
    """Run a zoo module as its own process (it may exit on hostile input); it prints its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", module],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    try:
        port = int(process.stdout.readline().strip())
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url + "/health", 20.0)
        yield url
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()


@pytest.mark.parametrize("name", list(ZOO))
async def test_broken_server_is_flagged_with_its_clause(name):
    """A MUST entry fails the run; a SHOULD entry (VERDICT = warn) passes it and fails only the strict gate."""
    entry = ZOO[name]
    options = {**QUIZ_OPTIONS, **entry.options}
    expected = entry.verdict
    server = serve_process(entry.start.__module__) if entry.run_as_process else serve_in_thread(entry.start())
    with server as url:
        report = await check(url, options)
    assert verdict_of(report, entry.clause) is expected, verdicts(report, Verdict.FAIL, Verdict.ERROR, Verdict.WARN)
    unrelated = set(verdicts(report, Verdict.FAIL, Verdict.WARN)) - {entry.clause} - entry.knock_on
    assert unrelated == set(), verdicts(report, Verdict.FAIL, Verdict.WARN)
    if entry.named is not None:  # the finding names the culprit, e.g. the refused property
        assert entry.named in " ".join(verdicts(report, expected)[entry.clause])
    if expected is Verdict.FAIL:
        assert report.outcome() == "fail"
    else:
        assert report.outcome() == "pass"
        assert report.outcome(Gate.STRICT) == "fail"
