"""Prometheus text exposition: runs by status from the database, counters kept by the runner."""

from __future__ import annotations

import threading
from collections import Counter

from sqlalchemy import func
from sqlmodel import Session, select

from app.models import Run, RunStatus

DURATION_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


class Metrics:
    """Counters since the process started; thread-safe because DB writers run in threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.verdicts: Counter[str] = Counter()
        self.runs_ended: Counter[tuple[str, str]] = Counter()
        self.duration_buckets = [0] * len(DURATION_BUCKETS)
        self.duration_sum = 0.0
        self.duration_count = 0

    def run_ended(self, status: str, outcome: str | None, seconds: float, verdicts: Counter[str]) -> None:
        with self._lock:
            self.runs_ended[(status, outcome or "none")] += 1
            self.verdicts.update(verdicts)
            self.duration_sum += seconds
            self.duration_count += 1
            for index, bound in enumerate(DURATION_BUCKETS):
                if seconds <= bound:
                    self.duration_buckets[index] += 1

    def run_never_executed(self, status: str) -> None:
        """A run this process ended before it started (a queued run cancelled): counted, not timed."""
        with self._lock:
            self.runs_ended[(status, "none")] += 1

    def render(self, session: Session) -> str:
        by_status = dict.fromkeys((str(s) for s in RunStatus), 0)
        for status, count in session.exec(select(Run.status, func.count()).group_by(Run.status)):
            by_status[status] = count
        lines = [
            "# HELP rlconform_runs Runs in the database by lifecycle status.",
            "# TYPE rlconform_runs gauge",
            *(f'rlconform_runs{{status="{status}"}} {count}' for status, count in sorted(by_status.items())),
        ]
        with self._lock:
            lines += [
                "# HELP rlconform_runs_ended_total Runs this process ended, by status and outcome.",
                "# TYPE rlconform_runs_ended_total counter",
                *(
                    f'rlconform_runs_ended_total{{status="{status}",outcome="{outcome}"}} {count}'
                    for (status, outcome), count in sorted(self.runs_ended.items())
                ),
                "# HELP rlconform_clause_verdicts_total Clause results decided by this process, by verdict.",
                "# TYPE rlconform_clause_verdicts_total counter",
                *(f'rlconform_clause_verdicts_total{{verdict="{v}"}} {n}' for v, n in sorted(self.verdicts.items())),
                "# HELP rlconform_run_duration_seconds Wall time of runs this process executed.",
                "# TYPE rlconform_run_duration_seconds histogram",
                *(
                    f'rlconform_run_duration_seconds_bucket{{le="{bound:g}"}} {count}'
                    for bound, count in zip(DURATION_BUCKETS, self.duration_buckets, strict=True)
                ),
                f'rlconform_run_duration_seconds_bucket{{le="+Inf"}} {self.duration_count}',
                f"rlconform_run_duration_seconds_sum {self.duration_sum:.6f}",
                f"rlconform_run_duration_seconds_count {self.duration_count}",
            ]
        return "\n".join(lines) + "\n"
