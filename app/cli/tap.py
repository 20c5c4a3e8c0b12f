"""`rlconform tap KIND --listen HOST:PORT --upstream URL`: forward live traffic unchanged and judge a copy.

Stops on SIGINT or SIGTERM, or after --duration seconds or --max-messages messages, prints the
per-clause summary of each window and exits 0 / 1 / 2 like `check`: the worst outcome of any
window. Client sources are admitted by RLCONFORM_ALLOWED_NETWORKS, as for listen-mode runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import httpx

from app.cli.check import check_writable
from app.cli.common import UsageError, parse_option_pairs
from app.cli.tap_post import WindowFeed, deliver_last, new_client, post_loop, poster_from
from app.netpolicy import source_allowed
from app.settings import get_settings
from checks.tap.kinds import tap_spec
from checks.tap.ledger import Ledger, Rollover, summary_lines
from checks.tap.run import TapRun, TapSpec, shorten_switch_interval
from checks.verdicts import EXIT_CODES, Gate, Outcome

POLL_SECONDS = 0.05
# A tap posting to a service: what it has not sent yet, its HTTP client and the task posting every few seconds.
Posting = tuple[WindowFeed, httpx.AsyncClient, "asyncio.Task[None]"]


def _listen_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--listen {text}: give HOST:PORT, e.g. 127.0.0.1:9000")
    return host.strip("[]"), int(port)


def cmd_tap(args: argparse.Namespace) -> int:
    try:
        spec = tap_spec(args.kind, parse_option_pairs(list(args.option or [])))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_writable(args.json, "--json")
    if bool(args.post) != bool(args.target):
        raise UsageError("--post SERVICE_URL and --target NAME go together")
    host, port = _listen_address(args.listen)
    gate = Gate.STRICT if args.strict else Gate.DEFAULT
    with asyncio.Runner(loop_factory=event_loop_factory(args.loop)) as runner:
        windows = runner.run(_tap(args, spec, host, port))
    outcomes = []
    for number, ledger in enumerate(windows, 1):
        if len(windows) > 1:
            print(f"window {number} of {len(windows)}")
        print("\n".join(summary_lines(ledger, quiet=args.quiet)))
        outcomes.append(ledger.outcome(gate))
    if args.json:
        Path(args.json).write_text(json.dumps({"kind": args.kind, "windows": [w.to_dict() for w in windows]}, indent=2))
    return EXIT_CODES[worst_outcome(outcomes)]


def event_loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The relay's event loop: uvloop's when asked for, or with `auto` when it is installed (as uvicorn picks)."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise UsageError("--loop uvloop: uvloop is not installed (pip install uvloop)") from None
        return None
    return cast(Callable[[], asyncio.AbstractEventLoop], uvloop.new_event_loop)


def _start_posting(args: argparse.Namespace, tap: TapRun) -> Posting | None:
    poster = poster_from(args, args.kind)
    if poster is None:
        return None
    feed, http = WindowFeed(poster), new_client()
    return feed, http, asyncio.create_task(post_loop(tap, feed, http, args.post_every), name="tap-post")


def worst_outcome(outcomes: list[Outcome]) -> Outcome:
    """A window that failed fails the tap, as a failed clause fails a run; else an errored one errs it."""
    for outcome in (Outcome.FAIL, Outcome.ERROR):
        if outcome in outcomes:
            return outcome
    return Outcome.PASS


async def _tap(args: argparse.Namespace, spec: TapSpec, host: str, port: int) -> list[Ledger]:
    allowed = get_settings().allowed_networks
    shorten_switch_interval()  # this process is the tap's own
    tap = TapRun(
        spec,
        args.upstream,
        rollover=Rollover(args.roll_seconds, args.roll_messages),
        admit=lambda source: source_allowed(source, allowed),
    )
    try:
        bound = await tap.start(host, port)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot tap {args.upstream} on {args.listen}: {exc}") from None
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):  # before saying where to connect: a stop may follow at once
        loop.add_signal_handler(signum, stopping.set)
    loop_name = type(loop).__module__.split(".")[0]  # uvloop or asyncio
    print(f"tap: listening on {host}:{bound}, forwarding to {args.upstream} (event loop: {loop_name})", flush=True)
    posting = _start_posting(args, tap)
    deadline = loop.time() + args.duration if args.duration is not None else None
    while not stopping.is_set():
        if deadline is not None and loop.time() >= deadline:
            break
        if args.max_messages is not None and tap.messages() >= args.max_messages:
            break
        try:
            await asyncio.wait_for(stopping.wait(), POLL_SECONDS)
        except TimeoutError:
            pass
    print("tap: stopping", file=sys.stderr, flush=True)
    windows = await tap.stop() if posting is None else await _stop_posting(tap, posting)
    if latency := tap.relay.stats.forward_latency():
        print(
            f"tap: read to forward in the tap, p50 {latency['forward_p50_ms']:.3f} ms, "
            f"p99 {latency['forward_p99_ms']:.3f} ms",
            file=sys.stderr,
            flush=True,
        )
    return windows


async def _stop_posting(tap: TapRun, posting: Posting) -> list[Ledger]:
    """Stop the tap, then send every window the service has not had yet (the last one closed)."""
    feed, http, task = posting
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    windows = await tap.stop()
    feed.take_final(windows)
    try:
        await deliver_last(feed, http)
    finally:
        await http.aclose()
    print(feed.poster.report(), file=sys.stderr, flush=True)
    return windows
