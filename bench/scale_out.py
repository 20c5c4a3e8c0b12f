"""Scale-out bench: 200 targets on one-minute schedules, workers on PostgreSQL beside the embedded executor.

Loopback only and bounded (`--minutes` per mode, under 10 minutes in all):
reference PlugRL servers run as their own processes; in workers mode a
`rlconform serve` (executing nothing itself) and 2 `rlconform worker`
processes of `--concurrency` N share a fresh PostgreSQL database; in
embedded mode one `rlconform serve` on SQLite executes 2 x N runs at once.
Each mode prints runs per minute, the p95 delay from a run's schedule slot
to its start (goal under 5 s), and the dashboard's page latency under load.

    python bench/scale_out.py --database-url postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from sqlmodel import Session, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db import make_engine, upgrade_database  # noqa: E402
from app.models import Run, RunStatus  # noqa: E402
from bench.service import ROOT, start_reference_servers  # noqa: E402
from checks.core import percentile  # noqa: E402

TARGETS = 200
OPTIONS = {"timeout": 5.0, "patience": 0.2}


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(stack: ExitStack, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def reap() -> None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    stack.callback(reap)
    return process


def _serve(stack: ExitStack, env: dict[str, str]) -> httpx.Client:
    port = _free_port()
    _spawn(stack, ["serve", "--host", "127.0.0.1", "--port", str(port)], env)
    client = stack.enter_context(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30))
    deadline = time.monotonic() + 60
    while True:
        try:
            if client.get("/healthz").status_code == 200:
                return client
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the service did not start")
        time.sleep(0.2)


def _page_times(client: httpx.Client, until: float) -> list[float]:
    times = []
    paths = ["/", "/targets/t-0", "/workers"]
    while time.monotonic() < until:
        for path in paths:
            began = time.perf_counter()
            client.get(path)
            times.append(time.perf_counter() - began)
        time.sleep(1.0)
    return times


def _measure(client: httpx.Client, database_url: str, urls: list[str], minutes: float) -> dict[str, Any]:
    for index in range(TARGETS):
        body = {"name": f"t-{index}", "kind": "plugrl-server", "url": urls[index % len(urls)], "options": OPTIONS}
        client.post("/api/v1/targets", json=body | {"schedule_minutes": 1}).raise_for_status()
    began = time.monotonic()
    pages = _page_times(client, began + minutes * 60)
    with Session(make_engine(database_url)) as session:
        rows = session.exec(
            select(Run.scheduled_for, Run.started_at, Run.status).where(Run.trigger == "schedule")
        ).all()
    finished = [r for r in rows if r.status == RunStatus.FINISHED]
    delays = [(r.started_at - r.scheduled_for).total_seconds() for r in rows if r.started_at is not None]
    return {
        "queued": len(rows),
        "runs_per_minute": len(finished) / minutes,
        "p95_delay": percentile(delays, 0.95),
        "median_delay": statistics.median(delays) if delays else float("nan"),
        "page_p50": percentile(pages, 0.5) * 1000,
        "page_p95": percentile(pages, 0.95) * 1000,
    }


def _fresh_postgres(server_url: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    server = make_url(server_url)
    name = f"rlconform_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(
        server.set(drivername="postgresql").render_as_string(hide_password=False), autocommit=True
    ) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return server.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("RLCONFORM_TEST_POSTGRES_URL", ""))
    parser.add_argument("--concurrency", type=int, default=16, help="runs per worker at once")
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=3.0, help="measured minutes per mode (at most 4)")
    args = parser.parse_args()
    minutes = min(args.minutes, 4.0)
    base = os.environ | {"RLCONFORM_DEMO": "false", "RLCONFORM_SCHEDULE_TICK_CRON": "* * * * *"}
    base.pop("RLCONFORM_API_TOKEN", None)
    figures: dict[str, dict[str, Any]] = {}
    processes, urls = start_reference_servers(args.servers)
    try:
        if args.database_url:
            url = _fresh_postgres(args.database_url)
            upgrade_database(url)
            env = base | {"RLCONFORM_DATABASE_URL": url, "RLCONFORM_SERVICE_LABELS": ""}
            with ExitStack() as stack:
                client = _serve(stack, env)
                for _ in range(2):
                    _spawn(stack, ["worker", "--label", "default", "--concurrency", str(args.concurrency)], env)
                figures[f"workers 2 x {args.concurrency}"] = _measure(client, url, urls, minutes)
        else:
            print("no --database-url: the workers mode is left out")
        with tempfile.TemporaryDirectory() as workdir, ExitStack() as stack:
            url = f"sqlite:///{workdir}/bench.db"
            env = base | {"RLCONFORM_DATABASE_URL": url, "RLCONFORM_MAX_CONCURRENT_RUNS": str(2 * args.concurrency)}
            client = _serve(stack, env)
            figures[f"embedded {2 * args.concurrency}"] = _measure(client, url, urls, minutes)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
    print(f"{TARGETS} targets on one-minute schedules, {args.servers} reference servers, {minutes:g} min per mode")
    print(f"{'mode':<18}{'queued':>8}{'runs/min':>10}{'due->start p50':>16}{'p95':>8}{'page p50':>10}{'page p95':>10}")
    for mode, f in figures.items():
        print(
            f"{mode:<18}{f['queued']:>8}{f['runs_per_minute']:>10.1f}{f['median_delay']:>15.2f}s"
            f"{f['p95_delay']:>7.2f}s{f['page_p50']:>8.0f}ms{f['page_p95']:>8.0f}ms"
        )
    print("goal: p95 due->start under 5 s")


if __name__ == "__main__":
    main()
