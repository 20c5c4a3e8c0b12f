"""Parity runs in the service: queued and executed like any run, their comparison and transcripts kept,
goldens saved, uploaded, downloaded and compared with; `rlconform ci` follows a parity run."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.cli import main as cli_main
from tests.app.conftest import QUICK_PLUGRL
from tests.app.helpers import make_target, wait_for_run

pytest.importorskip("checks.plugrl.reference")


@pytest.fixture
def plugrl_target(client: TestClient, reference_server: Callable[..., str]) -> Callable[..., dict[str, Any]]:
    def create(name: str, **server_kwargs: Any) -> dict[str, Any]:
        return make_target(client, name, "plugrl-server", reference_server(**server_kwargs), options=QUICK_PLUGRL)

    return create


def run_parity(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/v1/parity-runs", json=body)
    assert response.status_code == 202, response.text
    created = response.json()
    wait_for_run(client, created["id"], timeout=60)
    return client.get(f"/api/v1/parity-runs/{created['id']}").json()


def test_two_reference_servers_are_identical_and_keep_their_evidence(client, plugrl_target) -> None:
    plugrl_target("a")
    plugrl_target("b")
    run = run_parity(client, first="a", second="b")
    assert (run["status"], run["outcome"], run["parity_status"]) == ("finished", "pass", "identical"), run
    assert run["target"] == "a" and run["second"] == "b" and run["first_divergence"] is None
    result = client.get(f"/api/v1/parity-runs/{run['id']}/result").json()
    assert result["status"] == "identical" and result["divergence_count"] == 0
    assert [side["target"] for side in result["sides"]] == [t["url"] for t in client.get("/api/v1/targets").json()]
    export = client.get(f"/api/v1/runs/{run['id']}/export.json").json()
    assert {t["phase"] for t in export["transcripts"]} == {"A", "B"}  # both recordings' wire logs


def test_a_different_action_width_is_divergent_with_both_sides_bytes(client, plugrl_target) -> None:
    plugrl_target("wide", action_dim=4)
    plugrl_target("narrow", action_dim=3)
    run = run_parity(client, first="wide", second="narrow")
    assert (run["outcome"], run["parity_status"]) == ("fail", "divergent"), run
    first = run["first_divergence"]
    assert first["path"] and first["left"]["bytes"] != first["right"]["bytes"]
    result = client.get(f"/api/v1/parity-runs/{run['id']}/result").json()
    assert result["first"] == first and result["divergence_count"] >= 1 and result["divergences"]
    assert run["message"] == result["reason"]


def test_a_golden_saved_from_a_run_then_compared_with_uploaded_and_downloaded(client, plugrl_target, tmp_path) -> None:
    plugrl_target("a")
    plugrl_target("b")
    plugrl_target("wide", action_dim=4)
    first = run_parity(client, first="a", second="b")
    saved = client.post("/api/v1/goldens", json={"name": "last-week", "run_id": first["id"], "side": 0})
    assert saved.status_code == 201, saved.text
    assert saved.json()["kind"] == "plugrl-server" and saved.json()["source_run_id"] == first["id"]
    assert [g["name"] for g in client.get("/api/v1/goldens").json()] == ["last-week"]

    again = run_parity(client, first="b", golden="last-week")
    assert (again["parity_status"], again["golden"]) == ("identical", "last-week"), again
    diverged = run_parity(client, first="wide", golden="last-week")
    assert diverged["parity_status"] == "divergent"

    document = client.get("/api/v1/goldens/last-week/golden.json").json()
    assert document["format"] == "rlconform-parity-golden"
    assert client.put("/api/v1/goldens/copy", json=document).status_code == 201
    assert client.put("/api/v1/goldens/copy", json=document).status_code == 422  # the name is taken
    assert client.put("/api/v1/goldens/junk", json={"format": "nope"}).status_code == 422
    # The downloaded file is what `rlconform parity --golden` reads.
    (tmp_path / "golden.json").write_text(json.dumps(document))
    from checks.parity.recording import load_golden

    assert load_golden(tmp_path / "golden.json").kind == "plugrl-server"


def test_refusals_name_the_field(client, plugrl_target, reference_server) -> None:
    plugrl_target("a")
    make_target(client, "other-kind", "openai-chat", "http://127.0.0.1:9/v1")
    for body, field in [
        ({"first": "a"}, "second"),
        ({"first": "a", "second": "missing"}, "second"),
        ({"first": "a", "second": "other-kind"}, "second"),
        ({"first": "a", "golden": "missing"}, None),
        ({"first": "a", "second": "a", "options": {"rounds": 0}}, "options"),
    ]:
        response = client.post("/api/v1/parity-runs", json=body)
        assert response.status_code in (404, 422), (body, response.text)
        if field is not None:
            assert response.json()["detail"][0]["loc"][1] == field, response.text
    ordinary = client.post("/api/v1/targets/a/runs", json={}).json()
    assert client.get(f"/api/v1/parity-runs/{ordinary['id']}").status_code == 404


def test_a_second_target_on_another_label_is_warned_about(client, plugrl_target) -> None:
    plugrl_target("a")
    make_target(client, "far", "plugrl-server", "ws://127.0.0.1:9", worker_label="cluster-b")
    response = client.post("/api/v1/parity-runs", json={"first": "a", "second": "far"})
    assert response.status_code == 202
    created = response.json()
    assert created["worker_label"] == "default" and "cluster-b" in created["label_warning"]


def test_ci_follows_a_parity_run_and_exits_0_1_2(live_service, reference_server, capsys) -> None:
    import httpx

    with httpx.Client(base_url=live_service) as http:
        make_target(http, "a", "plugrl-server", reference_server(), options=QUICK_PLUGRL)
        make_target(http, "b", "plugrl-server", reference_server(), options=QUICK_PLUGRL)
        make_target(http, "wide", "plugrl-server", reference_server(action_dim=4), options=QUICK_PLUGRL)
        make_target(http, "gone", "plugrl-server", "ws://127.0.0.1:9", options=QUICK_PLUGRL)

    def ci(*args: str) -> tuple[int, str]:
        code = cli_main(["ci", "--server", live_service, *args])
        return code, capsys.readouterr().out

    code, out = ci("--parity", "a", "b")
    assert code == 0, out
    assert out.splitlines()[0].startswith(f"{live_service}/parity/")
    code, out = ci("--parity", "a", "wide")
    assert code == 1 and "first divergence" in out, out
    code, out = ci("--parity", "a", "gone")
    assert code == 2, out
    run_id = int(ci("--parity", "a", "b")[1].splitlines()[0].rsplit("/", 1)[1])
    httpx.post(f"{live_service}/api/v1/goldens", json={"name": "g", "run_id": run_id})
    code, out = ci("--parity", "b", "--golden", "g")
    assert code == 0, out
    code, out = ci("--parity", "a", "b", "--golden", "g")
    assert code == 2 and out == ""


def test_the_pages_of_a_parity_run(client, plugrl_target) -> None:
    plugrl_target("wide", action_dim=4)
    plugrl_target("narrow", action_dim=3)
    run = run_parity(client, first="wide", second="narrow")
    assert client.get(f"/runs/{run['id']}", follow_redirects=False).headers["location"] == f"/parity/{run['id']}"
    page = client.get(f"/parity/{run['id']}")
    assert page.status_code == 200 and 'id="first-divergence"' in page.text and "pv-tree" in page.text
    assert run["first_divergence"]["path"] in page.text
    form = client.get("/parity/new")
    assert form.status_code == 200 and 'value="target:narrow"' in form.text
    started = client.post("/parity", data={"first": "wide", "second": "target:narrow"}, follow_redirects=False)
    assert started.status_code == 303 and started.headers["location"].startswith("/parity/")
    refused = client.post("/parity", data={"first": "wide", "second": ""})
    assert refused.status_code == 422 and "second" in refused.text
    saved = client.post(f"/parity/{run['id']}/golden", data={"side": "1", "name": "narrow-build"})
    assert saved.status_code == 200 and "narrow-build" in saved.text  # followed to the list of goldens
    uploaded = client.post(
        "/goldens",
        data={"name": "copy"},
        files={"file": ("g.json", client.get("/api/v1/goldens/narrow-build/golden.json").content)},
    )
    assert uploaded.status_code == 200 and "copy" in uploaded.text


async def _keyed_endpoint(key: str):
    from checks.openai.reference import start_reference_server

    return await start_reference_server(api_key=key)


def test_each_side_sends_its_own_targets_credentials(client: TestClient) -> None:
    """Two endpoints that each accept only their own key: the first target's key never reaches the second."""
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = [asyncio.run_coroutine_threadsafe(_keyed_endpoint(key), loop).result(10) for key in ("key-a", "key-b")]
    try:
        for name, key, server in (("left", "key-a", servers[0]), ("right", "key-b", servers[1])):
            make_target(client, name, "openai-chat", server.url, options={"api_key": key, "timeout": 5})
        run = run_parity(client, first="left", second="right", options={"requests": 2})
        assert run["parity_status"] == "identical", run
    finally:
        for server in servers:
            asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_a_parity_run_stays_out_of_its_first_targets_history_and_baselines(client, plugrl_target) -> None:
    plugrl_target("a")
    plugrl_target("b")
    own = client.post("/api/v1/targets/a/runs", json={}).json()
    wait_for_run(client, own["id"], timeout=60)
    parity = run_parity(client, first="a", second="b")
    history = client.get("/api/v1/targets/a/history").json()
    assert [run["id"] for run in history["runs"]] == [own["id"]], history["runs"]
    later = client.post("/api/v1/targets/a/runs", json={}).json()
    wait_for_run(client, later["id"], timeout=60)
    diff = client.get(f"/api/v1/runs/{later['id']}/diff?against=previous").json()
    assert diff["base"]["id"] == own["id"] != parity["id"], diff["base"]


