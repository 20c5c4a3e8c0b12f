"""The ORS zoo: the reference server with ONE fault each (`servers.BrokenOrsServer`); `start` is the fault's name.

Every entry runs with `QUICK_OPTIONS` (a shorter timeout, fewer /create_session
calls) over its own options: no tool is named, so each entry is caught with the
tools the suite discovers and the inputs it makes from their schemas.
"""

from __future__ import annotations

from checks.ors.conforming import KEEPALIVE_OPTIONS, QUICK_OPTIONS
from checks.ors.reference import RunningServer, serve_app
from tests.zoo.entry import ZooEntry
from tests.zoo.ors.servers import BrokenOrsServer

# The options that narrow the calls to the reference's own tools (the suite finds them unnamed too).
NAMED_TOOLS = {"tool": "step", "big_output_tool": "dump", "big_output_input": {"size": 10_000}, "raising_tool": "fail"}

# KEEPALIVE_OPTIONS (checks/ors/conforming.py): the opt-in keep-alive phase alone, with the delays of `servers.SHORT`.


def entry(clause: str, *knock_on: str, **options: object) -> ZooEntry:
    return ZooEntry("", clause, knock_on=frozenset(knock_on), options=dict(options))


def keepalive_entry(clause: str) -> ZooEntry:
    return ZooEntry("", clause, options=KEEPALIVE_OPTIONS, phases=("keepalive",))


_ZOO = {
    "list-envs-not-array": entry("ors.discovery.list-envs", "ors.discovery.env-name-usable", env="counter"),
    "listed-name-unusable": entry("ors.discovery.env-name-usable"),
    "unknown-env-200": entry("ors.discovery.unknown-env"),
    "tools-without-description": entry("ors.tools.shape"),
    "splits-bad-type": entry("ors.splits.shape"),
    "tasks-without-env-name": entry("ors.tasks.shape"),
    "invalid-split-200": entry("ors.tasks.invalid-split"),
    "index-api-off": entry("ors.tasks.index-api-consistent"),
    "index-out-of-range-200": entry("ors.tasks.index-out-of-range"),
    "task-range-ignores-start": entry("ors.tasks.index-api-consistent"),
    "create-session-no-id": entry("ors.session.create-session"),
    "duplicate-session-ids": entry("ors.session.create-session-unique"),
    "create-wrong-sid": entry("ors.session.create"),
    "both-sources-accepted": entry("ors.session.create-exactly-one-source"),
    "duplicate-create-accepted": entry("ors.session.create-duplicate"),
    "missing-header-200": entry("ors.session.id-header"),
    "unknown-sid-200": entry("ors.session.unknown-sid", "ors.delete.teardown"),
    "setup-not-blocking": entry("ors.session.setup-blocking", "ors.prompt.blocks"),
    "prompt-not-blocks": entry("ors.prompt.blocks"),
    "ping-wrong-body": entry("ors.ping.ok"),
    "session-outlives-delete": entry("ors.delete.teardown"),
    "delete-unknown-500": entry("ors.delete.idempotent"),
    "delete-session-405": entry("ors.delete-session.ok"),
    "call-after-delete-runs": entry("ors.delete.teardown"),
    "call-json-content-type": entry("ors.call.sse-content-type"),
    "first-event-not-task-id": entry("ors.call.first-event-task-id"),
    # Without an end event the ok:false of a refused call cannot be read either.
    "no-terminal-event": entry(
        "ors.call.terminal-event", "ors.call.chunk-reassembly", "ors.call.unknown-tool", "ors.call.bad-input"
    ),
    "events-after-end": entry("ors.call.terminal-event"),
    "chunks-dont-reassemble": entry("ors.call.chunk-reassembly"),
    "envelope-without-ok": entry("ors.call.result-envelope"),
    "finished-as-string": entry("ors.call.tooloutput-shape"),
    "string-reward": entry("ors.call.reward-number"),
    "nan-reward": entry("ors.call.reward-number"),
    "unknown-tool-runs": entry("ors.call.unknown-tool"),
    "bad-input-runs": entry("ors.call.bad-input"),
    "missing-input-accepted": entry("ors.call.missing-input"),
    "tool-runs-twice-on-resume": entry("ors.call.resume"),
    "one-task-id-for-all-calls": entry("ors.call.resume"),
    "raising-tool-cut": entry("ors.call.error-event", "ors.call.terminal-event"),
    "raising-tool-500": entry("ors.call.error-event"),
    "raising-tool-drops-connection": entry("ors.call.error-event"),
    "reward-after-finished": entry("ors.finished.after-finished"),
    "errors-without-detail": entry("ors.errors.json-detail"),
    "500-on-bad-body": entry("ors.errors.malformed-body"),
    "silent-slow-call": keepalive_entry("ors.call.keepalive"),
    "sessions-never-expire": keepalive_entry("ors.session.idle-expiry"),
    "pings-do-not-keep-alive": keepalive_entry("ors.ping.keeps-alive"),
}
ZOO: dict[str, ZooEntry] = {
    name: ZooEntry(name, e.clause, knock_on=e.knock_on, options={**QUICK_OPTIONS, **e.options}, phases=e.phases)
    for name, e in _ZOO.items()
}


async def start(name: str) -> RunningServer:
    return await serve_app(BrokenOrsServer(ZOO[name].start))
