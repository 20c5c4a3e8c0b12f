"""A run process: executes the runs the web process of `rlconform serve` hands it, with the same `Executor`.

`app.run_processes.ProcessRunner` starts `RLCONFORM_RUN_PROCESSES` of these beside the web
process (`python -m app.run_process`), so on SQLite two runs' Python executes on two cores. The
web process claims each run (`app.leases.claim`, in this process's name, with a lease this
process renews) and sends it here; a process that dies stops renewing, and its runs come back
through the lease (`ProcessRunner` re-queues them at once when it sees the process go).

One JSON object a line each way. In on stdin: first the configuration (`process_config`), then
`{"run": id, "attempt": n}`, `{"cancel": id}`, `{"allow": url}` (a demo server of the web
process) or `{"stop": true}`; the end of stdin stops the process too, so it never outlives the
web process. Out on the stdout it was started with: `{"ready": [kinds]}` once, `{"done": id}`
when a run's task is over, `{"ended": [status, outcome, seconds, verdicts]}` for the web
process's metrics. Whatever else writes to stdout (a print in a suite) goes to stderr instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import IO, Any

from app import webhooks
from app.db import make_engine
from app.executor import Executor
from app.leases import Ending
from app.metrics import Metrics
from app.netpolicy import Reach
from app.recording import EndWriter
from app.settings import Settings
from checks.registry import kind_names

log = logging.getLogger("rlconform.run_process")


def process_config(settings: Settings, worker: str, own: list[str], log_level: str) -> dict[str, Any]:
    """What a run process needs of the service's settings (sent on its stdin: the URL may hold a password)."""
    return {
        "database_url": settings.database_url,
        "worker": worker,
        "lease_seconds": settings.lease_seconds,
        "allowed_networks": list(settings.allowed_networks),
        "listen_host": settings.listen_address,
        "listen_ports": list(settings.listen_ports),
        "retention_runs": settings.retention_runs,
        "whole_passing": settings.retention_whole_passing,
        "public_url": settings.public_url,
        "tap_flush_seconds": settings.tap_flush_seconds,
        "tap_judging": settings.tap_judging,
        "own": own,
        "log_level": log_level,
    }


class ReportingMetrics(Metrics):
    """Counts as usual and tells the web process, whose /metrics is the one scraped."""

    def __init__(self, send: Callable[..., None]) -> None:
        super().__init__()
        self._send = send

    def run_ended(self, status: str, outcome: str | None, seconds: float, verdicts: Counter[str]) -> None:
        super().run_ended(status, outcome, seconds, verdicts)
        self._send(ended=[str(status), outcome, seconds, dict(verdicts)])


class RunProcess:
    """The runs this process executes, each a task of its event loop, as in the embedded runner."""

    def __init__(self, config: dict[str, Any], out: IO[str]) -> None:
        self._out, self._lock = out, threading.Lock()  # run ends are written from threads
        engine = make_engine(config["database_url"])
        public_url = config["public_url"]
        self.executor = Executor(
            engine,
            worker=config["worker"],
            ends=EndWriter(
                engine,
                retention_runs=config["retention_runs"],
                whole_passing=config["whole_passing"],
                metrics=ReportingMetrics(self.send),
                on_end=lambda session, run: webhooks.enqueue_deliveries(session, run, public_url),
            ),
            reach=Reach(
                allowed_networks=config["allowed_networks"],
                listen_host=config["listen_host"],
                listen_ports=tuple(config["listen_ports"]),
            ),
            lease_seconds=config["lease_seconds"],
            tap_flush_seconds=config["tap_flush_seconds"],
            tap_judging=config["tap_judging"],
        )
        for url in config["own"]:
            self.executor.allow_own(url)
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.stopping = False

    def send(self, **message: Any) -> None:
        with self._lock:
            try:
                self._out.write(json.dumps(message) + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the web process is gone: stdin's end stops this one
                pass

    async def serve(self, commands: asyncio.StreamReader) -> None:
        self.send(ready=kind_names())
        while line := await commands.readline():
            message = json.loads(line)
            if "run" in message:
                self._start(int(message["run"]), int(message["attempt"]))
            elif "cancel" in message:
                task = self.tasks.get(int(message["cancel"]))
                if task is not None:
                    task.cancel()
            elif "allow" in message:
                self.executor.allow_own(str(message["allow"]))
            elif message.get("stop"):
                break
        await self.stop()

    def _start(self, run_id: int, attempt: int) -> None:
        task = asyncio.create_task(self.executor.execute(run_id, attempt, self._ending), name=f"run-{run_id}")
        self.tasks[run_id] = task
        task.add_done_callback(lambda _task: self._done(run_id))

    def _done(self, run_id: int) -> None:
        self.tasks.pop(run_id, None)
        self.send(done=run_id)

    def _ending(self) -> Ending:
        return Ending.INTERRUPTED if self.stopping else Ending.CANCELLED

    async def stop(self) -> None:
        """As the embedded runner stops: runs still executing end `interrupted`, their results kept."""
        self.stopping = True
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.executor.writer.stop()


async def _main(out: IO[str]) -> None:
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    # Everything on stdin is read here, the configuration too: a buffered sys.stdin could swallow commands.
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    first = await commands.readline()
    if not first:
        return
    config = json.loads(first)
    from app.logsafe import configure_logging

    configure_logging(config["log_level"])
    loop.add_signal_handler(signal.SIGTERM, commands.feed_eof)  # stopped alone, it stops as when asked
    await RunProcess(config, out).serve(commands)


def main() -> int:
    out = os.fdopen(os.dup(1), "w", buffering=1)  # the protocol's own copy of stdout
    os.dup2(2, 1)  # anything else printed goes where the service logs
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the web process, which stops this one
    asyncio.run(_main(out))
    return 0
