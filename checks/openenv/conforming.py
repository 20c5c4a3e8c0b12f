"""The conforming run of openenv: the quiz reference server as the demo runs it, optional phases included.

The demo's capacity is the suite's default group size, so the session past it shows CAPACITY_REACHED,
and the demo options name the quiz's tasks, answers, crash and score. What the quiz does not serve
(production mode, attach, tasks) is decided on the servers of tests/checks/reference_runs.py.
"""

from __future__ import annotations

from checks.conforming import ServerRun
from checks.openenv.reference import DEMO_OPTIONS

RUNS = (
    ServerRun(
        name="quiz",
        start="checks.openenv.reference:start_demo_server",
        options={**DEMO_OPTIONS, "timeout": 5},
        include_optional=True,
    ),
)
