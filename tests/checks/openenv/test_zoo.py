"""Each broken OpenEnv server in tests/zoo is flagged with its clause, and with nothing unrelated."""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.zoo
from checks.core import Gate, Verdict
from tests.checks.openenv.envs import QUIZ_OPTIONS
from tests.checks.openenv.helpers import check, verdict_of, verdicts
from tests.checks.openenv.serving import serve_in_thread, wait_until_up

ROOT = Path(__file__).resolve().parents[3]
ZOO = sorted(
    name
    for _, name, _ in pkgutil.iter_modules(tests.zoo.__path__)
    if name.startswith("openenv_") and name != "openenv_handmade"
)


def test_the_zoo_has_at_least_twelve_broken_servers():
    assert len(ZOO) >= 12


@contextlib.contextmanager
def serve_process(module: str) -> Iterator[str]:
    """Run a zoo module as its own process (it may exit on hostile input); it prints its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"tests.zoo.{module}"],
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


@pytest.mark.parametrize("module", ZOO)
async def test_broken_server_is_flagged_with_its_clause(module):
    """A MUST entry fails the run; a SHOULD entry (VERDICT = warn) passes it and fails only the strict gate."""
    entry = importlib.import_module(f"tests.zoo.{module}")
    options = {**QUIZ_OPTIONS, **entry.OPTIONS}
    expected = getattr(entry, "VERDICT", Verdict.FAIL)
    server = serve_process(module) if getattr(entry, "RUN_AS_PROCESS", False) else serve_in_thread(entry.make_app())
    with server as url:
        report = await check(url, options)
    assert verdict_of(report, entry.EXPECTED) is expected, verdicts(report, Verdict.FAIL, Verdict.ERROR, Verdict.WARN)
    unrelated = set(verdicts(report, Verdict.FAIL, Verdict.WARN)) - {entry.EXPECTED} - entry.ALSO
    assert unrelated == set(), verdicts(report, Verdict.FAIL, Verdict.WARN)
    if hasattr(entry, "NAMED"):  # the finding names the culprit, e.g. the refused property
        assert entry.NAMED in " ".join(verdicts(report, expected)[entry.EXPECTED])
    if expected is Verdict.FAIL:
        assert report.outcome() == "fail"
    else:
        assert report.outcome() == "pass"
        assert report.outcome(Gate.STRICT) == "fail"