def test_the_runs_list_shows_parity_runs_as_comparisons_and_filters_them_apart(client, plugrl_target) -> None:
    plugrl_target("wide", action_dim=4)
    plugrl_target("narrow", action_dim=3)
    own = client.post("/api/v1/targets/wide/runs", json={}).json()
    wait_for_run(client, own["id"], timeout=60)
    parity = run_parity(client, first="wide", second="narrow")
    assert parity["parity_status"] == "divergent"
    listed = client.get("/runs").text
    row = listed[listed.index(f'href="/parity/{parity["id"]}"') :].split("</tr>")[0]
    assert "parity" in row and "vs</span> narrow" in row and "divergent" in row and "o-fail" not in row
    failing = client.get("/runs?outcome=fail").text
    assert f'href="/parity/{parity["id"]}"' not in failing  # a divergence is not a conformance failure
    conformance = client.get("/runs?type=conformance").text
    assert f'href="/runs/{own["id"]}"' in conformance and f'href="/parity/{parity["id"]}"' not in conformance
    only_parity = client.get("/runs?type=parity").text
    assert f'href="/parity/{parity["id"]}"' in only_parity and f'href="/runs/{own["id"]}"' not in only_parity
    divergent = client.get("/runs?comparison=divergent").text
    assert f'href="/parity/{parity["id"]}"' in divergent and f'href="/runs/{own["id"]}"' not in divergent
    assert f'href="/parity/{parity["id"]}"' not in client.get("/runs?comparison=identical").text


