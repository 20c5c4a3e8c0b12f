"""Service bench: page server time at 50 clauses x 200 runs, and 20 concurrent runs.

Part 1 fills a temporary SQLite database with one target of a 50-clause
suite and 200 finished runs (one result per clause and run, a few clauses
flipping), then times the run page and the target history page through the
ASGI app (median of several requests) and prints each against its target
as a ratio (below 1.0 meets it): run page < 150 ms, history page < 300 ms.

Part 2 starts reference PlugRL servers, then side by side: 100 parallel
`rlconform check` processes against them, and one `rlconform serve` (its
own process, SQLite) with 100 targets on them and a run of each queued at
once, all allowed to run together: once with its runs in the web process
(`--run-processes 0`) and once with two run processes beside it (the
default on two cores), the CPU of those counted. It prints each service's wall time over
the CLI's (the goal is <= 0.5: one service with no start-up per run should
win), the CPU each spends a run, how the runs ended and how many clause
results were harness errors (the target is 0).

    python bench/service.py [--runs 200] [--requests 15] [--concurrent 100]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import insert
from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db import make_engine, upgrade_database  # noqa: E402
from app.main import create_app  # noqa: E402
from app.models import ENDED_STATUSES, ClauseResultRow, Run, RunStatus, Target, utcnow  # noqa: E402
from app.models_clause import message_id  # noqa: E402
from app.settings import Settings  # noqa: E402
from checks.core import HARNESS_VERSION, Catalogue, Outcome, Phase, PhaseContext, Suite, SuiteOptions  # noqa: E402
from checks.registry import RECORDS, Absent, KindRecord  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUICK_OPTIONS = {"timeout": 5.0, "patience": 0.5}
RUN_PAGE_TARGET_MS = 150.0
HISTORY_PAGE_TARGET_MS = 300.0
PHASES, CLAUSES_PER_PHASE = 5, 10  # 50 clauses


# ---------------------------------------------------------------- a 50-clause suite for the page bench


def _bench_suite() -> Suite:
    catalogue = Catalogue()
    phases = []

    async def never_run(ctx: PhaseContext) -> None:  # the bench only reads stored results
        raise NotImplementedError

    for p in range(PHASES):
        ids = []
        for c in range(CLAUSES_PER_PHASE):
            clause = catalogue.must(f"bench.{p}.clause-{c}", f"Bench clause {c} of phase {p} holds.")
            ids.append(clause.id)
        phases.append(Phase(f"phase-{p}", never_run, tuple(ids), f"bench phase {p}"))
    return Suite("bench", "Bench suite", ("ws",), SuiteOptions, tuple(phases), catalogue)


BENCH_SUITE = _bench_suite()


def verdict_for(run_index: int, clause_index: int) -> str:
    """Mostly pass; a few clauses fail steadily, flip now and then, or warn."""
    if clause_index % 17 == 3:
        return "fail"
    if clause_index % 11 == 5 and (run_index // 7) % 2:
        return "fail"
    if clause_index % 13 == 7:
        return "warn"
    return "pass"


def fill_database(url: str, runs: int) -> tuple[str, int]:
    """One target with `runs` finished runs of the bench suite; returns (target name, newest run id)."""
    upgrade_database(url)
    engine = make_engine(url)
    clause_ids = [(phase.name, clause_id) for phase in BENCH_SUITE.phases for clause_id in phase.clauses]
    with Session(engine) as session:
        target = Target(name="bench", kind="bench", url="ws://127.0.0.1:9")
        session.add(target)
        session.commit()
        session.refresh(target)
        start = utcnow() - timedelta(days=runs)
        newest = 0
        for index in range(runs):
            verdicts = [verdict_for(index, c) for c in range(len(clause_ids))]
            run = Run(
                target_id=target.id,
                status=RunStatus.FINISHED,
                outcome=Outcome.FAIL if "fail" in verdicts else Outcome.PASS,
                kind="bench",
                url=target.url,
                harness_version=HARNESS_VERSION,
                spec_version="1",
                created_at=start + timedelta(days=index),
                started_at=start + timedelta(days=index),
                finished_at=start + timedelta(days=index, seconds=30),
                total_clauses=len(clause_ids),
                decided_clauses=len(clause_ids),
                counts=dict(Counter(verdicts)),
                phases=[p.name for p in BENCH_SUITE.phases],
            )
            session.add(run)
            session.flush()
            newest = run.id
            session.execute(
                insert(ClauseResultRow),
                [
                    {
                        "run_id": run.id,
                        "phase": phase,
                        "clause_id": clause_id,
                        "level": "MUST",
                        "verdict": verdict,
                        "message_id": message_id(session, "the clause holds", f"observed {verdict}"),
                        "duration": 0.01 * c,
                        "checks": 1,
                        "transcript_ids": [],
                        "decided_at": run.created_at,
                    }
                    for c, ((phase, clause_id), verdict) in enumerate(zip(clause_ids, verdicts, strict=True))
                ],
            )
        session.commit()
    return "bench", newest


def median_ms(client: TestClient, path: str, requests: int) -> float:
    client.get(path).raise_for_status()  # warm caches (templates, suite import)
    times = []
    for _ in range(requests):
        began = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
        response.raise_for_status()
    return statistics.median(times)


def bench_pages(workdir: Path, runs: int, requests: int) -> None:
    absent = Absent("a bench kind")
    RECORDS["bench"] = KindRecord("bench", (), "__main__:BENCH_SUITE", absent, absent, absent, absent)
    url = f"sqlite:///{workdir / 'pages.db'}"
    began = time.perf_counter()
    target, newest = fill_database(url, runs)
    print(f"filled {runs} runs x {PHASES * CLAUSES_PER_PHASE} clauses in {time.perf_counter() - began:.1f} s")
    settings = Settings(database_url=url, demo=False, scheduler_interval=3600)
    with TestClient(create_app(settings), base_url="http://localhost") as client:  # a host the service admits
        run_ms = median_ms(client, f"/runs/{newest}", requests)
        history_ms = median_ms(client, f"/targets/{target}", requests)
    print(
        f"run page      median {run_ms:7.1f} ms  target < {RUN_PAGE_TARGET_MS:.0f} ms  "
        f"ratio {run_ms / RUN_PAGE_TARGET_MS:.2f}"
    )
    print(
        f"history page  median {history_ms:7.1f} ms  target < {HISTORY_PAGE_TARGET_MS:.0f} ms  "
        f"ratio {history_ms / HISTORY_PAGE_TARGET_MS:.2f}"
    )


# ---------------------------------------------------------------- concurrent runs against reference servers


def start_reference_servers(count: int) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """`count` reference PlugRL servers, each its own process: the service under test runs only the checks."""
    processes, urls = [], []
    for _ in range(count):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        command = [sys.executable, "-m", "app.cli", "reference-server", "plugrl", "--port", str(port)]
        processes.append(subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        urls.append(f"ws://127.0.0.1:{port}")
    for url in urls:
        port = int(url.rsplit(":", 1)[1])
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"reference server on {port} did not start") from None
                time.sleep(0.1)
    return processes, urls


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a live process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _service_cpu(pid: int) -> float:
    """CPU of the service and of its run processes (its children, alive through the runs) so far."""
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        children.update(int(child) for child in (task / "children").read_text().split())
    total = _cpu_seconds(pid)
    for child in children:
        try:
            total += _cpu_seconds(child)
        except OSError:  # it ended meanwhile
            pass
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _await_ended(client: httpx.Client, run_ids: list[int]) -> Counter[str]:
    deadline = time.monotonic() + 900
    while True:
        runs = client.get("/api/v1/runs", params={"limit": len(run_ids) + 10}).json()
        statuses = Counter(run["status"] for run in runs if run["id"] in run_ids)
        if sum(n for status, n in statuses.items() if status in ENDED_STATUSES) == len(run_ids):
            return statuses
        if time.monotonic() > deadline:
            raise SystemExit(f"runs did not end within 900 s: {dict(statuses)}")
        time.sleep(0.25)  # seldom enough that the polling costs the service little


def _profiler(pid: int, output: str | None) -> subprocess.Popen[bytes] | None:
    """py-spy sampling the service while it executes the runs (raw collapsed stacks), when asked for."""
    if not output:
        return None
    beside = Path(sys.executable).parent / "py-spy"  # pip installs it into the venv
    spy = str(beside) if beside.exists() else "py-spy"
    command = [spy, "record", "-r", "50", "-f", "raw", "-o", output, "--pid", str(pid)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextlib.contextmanager
def service_with_targets(
    workdir: Path, database: str, concurrent: int, urls: list[str], processes: int, checkout: Path = ROOT
) -> Iterator[tuple[httpx.Client, subprocess.Popen[bytes]]]:
    """A fresh `rlconform serve` from `checkout` on SQLite file `database` with `processes` run processes and
    `concurrent` PlugRL targets (`reference-0`, ...) on `urls`: its client and process; stopped on exit."""
    port = _free_port()
    env = os.environ | {
        "RLCONFORM_DATABASE_URL": f"sqlite:///{workdir / database}",
        "RLCONFORM_RUN_PROCESSES": str(processes),
        "RLCONFORM_DEMO": "false",
        "RLCONFORM_MAX_CONCURRENT_RUNS": str(concurrent),
        "RLCONFORM_SCHEDULER_INTERVAL": "3600",
        "PYTHONPATH": str(checkout),
    }
    env.pop("RLCONFORM_API_TOKEN", None)
    command = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    serve = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            _await_healthy(client, serve)
            for index in range(concurrent):
                body = {"name": f"reference-{index}", "kind": "plugrl-server", "url": urls[index % len(urls)]}
                client.post("/api/v1/targets", json=body | {"options": QUICK_OPTIONS}).raise_for_status()
            yield client, serve
    finally:
        serve.terminate()  # it interrupts what still runs, which can take a while on a loaded machine
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait(timeout=10)


def queue_every_target(client: httpx.Client, concurrent: int) -> list[int]:
    """One run of each of `service_with_targets`' targets, queued as fast as the service takes requests."""
    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(lambda i: _queue_run(client, f"reference-{i}"), range(concurrent)))


