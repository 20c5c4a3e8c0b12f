"""How long `rlconform` takes to start, beside a bare `python -c pass`, measured side by side.

    python bench/cli_startup.py [--rounds 5]

Each command runs `--rounds` times in a child process of its own, alternating
with the bare interpreter so both see the same machine load; the median of
each is printed with their difference (the CLI's own start-up) and ratio. The
goal is a start-up of at most 0.3 s over the bare interpreter for `suites`
and `--help`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 0.3
COMMANDS = {
    "bare python -c pass": ["-c", "pass"],
    "rlconform --help": ["-m", "app.cli", "--help"],
    "rlconform suites": ["-m", "app.cli", "suites"],
    "rlconform suites plugrl-server": ["-m", "app.cli", "suites", "plugrl-server"],
}


def seconds_of(arguments: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.perf_counter()
    subprocess.run([sys.executable, *arguments], cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    for arguments in COMMANDS.values():  # warm the file cache and byte-code once, uncounted
        seconds_of(arguments)
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(rounds):
        for name, arguments in COMMANDS.items():
            samples[name].append(seconds_of(arguments))
    bare = statistics.median(samples["bare python -c pass"])
    print(f"median of {rounds}; goal: at most {GOAL_SECONDS:.1f} s over the bare interpreter")
    for name, times in samples.items():
        median = statistics.median(times)
        verdict = "" if name.startswith("bare") else ("  ok" if median - bare <= GOAL_SECONDS else "  OVER GOAL")
        print(f"{name:<34} {median:6.3f} s  (+{median - bare:5.3f} s, {median / bare:5.1f}x bare){verdict}")


if __name__ == "__main__":
    main()