def test_the_api_run_list_types_parity_runs_and_filters_them_apart(client, plugrl_target) -> None:
    plugrl_target("wide", action_dim=4)
    plugrl_target("narrow", action_dim=3)
    own = wait_for_run(client, client.post("/api/v1/targets/wide/runs", json={}).json()["id"], timeout=60)
    parity = run_parity(client, first="wide", second="narrow")
    assert (parity["outcome"], parity["parity_status"]) == ("fail", "divergent")

    def listed(**params: str) -> list[int]:
        response = client.get("/api/v1/runs", params={"target": "wide", **params})
        assert response.status_code == 200, response.text
        return [run["id"] for run in response.json()]

    both = {run["id"]: run for run in client.get("/api/v1/runs", params={"target": "wide"}).json()}
    assert both[own["id"]]["type"] == "conformance" and both[own["id"]]["parity"] is None
    assert both[parity["id"]]["type"] == "parity"
    assert both[parity["id"]]["parity"] == {
        "second": "narrow",
        "comparison": "divergent",
        "divergence_count": parity["divergence_count"],
    }
    assert client.get(f"/api/v1/runs/{parity['id']}").json()["parity"]["comparison"] == "divergent"
    assert listed(type="conformance") == [own["id"]]
    assert listed(type="parity") == [parity["id"]]
    assert listed(outcome="fail") == []  # a divergence is not a conformance failure
    assert listed(outcome=own["outcome"]) == [own["id"]]
    assert listed(comparison="divergent") == [parity["id"]]
    assert listed(comparison="identical") == []
    contradictory = client.get("/api/v1/runs", params={"type": "parity", "outcome": "fail"})
    assert contradictory.status_code == 422 and "outcome" in contradictory.text
    assert client.get("/api/v1/runs", params={"type": "golden"}).status_code == 422
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert {"type", "parity"} <= set(schema["RunOut"]["properties"]) and "ParityComparison" in schema


def test_ci_parity_prints_the_outcome_and_writes_a_junit_case_per_path_group(
    live_service, reference_server, capsys, tmp_path
) -> None:
    import xml.etree.ElementTree as ET

    import httpx

    with httpx.Client(base_url=live_service) as http:
        make_target(http, "a", "plugrl-server", reference_server(), options=QUICK_PLUGRL)
        make_target(http, "wide", "plugrl-server", reference_server(action_dim=4), options=QUICK_PLUGRL)
        make_target(http, "gone", "plugrl-server", "ws://127.0.0.1:9", options=QUICK_PLUGRL)
    junit = tmp_path / "parity.xml"
    code = cli_main(["ci", "--server", live_service, "--parity", "a", "wide", "--junit", str(junit)])
    captured = capsys.readouterr()
    assert code == 1
    assert "0/0 clauses" not in captured.err
    assert "divergent:" in captured.out and "first divergence:" in captured.out
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    failing = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failing and "every other compared path" in cases
    assert suite.get("failures") == str(len(failing)) and suite.get("tests") == str(len(cases))
    first_path = captured.out.split("first divergence: ", 1)[1].split(" ", 1)[0]
    assert any(first_path.startswith(group) for group in failing)

    code = cli_main(["ci", "--server", live_service, "--parity", "a", "a", "--junit", str(junit)])
    assert code == 0 and "identical:" in capsys.readouterr().out
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    assert [case.get("name") for case in cases] == ["every compared path"] and cases[0].find("failure") is None

    code = cli_main(["ci", "--server", live_service, "--parity", "a", "gone", "--junit", str(junit)])
    assert code == 2 and "undecided:" in capsys.readouterr().out
    assert ET.parse(junit).getroot().find("testsuite").find("testcase/error") is not None
