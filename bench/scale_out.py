"""Scale-out bench: 200 targets on one-minute schedules, workers on PostgreSQL beside the embedded executor.

Loopback only and bounded (`--minutes` per measurement, under 10 minutes in
all): reference PlugRL servers run as their own processes; in workers mode a
`rlconform serve` (executing nothing itself) and 2 `rlconform worker`
processes of `--concurrency` N share a fresh PostgreSQL database; in
embedded mode one `rlconform serve` on SQLite executes 2 x N runs at once.

Each interval schedule comes due at its target's own offset within the
minute, so 200 targets make a steady 200 runs due per minute. For each mode
and run weight the bench prints runs due, started and finished per minute
(finished below due means demand exceeds this machine's capacity, and the
delays are backlog, not dispatch), the delay from each run's own due time to
its start (a run still queued at the end counts with its wait so far; slots
skipped because the previous run was still queued are counted apart), and
the dashboard's page latency under that load. Goal: p95 due->start under 5 s.

    python bench/scale_out.py --database-url postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlmodel import Session, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db import make_engine, upgrade_database  # noqa: E402
from app.models import Run, Schedule  # noqa: E402
from app.scheduler import latest_slot  # noqa: E402
from bench.service import ROOT, start_reference_servers  # noqa: E402
from checks.core import percentile  # noqa: E402

TARGETS = 200
WEIGHTS = {
    "full": {"timeout": 5.0, "patience": 0.2},  # every default phase, 5 exchanges
    "light": {"timeout": 5.0, "patience": 0.05, "exchanges": 1},
}
SETTLE = timedelta(seconds=30)  # rates are taken after the first runs' start-up
LAG = timedelta(seconds=3)  # a due time this close to the end may not have had its tick yet


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


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _due_slots(schedule: Schedule, until: datetime) -> list[datetime]:
    """Every due time of `schedule` from its creation up to `until`."""
    interval = timedelta(seconds=schedule.interval_seconds or 60)
    slot = latest_slot(schedule.target_id, interval, _aware(schedule.created_at) - timedelta(microseconds=1)) + interval
    slots = []
    while slot <= until:
        slots.append(slot)
        slot += interval
    return slots


def _measure(
    client: httpx.Client, database_url: str, urls: list[str], options: dict[str, Any], minutes: float
) -> dict[str, Any]:
    for index in range(TARGETS):
        body = {"name": f"t-{index}", "kind": "plugrl-server", "url": urls[index % len(urls)], "options": options}
        client.post("/api/v1/targets", json=body | {"schedule_minutes": 1}).raise_for_status()
    pages = _page_times(client, time.monotonic() + minutes * 60)
    end = datetime.now(UTC)
    with Session(make_engine(database_url)) as session:
        schedules = session.exec(select(Schedule)).all()
        rows = session.exec(
            select(Run.scheduled_for, Run.started_at, Run.finished_at).where(Run.trigger == "schedule")
        ).all()
    runs = [(_aware(slot), started, finished) for slot, started, finished in rows if slot is not None]
    due = sorted(slot for schedule in schedules for slot in _due_slots(schedule, end))
    settled = due[0] + SETTLE
    window = (end - settled).total_seconds() / 60

    def per_minute(moments: list[datetime | None]) -> float:
        return sum(1 for m in moments if m is not None and settled <= _aware(m) <= end) / window

    delays = [((_aware(started) if started else end) - slot).total_seconds() for slot, started, _ in runs]
    return {
        "due": per_minute(list(due)),
        "started": per_minute([started for _, started, _ in runs]),
        "finished": per_minute([finished for _, _, finished in runs]),
        "skipped": len({slot for slot in due if slot <= end - LAG} - {slot for slot, _, _ in runs}),
        "waiting": sum(1 for _, started, _ in runs if started is None),
        "p50": percentile(delays, 0.5),
        "p95": percentile(delays, 0.95),
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


def _workers_mode(server_url: str, env: dict[str, str], concurrency: int, run: Any) -> dict[str, Any]:
    url = _fresh_postgres(server_url)
    upgrade_database(url)
    env = env | {"RLCONFORM_DATABASE_URL": url, "RLCONFORM_SERVICE_LABELS": ""}
    with ExitStack() as stack:
        client = _serve(stack, env)
        for _ in range(2):
            _spawn(stack, ["worker", "--label", "default", "--concurrency", str(concurrency)], env)
        return run(client, url)


def _embedded_mode(env: dict[str, str], concurrency: int, run: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as workdir, ExitStack() as stack:
        url = f"sqlite:///{workdir}/bench.db"
        client = _serve(stack, env | {"RLCONFORM_DATABASE_URL": url, "RLCONFORM_MAX_CONCURRENT_RUNS": str(concurrency)})
        return run(client, url)


def _print(figures: dict[str, dict[str, Any]], servers: int, minutes: float) -> None:
    print(f"{TARGETS} targets on one-minute schedules (spread), {servers} reference servers, {minutes:g} min each")
    print("per minute: due (demand), started, finished (capacity when below due); delays from each run's due time")
    header = f"{'mode':<26}{'due':>6}{'start':>7}{'fin':>6}{'skip':>6}{'wait':>6}"
    print(header + f"{'p50':>8}{'p95':>8}{'page p50':>10}{'page p95':>10}  verdict")
    for mode, f in figures.items():
        over = f["finished"] < 0.95 * f["due"] or f["skipped"] > 0.01 * f["due"] * minutes
        verdict = "demand exceeds capacity: backlog" if over else "keeps up"
        print(
            f"{mode:<26}{f['due']:>6.0f}{f['started']:>7.0f}{f['finished']:>6.0f}{f['skipped']:>6}{f['waiting']:>6}"
            f"{f['p50']:>7.2f}s{f['p95']:>7.2f}s{f['page_p50']:>8.0f}ms{f['page_p95']:>8.0f}ms  {verdict}"
        )
    print("skip: due times that found the previous run still queued (made up once later); wait: queued at the end")
    print("goal: p95 due->start under 5 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("RLCONFORM_TEST_POSTGRES_URL", ""))
    parser.add_argument("--concurrency", type=int, default=16, help="runs per worker at once")
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--weights", default="light,full", help="comma separated: " + ", ".join(WEIGHTS))
    parser.add_argument("--minutes", type=float, default=2.0, help="measured minutes per mode and weight")
    args = parser.parse_args()
    weights = [w for w in args.weights.split(",") if w]
    modes = 2 if args.database_url else 1
    minutes = min(args.minutes, 8.5 / (modes * len(weights)))  # the whole bench stays under 10 minutes
    base = os.environ | {"RLCONFORM_DEMO": "false", "RLCONFORM_SHUTDOWN_GRACE": "1"}
    base.pop("RLCONFORM_API_TOKEN", None)
    figures: dict[str, dict[str, Any]] = {}
    processes, urls = start_reference_servers(args.servers)
    try:
        for weight in weights:

            def run(client: httpx.Client, url: str, options: dict[str, Any] = WEIGHTS[weight]) -> dict[str, Any]:
                return _measure(client, url, urls, options, minutes)

            if args.database_url:
                mode = f"workers 2x{args.concurrency}, {weight}"
                figures[mode] = _workers_mode(args.database_url, base, args.concurrency, run)
            else:
                print("no --database-url: the workers mode is left out")
            figures[f"embedded {2 * args.concurrency}, {weight}"] = _embedded_mode(base, 2 * args.concurrency, run)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
    _print(figures, args.servers, minutes)
    for weight in weights:
        print(f"{weight} runs: plugrl-server options {WEIGHTS[weight]}")


if __name__ == "__main__":
    main()
