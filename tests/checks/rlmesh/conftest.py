"""Live rlmesh peers for the rlmesh suite's tests: real `rlmesh` servers in subprocesses."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT = 30.0


class ServedEnv:
    """`python -m tests.zoo.rlmesh.envs NAME` on a free loopback port, killed on close."""

    def __init__(self, name: str, *flags: str, step_delay: float | None = None) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if step_delay is not None:
            env["RLMESH_TEST_STEP_DELAY"] = str(step_delay)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zoo.rlmesh.envs", name, *flags],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.address = self._read_address()

    def _read_address(self) -> str:
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        if not selector.select(START_TIMEOUT):
            self.close()
            raise RuntimeError("the rlmesh server did not report its address in time")
        line = self.process.stdout.readline().strip()
        if not line:
            self.close()
            raise RuntimeError(f"the rlmesh server exited with {self.process.wait(5)}")
        return line

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        if self.process.stdout:
            self.process.stdout.close()


@pytest.fixture
def serve_env() -> Iterator[Callable[..., ServedEnv]]:
    started: list[ServedEnv] = []

    def start(name: str, *flags: str, step_delay: float | None = None) -> ServedEnv:
        served = ServedEnv(name, *flags, step_delay=step_delay)
        started.append(served)
        return served

    try:
        yield start
    finally:
        for served in started:
            served.close()


@pytest.fixture(scope="module")
def cartpole() -> Iterator[ServedEnv]:
    served = ServedEnv("cartpole")
    try:
        yield served
    finally:
        served.close()


@pytest.fixture(scope="module")
def lanes() -> Iterator[ServedEnv]:
    # The server of issue 8, item 6: three lanes stepping on threads of their own, 0.1 s steps, lane 2's
    # episodes one step long.
    served = ServedEnv("threaded-lanes", step_delay=0.1)
    try:
        yield served
    finally:
        served.close()


@pytest.fixture(scope="module")
def vector() -> Iterator[ServedEnv]:
    served = ServedEnv("vector")
    try:
        yield served
    finally:
        served.close()
