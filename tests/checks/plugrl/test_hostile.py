"""Hostile servers get a verdict, within the deadlines, with bounded memory and no harness error."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import tracemalloc
from pathlib import Path

import msgpack
import pytest

from checks.core import NoReply, Outcome, Transcript, Verdict
from checks.evidence import CutText, summarize
from checks.plugrl.codec import STR_CAP, CodecError, unpack
from checks.plugrl.probe import Probe
from checks.plugrl.suite import SUITE
from checks.wire import WRITE_BACKLOG_LIMIT, open_websocket
from tests.zoo.plugrl_server.hostile import HOSTILE, NASTY_TEXT

REPO_ROOT = Path(__file__).resolve().parents[3]

TIMEOUT = 1.0
RSS_GROWTH_LIMIT_MB = 300  # a bound on the checker, not a speed target
CHILD_STARTUP = 30.0  # seconds a child python may take to import the checker, over the check's own deadline

# The clause each attack must be reported under, and the verdicts allowed for it.
EXPECTED = {
    "huge-frame": ("plugrl.5.1.speaks-first", {Verdict.ERROR}),  # over the frame cap: the checker cannot decide
    "endless-frames": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "endless-pings": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "one-byte-at-a-time": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "nesting-bomb": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "bin32-4gib": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "shape-bomb": ("plugrl.3.2.ndarray-form", {Verdict.FAIL}),
    "ten-million-keys": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "fifty-mb-string": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    # valid metadata (the long value cut, not refused), then no answer to the infer
    "fifty-mb-string-value": ("plugrl.5.3.answered-with-action", {Verdict.FAIL}),
    # valid metadata, then a ping flood while the checker's pongs go unread: no answer either
    "pings-never-reading": ("plugrl.5.3.answered-with-action", {Verdict.FAIL}),
    "random-bytes": ("plugrl.5.1.speaks-first", {Verdict.FAIL, Verdict.ERROR}),
    "reset-mid-frame": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "silence-after-handshake": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    # a message growing past the frame cap: the checker cannot decide, as with one huge frame
    "endless-fragments": ("plugrl.5.1.speaks-first", {Verdict.ERROR}),
}


async def check_in_own_process(url: str, deadline: float) -> dict:
    """The exchange phase in a child process (hostile_check.py): its results and its own peak RSS."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tests.checks.plugrl.hostile_check", url, str(TIMEOUT), str(deadline)),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=deadline + CHILD_STARTUP)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, f"exit {process.returncode}\n{stderr.decode()}"
    return json.loads(stdout)


def test_every_hostile_server_has_an_expectation():
    assert set(EXPECTED) == set(HOSTILE)


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_server_gets_a_verdict_with_bounded_memory(name, tcp_server_factory):
    url = await tcp_server_factory(HOSTILE[name])
    deadline = SUITE.phase("exchange").budget * TIMEOUT + 1
    checked = await check_in_own_process(url, deadline + 5)
    growth = checked["peak_mb"] - checked["before_mb"]

    clause, allowed = EXPECTED[name]
    results = {(r["phase"], r["clause_id"]): r for r in checked["results"]}
    result = results[("exchange", clause)]
    assert Verdict(result["verdict"]) in allowed, result
    assert Outcome(checked["outcome"]) in (Outcome.FAIL, Outcome.ERROR)
    assert not [r for r in results.values() if "harness error" in r["actual"]]
    assert all(len(r["actual"]) <= 700 for r in results.values())
    assert growth < RSS_GROWTH_LIMIT_MB, f"peak RSS grew by {growth:.0f} MB"


# ---------------------------------------------------------------- the two that used to hang the checker

SILENT_AFTER_METADATA = ["fifty-mb-string-value", "pings-never-reading"]


@pytest.mark.parametrize("name", SILENT_AFTER_METADATA)
async def test_attack_after_metadata_stops_the_phase_after_one_step(name, tcp_server_factory, run_check):
    url = await tcp_server_factory(HOSTILE[name])
    started = time.monotonic()
    report = await asyncio.wait_for(run_check(url, phases=["exchange"], timeout=TIMEOUT), timeout=30)
    elapsed = time.monotonic() - started
    # One step timeout for the unanswered infer, then the connection is dropped, not closed politely.
    assert elapsed < 3 * TIMEOUT + 2, f"the exchange phase took {elapsed:.1f}s"
    assert report.results[("exchange", "plugrl.5.1.speaks-first")].verdict == Verdict.PASS


@pytest.mark.parametrize("name", SILENT_AFTER_METADATA)
async def test_cli_until_stop_ends_well_within_its_deadlines(name, tcp_server_factory, tmp_path):
    url = await tcp_server_factory(HOSTILE[name])
    out = tmp_path / "report.json"
    phases = ["exchange", "stop"]
    deadline = sum(SUITE.phase(phase).deadline(SUITE.parse_options({"timeout": TIMEOUT})) for phase in phases)
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "app.cli", "check", "plugrl-server", url, "--phase", "exchange", "--until-stop"),
        *("--timeout", str(TIMEOUT), "--json", str(out), "--quiet"),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    elapsed = time.monotonic() - started
    assert process.returncode == 1, f"exit {process.returncode}\n{stdout.decode()}\n{stderr.decode()}"
    # Two phases, each about one step timeout; the deadlines allow well over a minute.
    assert elapsed < 12, f"the CLI took {elapsed:.1f}s (deadlines {deadline:.0f}s)"
    results = {(r["phase"], r["clause_id"]): r for r in json.loads(out.read_text())["results"]}
    assert results[("exchange", "plugrl.5.3.answered-with-action")]["verdict"] == "fail"
    assert results[("stop", "plugrl.7.1.stop-close")]["verdict"] == "fail"
    assert not [r for r in results.values() if "harness error" in r["actual"]]


