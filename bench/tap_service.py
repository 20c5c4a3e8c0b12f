"""What a tap the service hosts adds to live traffic, side by side with a direct connection and with the
standalone `rlconform tap`, in one run.

Starts bench/tap.py's upstream (a WebSocket echo) in a subprocess, `rlconform serve` in another with a
tap target on that upstream and one tap run hosted (its judges in a spawned process, or with
`--judging thread` in a thread of the service; its counters written every RLCONFORM_TAP_FLUSH_SECONDS),
and `rlconform tap` in a third; then alternates
blocks direct, hosted and standalone from this process: round trips of a 200-byte frame (p50, p99)
and the throughput of 2.25 MiB frames. Prints the hosted tap's figures as ratios to the direct ones.

    python bench/tap_service.py [--rounds 2000] [--frames 40] [--blocks 3] [--judging process|thread]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.tap import latencies, p, start, start_tap, throughput  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_service(database: Path, judging: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RLCONFORM_TAP_FLUSH_SECONDS": "2", "RLCONFORM_TAP_JUDGING": judging}
    command = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--database-url", f"sqlite:///{database}", "--no-demo", "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the service did not start")


def hosted_tap(service: str, upstream: str) -> tuple[int, int]:
    """(run id, port) of a hosted tap run on `upstream`, once it listens."""
    body = {"name": "bench-tap", "kind": "plugrl", "upstream": upstream}
    assert httpx.post(f"{service}/api/v1/taps", json=body).status_code == 201
    run_id = httpx.post(f"{service}/api/v1/targets/bench-tap/runs", json={}).json()["id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = httpx.get(f"{service}/api/v1/runs/{run_id}/tap")
        if answer.status_code == 200 and answer.json()["listen_url"]:
            return run_id, int(answer.json()["listen_url"].rsplit(":", 1)[1])
        time.sleep(0.1)
    raise RuntimeError("the hosted tap did not listen")


async def measure(args: argparse.Namespace, ports: dict[str, int]) -> dict[str, dict[str, list[float]]]:
    seen: dict[str, dict[str, list[float]]] = {name: {"lat": [], "mib": []} for name in ports}
    for _ in range(args.blocks):
        for name, port in ports.items():
            seen[name]["lat"] += await latencies(port, args.rounds)
            seen[name]["mib"].append(await throughput(port, args.frames))
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--judging", choices=["process", "thread"], default="process", help="the hosted tap's judges")
    args = parser.parse_args()
    upstream, ports_line = start([sys.executable, str(ROOT / "bench" / "tap.py"), "--serve-upstream"])
    ws_port = int(ports_line.split()[0])
    upstream_url = f"ws://127.0.0.1:{ws_port}"
    with tempfile.TemporaryDirectory() as tmp:
        service, service_url = start_service(Path(tmp) / "bench.db", args.judging)
        standalone, standalone_port = start_tap("plugrl", upstream_url)
        try:
            run_id, hosted_port = hosted_tap(service_url, upstream_url)
            seen = asyncio.run(measure(args, {"direct": ws_port, "hosted": hosted_port, "standalone": standalone_port}))
            time.sleep(2.5)  # one more flush of the hosted tap's counters
            written = httpx.get(f"{service_url}/api/v1/runs/{run_id}/tap").json()["ledger"]
        finally:
            for process in (standalone, service, upstream):
                process.terminate()
                process.wait(20)
    direct = seen["direct"]
    for name in ("hosted", "standalone"):
        lat, mib = seen[name]["lat"], statistics.median(seen[name]["mib"])
        print(
            f"{name}: small round trip p50 added {(p(lat, 50) - p(direct['lat'], 50)) * 1e6:.0f} us, "
            f"p99 added {(p(lat, 99) - p(direct['lat'], 99)) * 1e6:.0f} us; "
            f"2.25 MiB frames {mib:.0f} MiB/s, ratio to direct {mib / statistics.median(direct['mib']):.2f}"
        )
    print(
        f"direct: p50 {p(direct['lat'], 50) * 1e6:.0f} us, p99 {p(direct['lat'], 99) * 1e6:.0f} us, "
        f"{statistics.median(direct['mib']):.0f} MiB/s"
    )
    print(
        f"hosted tap's counters as written: {written.get('messages', 0)} messages, "
        f"{written.get('unjudged_messages', 0)} unjudged"
    )


if __name__ == "__main__":
    main()
