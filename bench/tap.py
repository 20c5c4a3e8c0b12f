"""What a tap adds to live traffic, measured side by side with a direct connection in one run.

Starts an upstream in a subprocess (a WebSocket echo and an SSE source), `rlconform tap` in
another and a bare relay (forwarding only, no copies: the extra loopback hop by itself) in a third,
then alternates blocks direct, through the bare relay and tapped from this process:

- small messages: round-trip latency of a 200-byte binary frame echoed (p50 and p99, direct and tapped);
- big frames: throughput of 2.25 MiB PlugRL infer messages (a camera image), each answered with a 2-byte ack;
- SSE: delay of each chunk of a stream, from the upstream's write (its perf_counter, which is the
  machine's monotonic clock) to this process's read;
- judging: PlugRL infer messages a second through the PlugRL watcher's judges on one core, in process;
- the tapping process's CPU (user and system, from /proc) per small round trip and per big frame: steadier
  than wall time on a shared machine, and what a change to the relay should lower.

    python bench/tap.py [--rounds 2000] [--frames 40] [--chunks 500] [--blocks 3] [--loop auto|asyncio|uvloop]
                        [--profile PREFIX]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.plugrl import messages as plugrl_messages  # noqa: E402
from checks.plugrl import options as plugrl_options  # noqa: E402
from checks.plugrl.codec import pack  # noqa: E402
from checks.tap.copies import Copy  # noqa: E402
from checks.tap.ledger import Ledger  # noqa: E402
from checks.tap.plugrl import PlugrlWatcher  # noqa: E402
from checks.tap.plugrl import spec as plugrl_spec  # noqa: E402
from checks.tap.wsframes import BINARY, WsMessage  # noqa: E402

SSE_GAP = 0.002


# ---------------------------------------------------------------- the upstream (run as a subprocess)


async def serve_upstream() -> None:
    from websockets.asyncio.server import ServerConnection, serve

    async def echo(ws: ServerConnection) -> None:
        async for message in ws:
            await ws.send(message if len(message) < 1 << 16 else b"ok")

    async def sse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        count = int((await reader.readexactly(8)).decode())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(count):
            data = f"data: {time.perf_counter_ns()}\n\n".encode()
            writer.write(b"%x\r\n" % len(data) + data + b"\r\n")
            await writer.drain()
            await asyncio.sleep(SSE_GAP)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    async with serve(echo, "127.0.0.1", 0, compression=None, max_size=None) as ws_server:
        sse_server = await asyncio.start_server(sse, "127.0.0.1", 0)
        ws_port = next(iter(ws_server.sockets)).getsockname()[1]
        print(ws_port, sse_server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()


def start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def start_tap(
    kind: str, upstream: str, profile: str = "", loop: str = "auto", json_path: str = ""
) -> tuple[subprocess.Popen[str], int]:
    profiler = ["-m", "cProfile", "-o", f"{profile}.{kind}.prof"] if profile else []
    windows = ["--json", json_path] if json_path else []
    process, line = start(
        [
            sys.executable,
            *profiler,
            "-m",
            "app.cli",
            "tap",
            kind,
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--loop",
            loop,
            *windows,
        ]
    )
    return process, int(line.split("127.0.0.1:", 1)[1].split(",", 1)[0])


class BareSide(asyncio.Protocol):
    """A relay that only forwards (no reading, no copies): what the extra loopback hop costs by itself."""

    def __init__(self, peer: BareSide | None = None) -> None:
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        self.early: list[bytes] = []  # read before the upstream answered (uvloop may read once after a pause)
        if peer is not None:
            peer.peer = self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        if self.peer is None or self.peer.transport is None:
            self.early.append(data)
        else:
            self.peer.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


async def serve_bare_relay(upstream_port: int) -> None:
    loop = asyncio.get_running_loop()

    class Client(BareSide):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            assert self.transport is not None
            self.transport.pause_reading()  # until the upstream answers
            loop.create_task(self.pair(self.transport))

        async def pair(self, transport: asyncio.Transport) -> None:
            upstream, _ = await loop.create_connection(lambda: BareSide(self), "127.0.0.1", upstream_port)
            upstream.writelines(self.early)
            transport.resume_reading()

    server = await loop.create_server(Client, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


def run_loop(main: Coroutine[Any, Any, None], loop: str) -> None:
    """Run `main` on the loop the taps get for the same --loop, so the bare relay is their like."""
    from app.cli.tap import event_loop_factory

    with asyncio.Runner(loop_factory=event_loop_factory(loop)) as runner:
        runner.run(main)


# ---------------------------------------------------------------- the measurements


async def latencies(port: int, rounds: int) -> list[float]:
    from websockets.asyncio.client import connect

    payload = bytes(200)
    times = []
    async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as ws:
        for _ in range(rounds):
            started = time.perf_counter()
            await ws.send(payload)
            await ws.recv()
            times.append(time.perf_counter() - started)
    return times[rounds // 10 :]


def observation_frame() -> bytes:
    """A PlugRL infer message whose observation is a 3 x 512 x 512 x 3 uint8 camera image (2.25 MiB): what the
    tap's judges decode whole, as they would from a real env client."""
    options = plugrl_options.PlugRLServerOptions()
    message = plugrl_messages.infer_message(options, [0, 1, 2])
    message["data"]["images"] = {"cam": np.random.default_rng(0).integers(0, 255, (3, 512, 512, 3), dtype=np.uint8)}
    return pack(message)


