"""A page that cannot be shown says so as a page, with the navigation and what is missing; /api/ stays JSON."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from tests.app.constructed import add_run, add_target, client_session  # noqa: F401 -- fixtures

MISSING = [
    ("/runs/999999", "There is no run 999999."),
    ("/targets/nope", "There is no target named &#39;nope&#39;."),
    ("/parity/9999", "9999"),
    ("/matrix/nokind", "There is no target kind &#39;nokind&#39;."),
    ("/runs/999999/clauses/hello/fake.1.greets", "999999"),
]


@pytest.mark.parametrize(("path", "sentence"), MISSING)
def test_a_missing_thing_is_a_page_with_the_navigation(client: TestClient, path: str, sentence: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert sentence in response.text
    assert 'href="/runs"' in response.text and "<nav" in response.text  # the navigation, to go on from here
    assert "<h1>Not Found</h1>" in response.text


def test_a_missing_clause_of_an_existing_run_names_the_clause(client: TestClient, session: Session) -> None:
    run = add_run(session, add_target(session, "alpha"), {("hello", "fake.1.greets"): "pass"})
    response = client.get(f"/runs/{run.id}/clauses/hello/fake.9.nothing")
    assert response.status_code == 404 and "text/html" in response.headers["content-type"]
    assert "fake.9.nothing" in response.text and "<nav" in response.text


@pytest.mark.parametrize("path", ["/api/v1/runs/999999", "/api/v1/targets/nope"])
def test_the_api_keeps_answering_json(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and response.headers["content-type"] == "application/json"
    assert "detail" in response.json()
