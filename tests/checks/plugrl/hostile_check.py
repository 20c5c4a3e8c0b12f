"""`python -m tests.checks.plugrl.hostile_check URL TIMEOUT DEADLINE`: the exchange phase against URL, alone.

The hostile memory test runs the check in this process of its own so the peak
it reads is the check's, not that of a test process whose peak an earlier test
may have set. It prints one JSON line: the process's peak RSS before the check
and after it, in MB, and the report's outcome and results.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys

from checks.core import run_suite
from checks.plugrl.suite import SUITE
from tests.checks.plugrl.conftest import QUICK_OPTIONS


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


async def check(url: str, timeout: float, deadline: float) -> dict[str, object]:
    before = peak_rss_mb()
    report = await asyncio.wait_for(
        run_suite(SUITE, url, {**QUICK_OPTIONS, "timeout": timeout}, ["exchange"]), deadline
    )
    return {
        "before_mb": before,
        "peak_mb": peak_rss_mb(),
        "outcome": str(report.outcome()),
        "results": [result.to_dict() for result in report.results.values()],
    }


def main(argv: list[str]) -> int:
    url, timeout, deadline = argv[0], float(argv[1]), float(argv[2])
    print(json.dumps(asyncio.run(check(url, timeout, deadline))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