async def throughput(port: int, frames: int) -> float:
    from websockets.asyncio.client import connect

    frame = observation_frame()
    async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as ws:
        started = time.perf_counter()
        for _ in range(frames):
            await ws.send(frame)
            await ws.recv()
        return frames * len(frame) / (time.perf_counter() - started) / 2**20


async def chunk_delays(port: int, chunks: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /sse HTTP/1.1\r\nHost: x\r\n\r\n" + f"{chunks:08d}".encode())
    delays = []
    buffer = b""
    while True:
        data = await reader.read(65536)
        if not data:
            break
        now = time.perf_counter_ns()
        buffer += data
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if b"data: " in event:
                delays.append((now - int(event.split(b"data: ")[1])) / 1e9)
    writer.close()
    return delays


def judging_rate(exchanges: int) -> tuple[float, int]:
    """Infer messages a second through the PlugRL watcher's judges (with their actions and feedbacks)."""
    watcher, ledger = PlugrlWatcher(), Ledger(plugrl_spec().catalogue)
    options = plugrl_options.PlugRLServerOptions()
    envs = list(range(8))
    metadata = pack({"message_type": "metadata", "data": {"protocol_version": 1, "action_horizon": 4}})
    infer = pack(plugrl_messages.infer_message(options, envs))
    action = pack({"message_type": "action", "data": {"env_ids": np.arange(8), "action": np.zeros((4, 8, 3), "<f4")}})
    feedback = pack(plugrl_messages.feedback_message(options, envs))

    def copy(sender: str, data: bytes) -> Copy:
        return Copy(1, sender, WsMessage(BINARY, [(data, b"")], len(data)), len(data), 0.0)

    watcher.judge(copy("server", metadata), ledger)
    cycle = [copy("client", infer), copy("server", action), copy("client", feedback)]
    started = time.process_time()
    for _ in range(exchanges):
        for item in cycle:
            watcher.judge(item, ledger)
    elapsed = time.process_time() - started
    violated = sum(tally.violated for tally in ledger.tallies.values())
    return exchanges / elapsed, violated


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU so far (its threads included, its children not): less noisy than wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


async def run(args: argparse.Namespace) -> None:
    upstream, ports = start([sys.executable, __file__, "--serve-upstream"])
    ws_port, sse_port = (int(v) for v in ports.split())
    bare, bare_port = start([sys.executable, __file__, "--loop", args.loop, "--serve-bare-relay", str(ws_port)])
    judged = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name  # the tap's windows, at its end
    ws_tap, ws_tap_port = start_tap("plugrl", f"ws://127.0.0.1:{ws_port}", args.profile, args.loop, judged)
    sse_tap, sse_tap_port = start_tap("openai", f"http://127.0.0.1:{sse_port}", args.profile, args.loop)
    # direct, through the bare relay (the hop alone) and through the tap; SSE direct and tapped only
    paths = {"direct": (ws_port, sse_port), "bare": (int(bare_port), 0), "tapped": (ws_tap_port, sse_tap_port)}
    found: dict[str, dict[str, list[float]]] = {name: {"lat": [], "mib": [], "sse": []} for name in paths}
    cpu = {"lat": 0.0, "mib": 0.0}  # the tapping process's CPU seconds in the tapped blocks
    try:
        for _ in range(args.blocks):
            for name, (port, sse) in paths.items():
                before = cpu_seconds(ws_tap.pid)
                found[name]["lat"] += await latencies(port, args.rounds)
                middle = cpu_seconds(ws_tap.pid)
                found[name]["mib"].append(await throughput(port, args.frames))
                if name == "tapped":
                    cpu["lat"] += middle - before
                    cpu["mib"] += cpu_seconds(ws_tap.pid) - middle
                if sse:
                    found[name]["sse"] += await chunk_delays(sse, args.chunks)
    finally:
        for process in (ws_tap, sse_tap, bare, upstream):
            process.terminate()
            process.wait(10)
    report(found, cpu, args)
    windows = json.loads(Path(judged).read_text())["windows"]
    os.unlink(judged)
    messages, unjudged = (sum(window[key] for window in windows) for key in ("messages", "unjudged_messages"))
    print(f"the PlugRL tap judged {messages - unjudged} of its {messages} messages ({unjudged} left unjudged)")


def report(found: dict[str, dict[str, list[float]]], cpu: dict[str, float], args: argparse.Namespace) -> None:
    direct, bare, tapped = found["direct"], found["bare"], found["tapped"]
    for q in (50, 99):
        d, b, t = (p(path["lat"], q) * 1e6 for path in (direct, bare, tapped))
        print(
            f"small round trip p{q}: direct {d:.0f} us, bare relay {b:.0f} us, tapped {t:.0f} us, "
            f"added {t - d:.0f} us (the bare relay's hop alone {b - d:.0f} us)"
        )
    mib_d, mib_b, mib_t = (statistics.median(path["mib"]) for path in (direct, bare, tapped))
    print(
        f"2.25 MiB frames: direct {mib_d:.0f} MiB/s, bare relay {mib_b:.0f} MiB/s, tapped {mib_t:.0f} MiB/s, "
        f"ratio {mib_t / mib_d:.2f} (bare relay {mib_b / mib_d:.2f}; tapped / bare relay {mib_t / mib_b:.2f})"
    )
    sse_d, sse_t = direct["sse"], tapped["sse"]
    print(
        f"SSE chunk delay p50: direct {p(sse_d, 50) * 1e6:.0f} us, tapped {p(sse_t, 50) * 1e6:.0f} us; "
        f"p99 direct {p(sse_d, 99) * 1e6:.0f} us, tapped {p(sse_t, 99) * 1e6:.0f} us"
    )
    per_round = cpu["lat"] / (args.blocks * args.rounds) * 1e6
    per_frame = cpu["mib"] / (args.blocks * args.frames) * 1e3
    print(f"tap's relay process CPU: {per_round:.0f} us per small round trip, {per_frame:.2f} ms per 2.25 MiB frame")
    rate, violated = judging_rate(args.exchanges)
    print(
        f"judging: {rate:.0f} PlugRL infer messages/s on one core (with actions and feedbacks; {violated} violations)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--exchanges", type=int, default=2000)
    parser.add_argument("--loop", default="auto", choices=("auto", "asyncio", "uvloop"), help="the taps' event loop")
    parser.add_argument("--profile", default="", help="write each tap's cProfile to PREFIX.KIND.prof")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare-relay", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        asyncio.run(serve_upstream())
    elif args.serve_bare_relay:
        run_loop(serve_bare_relay(args.serve_bare_relay), args.loop)
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
