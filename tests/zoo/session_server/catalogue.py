"""The session-server zoo: miles-style session servers that conform except for ONE fault each.

Each is the reference server (`checks/session/reference.py`) with one behaviour
overridden (`servers.py`); `start` is its class, served in its entry's tree mode.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from checks.session.reference import RunningServer, serve_app
from tests.zoo.entry import ZooEntry
from tests.zoo.session_server import servers


@dataclass(frozen=True, kw_only=True)
class SessionServerEntry(ZooEntry):
    """A broken session server; `start(tree)` is it, in that tree mode."""

    tree: str  # the trajectory mode the server is built with: "v1" (linear) or "v2" (tree)


ZOO: dict[str, SessionServerEntry] = {
    "health-without-status": SessionServerEntry(servers.HealthWithoutStatus, "session.ss01.health", tree="v1"),
    "short-session-ids": SessionServerEntry(servers.ShortSessionIds, "session.ss02.create", tree="v1"),
    "delete-answers-200": SessionServerEntry(servers.DeleteAnswers200, "session.ss03.lifecycle", tree="v2"),
    "detail-errors": SessionServerEntry(servers.DetailErrors, "session.ss03.lifecycle", tree="v1"),
    "records-other-content": SessionServerEntry(
        servers.RecordsOtherContent, "session.ss05.record-matches-reply", tree="v2"
    ),
    "stream-not-recorded": SessionServerEntry(servers.StreamNotRecorded, "session.ss04.one-record-per-call", tree="v1"),
    "records-keep-stream": SessionServerEntry(servers.RecordsKeepStream, "session.ss07.forced-fields", tree="v2"),
    "float32-rounded-samples": SessionServerEntry(servers.Float32RoundedSamples, "session.ss12.samples", tree="v1"),
    "float32-samples": SessionServerEntry(servers.Float32Samples, "session.ss12.samples", tree="v2"),
    "all-nodes-as-records": SessionServerEntry(servers.AllNodesAsRecords, "session.ss09.retry-topology", tree="v2"),
    "retry-extends-chain": SessionServerEntry(servers.RetryExtendsChain, "session.ss09.retry-topology", tree="v2"),
    "deep-rollback-accepted": SessionServerEntry(
        servers.DeepRollbackAccepted, "session.ss09.retry-topology", tree="v1"
    ),
    "truncation-not-guarded": SessionServerEntry(servers.TruncationNotGuarded, "session.ss10.truncation", tree="v2"),
    "crosstalk-commits": SessionServerEntry(servers.CrosstalkCommits, "session.ss11.concurrency", tree="v2"),
    "records-failed-calls": SessionServerEntry(
        servers.RecordsFailedCalls, "session.ss08.failed-not-recorded", tree="v1"
    ),
    "accumulated-drops-last": SessionServerEntry(servers.AccumulatedDropsLast, "session.ss06.tito", tree="v1"),
    "tool-call-ids-rewritten": SessionServerEntry(
        servers.ToolCallIdsRewritten, "session.ss14.tool-call-ids", tree="v1"
    ),
}


async def start(name: str) -> RunningServer:
    entry = ZOO[name]
    return await serve_app(entry.start(entry.tree))


def main() -> None:  # for trying one by hand: python -m tests.zoo.session_server.catalogue NAME PORT
    import sys

    async def run() -> None:
        entry = ZOO[sys.argv[1]]
        running = await serve_app(entry.start(entry.tree), port=int(sys.argv[2]))
        print(f"{sys.argv[1]} ({entry.tree}, breaks {entry.clause}) on {running.url}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


if __name__ == "__main__":
    main()
