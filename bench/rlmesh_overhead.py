"""The rlmesh checker's own cost per step, against a bare grpcio Join call to the same server.

Starts a real `rlmesh` CartPole server, then alternates blocks of steps on one
Join stream each: bare (a prebuilt StepRequest written and its response read
with the generated stubs, nothing else) and checked (the suite's recorded
client with its transcript, a sampled action, the step's shape and rewards
judged into a report, and the observation and infos queued to be decoded and
judged after the loop, as the episodes phase does). Prints median step round
trips side by side and their ratio, and what the deferred checks cost a step.

    python bench/rlmesh_overhead.py [--steps 2000] [--blocks 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.core import Report  # noqa: E402
from checks.decision import record  # noqa: E402
from checks.rlmesh import judging_episodes  # noqa: E402
from checks.rlmesh.clauses import CATALOGUE  # noqa: E402
from checks.rlmesh.client import Endpoint  # noqa: E402
from checks.rlmesh.common import (  # noqa: E402
    LaterChecks,
    check_infos,
    fetch_contract,
    observe,
    reset_request,
    step_request,
)
from checks.rlmesh.proto import env_pb2, env_pb2_grpc, spaces_pb2  # noqa: E402
from checks.rlmesh.sampling import ActionSampler  # noqa: E402

WARM_UP = 20


async def bare_block(address: str, steps: int) -> list[float]:
    async with grpc.aio.insecure_channel(address) as channel:
        call = env_pb2_grpc.EnvServiceStub(channel).Join()
        await call.write(env_pb2.JoinRequest(request_id="r", reset=env_pb2.ResetRequest(seeds=[0])))
        await call.read()
        action = spaces_pb2.SpaceValue(leaves=[np.int64(1).tobytes()])
        times = []
        for index in range(steps + WARM_UP):
            started = time.perf_counter()
            await call.write(env_pb2.JoinRequest(request_id=f"s{index}", step=env_pb2.StepRequest(action=action)))
            await call.read()
            times.append(time.perf_counter() - started)
        call.cancel()
    await asyncio.sleep(0.3)  # let the server free its single session slot
    return times[WARM_UP:]


async def checked_block(address: str, steps: int) -> tuple[list[float], float]:
    """Checked step round trips, and the seconds the deferred checks took once the loop was over."""
    report = Report(CATALOGUE)
    report.begin_phase("bench")
    transcript = report.transcript("bench")
    async with Endpoint(address, 10.0, 16 * 1024 * 1024) as target:
        contract = await fetch_contract(target, transcript)
        session, response = await target.join(transcript, reset_request([0], ["bench"]))
        observe(report, contract, response.reset.observation, 1, "reset", transcript)
        check_infos(report, response.reset.infos, "reset", transcript)
        later = LaterChecks(report, contract, transcript)  # as the episodes phase does
        actions = ActionSampler(contract.act, np.random.default_rng(0), 1)  # as the episodes phase draws them
        times = []
        for index in range(steps + WARM_UP):
            started = time.perf_counter()
            response = await session.request(step_request(actions.next(), ids=["bench"]))
            body, where = response.step, f"step {index + 1}"
            record(report, judging_episodes.step_shape(body, 1, where), transcript)
            record(report, judging_episodes.rewards_finite(body, where), transcript)
            later.observe(body.observation, 1, where)
            later.infos(body.infos, where)
            times.append(time.perf_counter() - started)
        started = time.perf_counter()
        later.flush()
        deferred = time.perf_counter() - started
        session.cancel()
    await asyncio.sleep(0.3)
    return times[WARM_UP:], deferred


async def measure(address: str, steps: int, blocks: int) -> tuple[list[float], list[float], float]:
    """Bare and checked round trips, and the deferred checks' seconds in all."""
    bare: list[float] = []
    checked: list[float] = []
    deferred = 0.0
    per_block = max(1, steps // blocks)
    for _ in range(blocks):
        bare += await bare_block(address, per_block)
        times, flushed = await checked_block(address, per_block)
        checked += times
        deferred += flushed
    return bare, checked, deferred


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps per side")
    parser.add_argument("--blocks", type=int, default=5, help="alternating blocks per side")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.zoo.rlmesh.envs", "cartpole"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        address = server.stdout.readline().strip()
        bare, checked, deferred = asyncio.run(measure(address, args.steps, args.blocks))
    finally:
        server.kill()
        server.wait(10)
    bare_median, checked_median = statistics.median(bare), statistics.median(checked)
    print(f"rlmesh CartPole step round trip, {len(bare)} steps a side in {args.blocks} alternating blocks")
    print(f"  bare grpcio Join call   median {bare_median * 1e6:8.1f} us   p90 {np.percentile(bare, 90) * 1e6:8.1f} us")
    print(
        f"  rlconform checked step  median {checked_median * 1e6:8.1f} us   "
        f"p90 {np.percentile(checked, 90) * 1e6:8.1f} us"
    )
    print(
        f"  checker overhead per step: {(checked_median - bare_median) * 1e6:.1f} us; "
        f"ratio checked/bare = {checked_median / bare_median:.2f}"
    )
    per_step = deferred / (len(checked) + WARM_UP * args.blocks)
    print(
        f"  observation and infos checks judged after each block's loop: {per_step * 1e6:.1f} us a step; "
        f"ratio with them counted = {(checked_median + per_step) / bare_median:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
