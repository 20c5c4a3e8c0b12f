"""Can I deploy with real peers. The identities the ORS servers show: openreward's GET /version, nothing on
ors-sdk. And a real peer pair: one OpenEnv env (tests/realpeers/openenv, its own reset observation class)
served by openenv 0.10.0 and by openenv-core 0.3.0, checked as one target at each.

What the wire shows is read into each run: `/metadata` names the env and its own version, the same "1.0.0"
under both packages, since the package's version is not on the wire. So the versions CI gives tell them
apart: 0.10.0 answers yes, 0.3.0 no with `openenv.schema.observation-valid` (0.3.0's /schema cannot publish
the reset observation's class, so its reset frames contradict its own schema; docs/real-peers.md, ## OpenEnv).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from checks.identity import identify
from tests.app.helpers import make_target, wait_for_run
from tests.checks.openenv.serving import wait_until_up
from tests.checks.openenv.test_real_peers import PEER_ENVS, VENVS, peer_python, serve

OPTIONS = {"timeout": 5.0, "latency_rounds": 5}
FAULT = "openenv.schema.observation-valid"


def check_at(client: TestClient, url: str, version: str) -> dict[str, Any]:
    """A run of the target `guess` against `url`, its version given as CI would."""
    assert client.patch("/api/v1/targets/guess", json={"url": url}).status_code == 200
    run_id = client.post("/api/v1/targets/guess/runs", json={"phases": ["discover", "session"]}).json()["id"]
    assert client.put(f"/api/v1/runs/{run_id}/version", json={"version": version}).status_code == 200
    wait_for_run(client, run_id, timeout=120)
    return dict(client.get(f"/api/v1/runs/{run_id}/identity").json())


def test_the_same_env_under_openenv_0_10_and_0_3(client: TestClient) -> None:
    pythons = {version: peer_python(version) for version in VENVS}
    if not all(pythons.values()):
        pytest.skip(f"{' and '.join(VENVS.values())} must be set (scripts/test builds both venvs)")
    with (
        serve(str(pythons["0.10.0"]), PEER_ENVS, "peer_envs:mounted_app", True, {}) as new,
        serve(str(pythons["0.3.0"]), PEER_ENVS, "peer_envs:mounted_app", True, {}) as old,
    ):
        for url in (new, old):
            wait_until_up(f"{url}/own-reset/health", 90.0)
        make_target(client, "guess", "openenv", f"{new}/own-reset", options=OPTIONS)
        identities = [check_at(client, f"{new}/own-reset", "0.10.0"), check_at(client, f"{old}/own-reset", "0.3.0")]
    for identity, version in zip(identities, ("0.10.0", "0.3.0"), strict=True):
        assert (identity["version"], identity["source"]) == (version, "given")
        assert identity["implementation"] and "version '1.0.0'" in identity["evidence"], identity
    deployed = client.post("/api/v1/deployments", json={"target": "guess", "version": "0.10.0", "environment": "prod"})
    assert deployed.status_code == 201, deployed.text
    yes = client.get("/api/v1/can-i-deploy", params={"target": "guess", "version": "0.10.0", "to": "prod"}).json()
    assert yes["answer"] == "yes", yes
    no = client.get("/api/v1/can-i-deploy", params={"target": "guess", "version": "0.3.0", "to": "prod"}).json()
    assert (no["answer"], no["rows"][0]["failing"]) == ("no", [FAULT]), no


def test_openreward_names_its_version_and_ors_sdk_shows_none(tmp_path: Path) -> None:
    """openreward answers GET /version with its SDK version; ors-sdk has no such route (docs: research, ORS 9)."""
    from tests.checks.ors.peers import PEER_PYTHON, PEERS, scaffold_template, serving

    if not PEER_PYTHON or not Path(PEER_PYTHON).exists():
        pytest.skip("RLCONFORM_ORS_PYTHON is unset (scripts/test builds the openreward + ors-sdk venv)")
    with serving(str(PEERS / "serve_template.py"), str(scaffold_template(tmp_path))) as url:
        openreward = asyncio.run(identify("ors", url, None, 5.0))
    with serving(str(PEERS / "sdk_env.py")) as url:
        sdk = asyncio.run(identify("ors", url, None, 5.0))
    assert openreward is not None and openreward.implementation == "openreward", openreward
    assert openreward.version == "0.1.167" and openreward.evidence.startswith("GET /version")
    assert sdk is None