def service_runs(
    workdir: Path, concurrent: int, urls: list[str], processes: int, profile: str | None = None
) -> dict[str, Any]:
    """`concurrent` runs queued at once in one `rlconform serve` with `processes` run processes: wall time from
    the first queued to the last ended, the CPU per run of the service and its run processes, and the verdicts."""
    with service_with_targets(workdir, f"runs-{processes}.db", concurrent, urls, processes) as (client, serve):
        profiler = _profiler(serve.pid, profile)
        cpu_before, began = _service_cpu(serve.pid), time.perf_counter()
        run_ids = queue_every_target(client, concurrent)
        statuses = _await_ended(client, run_ids)
        elapsed, cpu = time.perf_counter() - began, _service_cpu(serve.pid) - cpu_before
        if profiler is not None:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(timeout=60)
        results = [client.get(f"/api/v1/runs/{run_id}/results").json() for run_id in run_ids]
    verdicts = Counter(result["verdict"] for run_results in results for result in run_results)
    return {"elapsed": elapsed, "cpu": cpu, "verdicts": verdicts, "statuses": statuses}


def _queue_run(client: httpx.Client, target: str) -> int:
    """Queue a run of `target`; a request refused while the database is busy (503) is sent again."""
    for _ in range(50):
        response = client.post(f"/api/v1/targets/{target}/runs", json={})
        if response.status_code != 503:
            response.raise_for_status()
            return int(response.json()["id"])
        time.sleep(0.2)
    raise SystemExit(f"queueing a run of {target} was refused 50 times: {response.text[:300]}")


