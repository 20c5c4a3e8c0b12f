"""Operations endpoints under hostile input: the badge of any name, and metrics in strict exposition format."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.app.helpers import make_target, service_settings, wait_for_run

URL = "ws://127.0.0.1:9"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


@pytest.mark.parametrize("name", ["a%01b", "%3Cx%3E%26%22", "%F0%9F%98%80", "x" * 300])
def test_the_badge_of_any_name_is_well_formed_svg(client: TestClient, name: str) -> None:
    response = client.get(f"/badge/{name}.svg")
    assert response.status_code == 404 and response.headers["content-type"].startswith("image/svg+xml")
    assert ET.fromstring(response.content).tag == "{http://www.w3.org/2000/svg}svg"


METRIC_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$')


def parse_exposition(text: str) -> dict[str, dict]:
    """Prometheus text format 0.0.4, strictly: HELP and TYPE before each family's samples, numeric values."""
    families: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert name not in families, f"family {name} declared twice"
            families[name] = current = {"type": None, "samples": []}
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert current is families.get(name) and kind in ("counter", "gauge", "histogram")
            current["type"] = kind
        else:
            match = METRIC_SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, value = match.group(1), float(match.group(4))
            family = max((f for f in families if name == f or name.startswith(f + "_")), key=len)
            assert families[family] is current and current["type"], f"{name} outside its family"
            current["samples"].append((line, value))
    for name, family in families.items():
        if family["type"] == "counter":
            assert name.endswith("_total")
    return families


def test_metrics_are_valid_exposition_and_count_every_ended_run(database_url: str, fake_kind: str) -> None:
    with TestClient(create_app(service_settings(database_url, max_concurrent_runs=1))) as client:
        make_target(client, "m", fake_kind, URL, options={"delay": 0.2})
        first = client.post("/api/v1/targets/m/runs", json={}).json()
        queued = client.post("/api/v1/targets/m/runs", json={}).json()
        wait_for_run(client, first["id"], {"running"})
        assert client.post(f"/api/v1/runs/{queued['id']}/cancel").json()["status"] == "cancelled"
        wait_for_run(client, first["id"])
        response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = parse_exposition(response.text)
    ended = dict((line.split(" ")[0], value) for line, value in families["rlconform_runs_ended_total"]["samples"])
    assert ended == {
        'rlconform_runs_ended_total{status="finished",outcome="pass"}': 1,
        'rlconform_runs_ended_total{status="cancelled",outcome="none"}': 1,
    }
    buckets = [value for line, value in families["rlconform_run_duration_seconds"]["samples"] if "_bucket" in line]
    assert buckets == sorted(buckets) and buckets[-1] == 1  # cumulative; only the executed run is timed