async def test_once_a_close_goes_unanswered_later_connections_are_dropped(tcp_server_factory, run_check):
    # shape-bomb answers every infer with an undecodable action and never answers a close frame: the
    # errors phase opens some twenty connections, and used to wait out the close deadline on each.
    url = await tcp_server_factory(HOSTILE["shape-bomb"])
    started = time.monotonic()
    report = await asyncio.wait_for(run_check(url, phases=["errors"], timeout=TIMEOUT), timeout=60)
    elapsed = time.monotonic() - started
    waited = [t.label for t in report.transcripts.values() if t.close_reason == ""]
    dropped = [t for t in report.transcripts.values() if "answered no close" in (t.close_reason or "")]
    assert len(waited) == 1, f"closes waited out: {waited}"
    assert len(dropped) >= 5
    assert elapsed < 6 * TIMEOUT + 2, f"the errors phase took {elapsed:.1f}s"
    assert report.results[("errors", "plugrl.7.2.resync-malformed")].verdict == Verdict.FAIL
    assert report.results[("errors", "plugrl.7.2.accepts-after-error")].verdict == Verdict.PASS


async def test_a_cancellation_a_wire_step_swallowed_is_raised_again():
    started = asyncio.Event()

    async def swallowing() -> str:  # Python 3.11's wait_for, when its inner result comes with the cancel
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "the late result"
        return "no cancel"

    task = asyncio.create_task(Probe._kept_cancellable(swallowing()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)


async def test_pongs_the_target_never_reads_stop_the_reading(tcp_server_factory):
    url = await tcp_server_factory(HOSTILE["pings-never-reading"])
    transcript = Transcript(1, "exchange", "pings")
    ws = await open_websocket(url, transcript, timeout=TIMEOUT)
    try:
        await ws.recv()  # the metadata
        for _ in range(10):  # the flood fills the backlog in well under 2 s, unless the machine is loaded
            with pytest.raises(NoReply):
                await ws.recv(2.0)
            if ws.backed_up:
                break
        backlog = ws.connection.transport.get_write_buffer_size()
        assert backlog < WRITE_BACKLOG_LIMIT + 1024 * 1024, f"{backlog} bytes of pongs queued"
        assert ws.backed_up
        assert any("not reading" in frame.summary for frame in transcript.frames)
        started = time.monotonic()
        await ws.close()  # a close frame cannot get past the backlog: dropped at once
        assert time.monotonic() - started < 0.5
    finally:
        ws.connection.transport.abort()


async def test_a_received_frame_is_not_kept_by_the_connection(tcp_server_factory):
    url = await tcp_server_factory(HOSTILE["fifty-mb-string-value"])
    ws = await open_websocket(url, Transcript(1, "exchange", "string"), timeout=TIMEOUT)
    try:
        tracemalloc.start()
        try:
            data = await ws.recv()
            assert len(data) > 50_000_000
            del data
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert held < 10_000_000, f"{held} bytes still held after the frame was dropped"
    finally:
        await ws.close()


def test_a_long_string_value_is_cut_before_it_is_decoded():
    text = NASTY_TEXT * (2_000_000 // len(NASTY_TEXT))
    frame = msgpack.packb({"message_type": "metadata", "data": {"protocol_version": 1, "banner": text.decode()}})
    tracemalloc.start()
    try:
        message = unpack(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 1024 * 1024, f"decoding peaked at {peak} bytes"
    banner = message["data"]["banner"]
    assert isinstance(banner, CutText) and banner.size == len(text) and len(banner) < 400
    assert message["data"]["protocol_version"] == 1 and message["message_type"] == "metadata"
    shown = summarize(message)
    assert f"({len(text)} bytes, cut)" in shown and "\x1b" not in shown and "\r" not in shown


def test_a_cut_string_is_still_checked_for_utf8():
    frame = msgpack.packb({"message_type": "metadata", "data": {"banner": "x" * (2 * STR_CAP)}})
    frame = frame.replace(b"xxxx", b"x\xff\xfex", 1)
    with pytest.raises(CodecError, match="not UTF-8"):
        unpack(frame)


def test_strings_past_the_text_budget_are_cut_but_short_ones_kept():
    frame = msgpack.packb({"message_type": "metadata", "data": {str(i): "y" * STR_CAP for i in range(200)}})
    message = unpack(frame)
    values = list(message["data"].values())
    assert type(values[0]) is str and isinstance(values[-1], CutText)
    assert message["message_type"] == "metadata"
