"""A failing PlugRL run counted one way everywhere: run counts, run page, history, JSON export and JUnit.

The server closes 1011 on its first infer, so most clauses of the exchange phase
cannot be exercised: none may stay pending, and all of them sit under one root cause.
"""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.app.conftest import QUICK_PLUGRL, BackgroundLoop
from tests.app.helpers import make_target, wait_for_run
from tests.zoo.plugrl_server.core import ZooServer


class ClosesOnFirstInfer(ZooServer):
    """Greets properly, then closes 1011 'broken server' on the first infer of every connection."""

    async def infer(self, connection, env_ids):
        await connection.ws.close(1011, "broken server")
        raise asyncio.CancelledError


@pytest.fixture
def broken_url(background_loop: BackgroundLoop) -> Iterator[str]:
    server = background_loop.run(ClosesOnFirstInfer().start())
    try:
        yield server.url
    finally:
        background_loop.run(server.close())


def test_a_failing_plugrl_run_agrees_everywhere(client: TestClient, broken_url: str) -> None:
    make_target(client, "dies", "plugrl-server", broken_url, options=QUICK_PLUGRL)
    run_id = client.post("/api/v1/targets/dies/runs").json()["id"]
    run = wait_for_run(client, run_id, timeout=120)
    assert run["status"] == "finished" and run["outcome"] == "fail"
    counts = run["counts"]
    clauses = sum(counts.values())
    results = client.get(f"/api/v1/runs/{run_id}/results").json()
    assert clauses == len({r["clause_id"] for r in results}) == run["decided_clauses"] == run["total_clauses"]
    assert len(results) > clauses  # connection clauses are judged in several phases, counted once

    html = client.get(f"/runs/{run_id}").text
    rows = re.findall(r'<tr class="clause-row[^"]*" data-clause="([^"]+)"', html)
    assert len(rows) == len(set(rows)) == clauses
    assert ">not decided<" not in html and "waiting…" not in html and "v-pending" not in html
    banner = html.split('id="banner-title"', 1)[1].split("</section>", 1)[0]
    assert "closed it with code 1011" in banner and "in phase <strong>exchange</strong>" in banner
    assert banner.index("not met") < banner.index("Not decided, by cause")

    history = client.get("/api/v1/targets/dies/history").json()
    assert history["trend"][-1]["decided"] == clauses
    assert all(row["cells"][-1]["verdict"] for row in history["clauses"])
    assert len(history["clauses"]) == clauses

    export = client.get(f"/api/v1/runs/{run_id}/export.json").json()
    assert export["run"]["counts"] == counts

    junit = ET.fromstring(client.get(f"/api/v1/runs/{run_id}/junit.xml").text.split("?>", 1)[1])
    assert int(junit.get("tests")) == clauses
    assert int(junit.get("failures")) == counts.get("fail", 0)
    assert int(junit.get("errors")) == counts.get("error", 0)