def _await_healthy(client: httpx.Client, serve: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        if serve.poll() is not None:
            raise SystemExit("rlconform serve exited")
        try:
            if client.get("/healthz").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("rlconform serve did not answer /healthz within 60 s")
        time.sleep(0.1)


def cli_runs(concurrent: int, urls: list[str]) -> dict[str, Any]:
    """The same work as `concurrent` parallel `rlconform check` processes: wall time and their CPU."""
    options = [arg for key, value in QUICK_OPTIONS.items() for arg in ("--option", f"{key}={value}")]
    cpu_before, began = _children_cpu(), time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", "check", "plugrl-server", urls[i % len(urls)], "--quiet", *options],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(concurrent)
    ]
    codes = Counter(process.wait() for process in processes)
    return {"elapsed": time.perf_counter() - began, "cpu": _children_cpu() - cpu_before, "exit_codes": codes}


def bench_concurrent_runs(
    workdir: Path, concurrent: int, servers: int, run_processes: list[int], profile: str | None = None
) -> None:
    processes, urls = start_reference_servers(servers)
    try:
        # Side by side: the CLI first, then the service with each number of run processes, on the same servers.
        cli = cli_runs(concurrent, urls)
        services = [(n, service_runs(workdir, concurrent, urls, n, profile)) for n in run_processes]
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
    print(f"{concurrent} runs on {servers} reference servers (each server its own process):")
    print(
        f"  {concurrent} `rlconform check`   {cli['elapsed']:6.1f} s wall, CPU {cli['cpu'] / concurrent:.3f} s a run, "
        f"exit codes {dict(cli['exit_codes'])}"
    )
    for n, service in services:
        verdicts = service["verdicts"]
        print(
            f"  `rlconform serve`, {n} run processes   {service['elapsed']:6.1f} s wall, "
            f"CPU {service['cpu'] / concurrent:.3f} s a run, statuses {dict(service['statuses'])}"
        )
        print(f"    service / CLI wall time {service['elapsed'] / cli['elapsed']:.2f}  (goal <= 0.5)")
        print(f"    service / CLI CPU a run {service['cpu'] / cli['cpu']:.2f}")
        errors = verdicts.get("error", 0)
        print(f"    clause results {sum(verdicts.values())}: {dict(verdicts)}; harness errors {errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--servers", type=int, default=5, help="reference servers the concurrent runs share")
    parser.add_argument("--skip-pages", action="store_true", help="only the concurrent runs")
    parser.add_argument(
        "--run-processes",
        default="0,2",
        help="the service's RLCONFORM_RUN_PROCESSES values to measure, comma separated (0: runs in the web process)",
    )
    parser.add_argument("--profile", metavar="FILE", help="py-spy's raw stacks of the service during its runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlconform-bench-") as workdir:
        if not args.skip_pages:
            bench_pages(Path(workdir), args.runs, args.requests)
        counts = [int(n) for n in args.run_processes.split(",") if n.strip()]
        bench_concurrent_runs(Path(workdir), args.concurrent, args.servers, counts, args.profile)


if __name__ == "__main__":
    main()
