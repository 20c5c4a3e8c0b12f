"""Peak memory and wall time of a whole CLI check against every hostile server in the zoo.

    python bench/hostile_rss.py [--timeout 3] [--only NAME ...]

Each run is `rlconform check plugrl-server URL --until-stop --timeout T` in a
child process of its own, against one server (also a child process, on
127.0.0.1 at a free port), one at a time. The child's peak RSS comes from
wait4's rusage, so it is that process alone. The conforming reference server,
checked the same way, is the baseline each row is compared with. The goal is
a peak under 256 MB and a wall time of at most 15 s for every hostile server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.zoo.plugrl_server.hostile import HOSTILE  # noqa: E402

GOAL_MB = 256
GOAL_SECONDS = 15.0
RUN_LIMIT = 240.0  # seconds one check may take before the bench gives up on it
SERVER_LIFETIME = RUN_LIMIT + 30
STOP_AFTER = 200  # feedback rows after which the reference server ends the run


@dataclass
class Run:
    name: str
    exit_code: int | None  # None: killed at RUN_LIMIT
    seconds: float
    peak_mb: float


def start_server(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server child; its first stdout line ends with its ws:// URL."""
    server = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True, env=child_env())
    assert server.stdout is not None
    line = server.stdout.readline()
    if "ws://" not in line:
        server.kill()
        server.wait()
        raise SystemExit(f"{command}: no URL on its first line, got {line!r}")
    return server, line.split()[-1]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


def check(name: str, url: str, timeout: float) -> Run:
    """One whole CLI check in a child; its peak RSS from wait4, killed at RUN_LIMIT."""
    command = [sys.executable, "-m", "app.cli", "check", "plugrl-server", url, "--until-stop"]
    command += ["--timeout", str(timeout), "--quiet"]
    started = time.monotonic()
    child = subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env()
    )
    killed = False
    try:
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if not killed and time.monotonic() - started > RUN_LIMIT:
                child.kill()
                killed = True
            time.sleep(0.05)
    except BaseException:  # interrupted: leave no check running
        child.kill()
        child.wait()
        raise
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
    seconds = time.monotonic() - started
    return Run(name, None if killed else child.returncode, seconds, usage.ru_maxrss / 1024)  # Linux: KiB


def run_against(name: str, server_command: list[str], timeout: float) -> Run:
    server, url = start_server(server_command)
    try:
        return check(name, url, timeout)
    finally:
        server.kill()
        server.wait()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=3.0, help="the CLI's step timeout (default 3)")
    parser.add_argument("--only", nargs="+", choices=sorted(HOSTILE), help="just these hostile servers")
    args = parser.parse_args(argv)

    reference = [sys.executable, "-m", "app.cli", "reference-server", "plugrl", "--port", "0"]
    baseline = run_against("reference (conforming)", [*reference, "--stop-after", str(STOP_AFTER)], args.timeout)
    runs = [baseline]
    print(f"{'server':<24} {'exit':>4} {'wall s':>7} {'peak RSS MB':>11} {'x baseline':>10}  goal", flush=True)
    show(baseline, baseline)
    for name in args.only or list(HOSTILE):
        hostile = [sys.executable, "-m", "tests.zoo.plugrl_server.hostile", name, str(SERVER_LIFETIME)]
        run = run_against(name, hostile, args.timeout)
        runs.append(run)
        show(run, baseline)
    over = [run.name for run in runs[1:] if run.peak_mb >= GOAL_MB or run.seconds > GOAL_SECONDS]
    slowest = max(runs[1:], key=lambda run: run.seconds)
    total = sum(run.seconds for run in runs)
    print(
        f"\nhighest peak {max(run.peak_mb for run in runs[1:]):.0f} MB; slowest {slowest.name} {slowest.seconds:.1f} s;"
    )
    median = statistics.median(run.seconds for run in runs[1:])
    limits = f"{GOAL_MB} MB or {GOAL_SECONDS:.0f} s"
    print(f"median {median:.1f} s; all runs {total:.0f} s; over {limits}: {', '.join(over) or 'none'}")
    return 1 if over else 0


def show(run: Run, baseline: Run) -> None:
    exit_code = "kill" if run.exit_code is None else str(run.exit_code)
    verdict = "ok" if run.peak_mb < GOAL_MB and run.seconds <= GOAL_SECONDS else "OVER"
    ratio = run.peak_mb / baseline.peak_mb
    print(
        f"{run.name:<24} {exit_code:>4} {run.seconds:>7.1f} {run.peak_mb:>11.1f} {ratio:>10.2f}  {verdict}", flush=True
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
