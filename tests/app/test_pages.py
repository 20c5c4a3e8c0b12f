"""The server-rendered pages: rendering, escaping, filters, forms, buttons and write protection."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from pydantic import SecretStr
from sqlmodel import Session, select

from app.main import create_app
from app.models import ClauseResultRow, Target, TranscriptRow
from app.models_clause import message_id
from app.settings import Settings
from app.spec_page import render_spec
from app.web.invocation import rlconform_command
from checks.spec import load_spec
from tests.app.constructed import add_run, add_target, client_session, settings_on_each_backend  # noqa: F401 -- fixtures
from tests.app.helpers import make_target, wait_for_run

HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def field_block(html: str, input_id: str) -> str:
    """The `<div class="field ...">` block that holds the input with this id."""
    for block in html.split('<div class="field')[1:]:
        if f'id="{input_id}"' in block:
            return block.split('<div class="field')[0]
    raise AssertionError(f"no field with input #{input_id}")


def run_page_rows(html: str) -> list[tuple[str, str]]:
    """(verdict word, clause id) of each matrix row, in order."""
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S):
        verdict = re.search(r'<span class="v-word">(\w+)</span>', row)
        clause = re.search(r'class="clause-id"[^>]*>([^<]+)</a>', row)
        if verdict and clause:
            rows.append((verdict.group(1), clause.group(1)))
    return rows


# ---------------------------------------------------------------- rendering and escaping


def test_overview_lists_targets_with_sparkline_and_run_button(client: TestClient, session: Session) -> None:
    assert "No targets yet" in client.get("/").text
    target = add_target(session, "alpha")
    add_run(session, target, {("p", "c.1"): "pass"})
    add_run(session, target, {("p", "c.1"): "fail"})
    html = client.get("/").text
    assert 'href="/targets/alpha"' in html
    assert 'action="/targets/alpha/run"' in html
    assert html.count("<rect") == 2 and "run #2: fail" in html


def test_hostile_target_strings_are_escaped_everywhere(client: TestClient, session: Session) -> None:
    target = add_target(session, "evil", description=HOSTILE)
    run = add_run(session, target, {("hello", "fake.1.greets"): "fail", ("hello", "fake.1.names-itself"): "info"})
    run.message = HOSTILE
    session.add(run)
    for result in session.exec(select(ClauseResultRow).where(ClauseResultRow.run_id == run.id)):
        result.message_id = message_id(session, result.expected, HOSTILE)
        result.transcript_ids = [1]
        session.add(result)
    frames = [{"direction": "received", "t": 0.01, "size": 30, "kind": "text", "summary": HOSTILE}]
    session.add(
        TranscriptRow(
            run_id=run.id,
            number=1,
            phase="hello",
            label=HOSTILE,
            frames=frames,
            close_code=4000,
            close_reason=HOSTILE,
            closed_by="target",
        )
    )
    session.commit()
    pages = [
        "/",
        "/targets/evil",
        f"/runs/{run.id}",
        f"/runs/{run.id}/matrix",
        f"/runs/{run.id}/clauses/hello/fake.1.greets",
    ]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        assert HOSTILE not in response.text, page
    evidence = client.get(f"/runs/{run.id}/clauses/hello/fake.1.greets").text
    assert evidence.count(ESCAPED) >= 4  # actual, label, frame summary, close reason
    assert "closed by <strong>target</strong>" in evidence and "4000" in evidence


def test_run_page_filters_by_verdict_and_phase_in_the_url(client: TestClient, session: Session) -> None:
    target = add_target(session)
    run = add_run(
        session,
        target,
        {("one", "c.pass"): "pass", ("one", "c.fail"): "fail", ("two", "c.warn"): "warn", ("two", "c.fail2"): "fail"},
    )
    all_rows = run_page_rows(client.get(f"/runs/{run.id}").text)
    assert ("fail", "c.fail") in all_rows and ("pass", "c.pass") in all_rows and len(all_rows) == 4

    failing = client.get(f"/runs/{run.id}?verdict=fail").text
    assert run_page_rows(failing) == [("fail", "c.fail"), ("fail", "c.fail2")]
    assert 'name="verdict" value="fail" checked' in failing  # the filter state comes back from the URL

    phase_two = client.get(f"/runs/{run.id}?phase=two&verdict=fail&verdict=warn").text
    assert run_page_rows(phase_two) == [("warn", "c.warn"), ("fail", "c.fail2")]
    assert '<option value="two" selected>' in phase_two

    fragment = client.get(f"/runs/{run.id}/matrix?verdict=pass").text
    assert run_page_rows(fragment) == [("pass", "c.pass")]
    assert 'data-live="0"' in fragment and "<html" not in fragment


def test_run_page_links_cells_to_evidence_and_legend(client: TestClient, session: Session) -> None:
    target = add_target(session)
    first = add_run(session, target, {("one", "c.a"): "pass"})
    run = add_run(session, target, {("one", "c.a"): "fail"})
    html = client.get(f"/runs/{run.id}").text
    assert f'href="/runs/{run.id}/clauses/one/c.a"' in html
    assert 'href="/spec#c.a"' in html
    assert 'class="legend"' in html and "a MUST is broken" in html
    assert f"/runs/{run.id}/diff?against={first.id}" in html
    assert f"/runs/{run.id}/diff?against=baseline" in html
    assert f"/api/v1/runs/{run.id}/junit.xml" in html and f"/api/v1/runs/{run.id}/export.json" in html


def test_evidence_page_quotes_the_spec_and_offers_raw_json(client: TestClient, session: Session) -> None:
    spec = load_spec()
    clause_id = next(iter(spec))
    target = add_target(session, kind="plugrl-server")
    run = add_run(session, target, {("handshake", clause_id): "fail"})
    html = client.get(f"/runs/{run.id}/clauses/handshake/{clause_id}").text
    assert str(escape(spec[clause_id].statement)) in html
    assert f'href="/spec#{clause_id}"' in html
    raw = client.get(f"/runs/{run.id}/clauses/handshake/{clause_id}/raw")
    assert raw.headers["content-disposition"].startswith("attachment")
    assert raw.json()["result"]["verdict"] == "fail"
    assert raw.json()["clause"]["statement"] == spec[clause_id].statement
    assert client.get(f"/runs/{run.id}/clauses/handshake/no.such.clause").status_code == 404


def test_spec_page_anchors_every_clause(client: TestClient, tmp_path: Path) -> None:
    html = client.get("/spec").text
    for clause_id in load_spec():
        assert f'<li id="{clause_id}"' in html
    spec = tmp_path / "SPEC.md"
    spec.write_text("# T\n\n<!-- gone -->\n\n### 5.3 Actions\n\n- **MUST** `x.5.3.time-major`: Time <b>major</b>.\n")
    rendered, ids = render_spec(spec)
    assert ids == ("x.5.3.time-major",)
    assert '<li id="x.5.3.time-major" class="clause clause-must">' in rendered
    assert '<a class="anchor" href="#x.5.3.time-major">' in rendered
    assert "&lt;b&gt;major&lt;/b&gt;" in rendered and "gone" not in rendered


# ---------------------------------------------------------------- forms


def test_new_target_form_is_generated_from_the_options_schema(client: TestClient, fake_kind: str) -> None:
    html = client.get("/targets/new?kind=fake").text
    assert 'name="opt.timeout" type="number" step="any" min="0"' in html
    assert 'name="opt.token" type="password"' in html
    assert '<textarea id="opt-fail" name="opt.fail"' in html
    assert "Seconds before each clause is decided." in html
    assert 'value="fake.2.echoes"' in html  # expected failures offer the kind's clauses


def test_bad_input_comes_back_with_messages_beside_fields(client: TestClient, fake_kind: str) -> None:
    response = client.post(
        "/targets/new",
        data={
            "name": "bad name!",
            "kind": "fake",
            "url": "http://x",
            "opt.delay": "soon",
            "opt.timeout": "-1",
            "description": HOSTILE,
        },
    )
    assert response.status_code == 422
    html = response.text
    assert "use 1-64 letters" in field_block(html, "name")
    assert "fake targets use ws://" in field_block(html, "url")
    assert "valid number" in field_block(html, "opt-delay")
    assert "greater than 0" in field_block(html, "opt-timeout")
    assert "field-error" not in field_block(html, "gate")
    assert 'value="soon"' in html and 'value="bad name!"' in html  # what was typed comes back
    assert HOSTILE not in html and ESCAPED in html

    # A field the target model itself rejects still gets the URL and options checked alongside.
    response = client.post(
        "/targets/new", data={"name": "ok", "kind": "fake", "url": "http://x", "schedule_minutes": "0"}
    )
    assert response.status_code == 422
    assert "greater than or equal to 1" in field_block(response.text, "schedule_minutes")
    assert "fake targets use ws://" in field_block(response.text, "url")
    assert client.get("/api/v1/targets").json() == []


def test_target_lifecycle_through_the_forms(client: TestClient, session: Session, fake_kind: str) -> None:
    created = client.post(
        "/targets/new",
        data={
            "name": "web",
            "kind": "fake",
            "url": "ws://127.0.0.1:9",
            "opt.delay": "0",
            "opt.token": "s3cret",
            "opt.fail": "fake.2.echoes",
            "expected_failures": "fake.2.fast",
            "gate": "strict",
            "schedule_minutes": "",
        },
        follow_redirects=False,
    )
    assert created.status_code == 303 and created.headers["location"] == "/targets/web"
    target = session.exec(select(Target).where(Target.name == "web")).one()
    assert target.options == {"token": "s3cret", "fail": ["fake.2.echoes"]}  # a default (delay 0) is not stored
    assert target.expected_failures == ["fake.2.fast"] and target.gate == "strict"

    edit = client.get("/targets/web/edit").text
    assert "s3cret" not in edit and "unchanged" in edit
    updated = client.post(
        "/targets/web/edit",
        data={"kind": "fake", "url": "ws://127.0.0.1:10", "opt.token": "", "gate": "default", "schedule_minutes": "5"},
        follow_redirects=False,
    )
    assert updated.status_code == 303
    session.refresh(target)
    assert target.url == "ws://127.0.0.1:10" and target.schedule_minutes == 5
    assert target.options == {"token": "s3cret"} and target.expected_failures == []

    refused = client.post("/targets/web/delete", data={})
    assert refused.status_code == 400 and "tick the box" in field_block(refused.text, "confirm-box")
    deleted = client.post("/targets/web/delete", data={"confirm": "yes"}, follow_redirects=False)
    assert deleted.status_code == 303
    assert client.get("/targets/web").status_code == 404


def test_switching_kind_rerenders_without_saving(client: TestClient, fake_kind: str) -> None:
    response = client.post(
        "/targets/new", data={"name": "x", "kind": "fake", "url": "ws://h:1", "action": "switch-kind"}
    )
    assert response.status_code == 200 and "Options for fake" in response.text
    assert 'value="x"' in response.text and "field-error" not in response.text
    assert client.get("/api/v1/targets").json() == []


def test_run_button_starts_a_run_that_shows_results(client: TestClient, fake_kind: str) -> None:
    make_target(client, "runner", "fake", "ws://127.0.0.1:9", options={"fail": ["fake.2.orders"]})
    response = client.post("/targets/runner/run", follow_redirects=False)
    assert response.status_code == 303
    run_id = int(response.headers["location"].rsplit("/", 1)[1])
    assert wait_for_run(client, run_id)["outcome"] == "fail"
    rows = run_page_rows(client.get(f"/runs/{run_id}").text)
    assert ("fail", "fake.2.orders") in rows and ("pass", "fake.1.greets") in rows
    evidence = client.get(f"/runs/{run_id}/clauses/echo/fake.2.orders").text
    assert "reply for fake.2.orders" in evidence and "a bad reply" in evidence


def test_cancel_button_stops_a_live_run(client: TestClient, fake_kind: str) -> None:
    make_target(client, "slow", "fake", "ws://127.0.0.1:9", options={"delay": 5})
    run_id = int(client.post("/targets/slow/run", follow_redirects=False).headers["location"].rsplit("/", 1)[1])
    wait_for_run(client, run_id, statuses={"running"})
    page = client.get(f"/runs/{run_id}").text
    assert f'action="/runs/{run_id}/cancel"' in page and 'http-equiv="refresh"' in page
    assert client.post(f"/runs/{run_id}/cancel", follow_redirects=False).status_code == 303
    assert wait_for_run(client, run_id)["status"] == "cancelled"


def test_cross_site_form_posts_are_refused(client: TestClient, fake_kind: str) -> None:
    make_target(client, "victim", "fake", "ws://127.0.0.1:9")
    response = client.post("/targets/victim/delete", data={"confirm": "yes"}, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert client.get("/targets/victim").status_code == 200


def test_browser_writes_need_the_token_when_one_is_set(settings: Settings, fake_kind: str) -> None:
    settings = settings.model_copy(update={"api_token": SecretStr("letmein-letmein-16")})
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": "Bearer letmein-letmein-16"}
        assert (
            client.post(
                "/api/v1/targets", json={"name": "t", "kind": "fake", "url": "ws://h:1"}, headers=headers
            ).status_code
            == 201
        )
        blocked = client.post(
            "/targets/t/run", follow_redirects=False, headers={"Referer": "http://testserver/targets/t"}
        )
        assert blocked.status_code == 303 and blocked.headers["location"] == "/login?next=/targets/t"
        assert client.post("/login", data={"token": "wrong", "next": "/"}).status_code == 400
        login = client.post(
            "/login", data={"token": "letmein-letmein-16", "next": "//evil.example"}, follow_redirects=False
        )
        assert login.headers["location"] == "/"
        assert client.post("/targets/t/run", follow_redirects=False).headers["location"].startswith("/runs/")


# ---------------------------------------------------------------- runs page, cross-target matrix, commands


def test_runs_page_lists_every_run_newest_first_with_active_ones_on_top(client: TestClient, session: Session) -> None:
    alpha, beta = add_target(session, "alpha"), add_target(session, "beta")
    old = add_run(session, alpha, {("p", "c.1"): "pass"})
    failed = add_run(session, beta, {("p", "c.1"): "fail"})
    queued = add_run(session, alpha, {}, status="queued", outcome="")
    html = client.get("/runs").text
    active, ended = html.split("Queued and running", 1)[1].split("Ended runs", 1)
    assert f'href="/runs/{queued.id}"' in active and f'action="/runs/{queued.id}/cancel"' in active
    assert ended.index(f'href="/runs/{failed.id}"') < ended.index(f'href="/runs/{old.id}"')
    only_beta = client.get("/runs", params={"target": "beta"}).text
    assert f'href="/runs/{failed.id}"' in only_beta and f'href="/runs/{old.id}"' not in only_beta
    failing = client.get("/runs", params={"outcome": "fail"}).text
    assert f'href="/runs/{failed.id}"' in failing and "Queued and running" not in failing


def test_runs_page_pages_back(client: TestClient, session: Session, monkeypatch) -> None:
    from app.web import runs_page

    monkeypatch.setattr(runs_page, "PAGE_SIZE", 2)
    target = add_target(session)
    runs = [add_run(session, target, {("p", "c.1"): "pass"}) for _ in range(3)]
    first = client.get("/runs").text
    assert f'href="/runs/{runs[0].id}"' not in first and f"before={runs[1].id}" in first
    older = client.get("/runs", params={"before": runs[1].id}).text
    assert f'href="/runs/{runs[0].id}"' in older and "older runs →" not in older


def test_cross_target_matrix_shows_each_targets_latest_finished_run(client: TestClient, session: Session) -> None:
    alpha, beta = add_target(session, "alpha"), add_target(session, "beta")
    add_run(session, alpha, {("p", "c.1"): "fail"})
    latest = add_run(session, alpha, {("p", "c.1"): "pass", ("q", "c.2"): "warn"})
    other = add_run(session, beta, {("p", "c.1"): "fail"})
    add_run(session, beta, {}, status="running", outcome="")
    assert 'href="/matrix/constructed"' in client.get("/matrix").text
    html = client.get("/matrix/constructed").text
    assert f'href="/runs/{latest.id}/clauses/p/c.1"' in html and f'href="/runs/{latest.id}/clauses/q/c.2"' in html
    assert f'href="/runs/{other.id}/clauses/p/c.1"' in html
    assert client.get("/matrix/no-such-kind").status_code == 404


def test_target_page_offers_the_commands_that_start_a_run(client: TestClient, session: Session) -> None:
    add_target(session, "my target")
    html = client.get("/targets/my%20target").text
    assert f"{rlconform_command()} ci --server http://testserver --target &#39;my target&#39;" in html
    assert "http://testserver/api/v1/targets/my%20target/runs" in html and "$RLCONFORM_API_TOKEN" in html


def test_evidence_of_a_passing_clause_shows_what_was_observed(client: TestClient, session: Session) -> None:
    target = add_target(session)
    run = add_run(session, target, {("p", "c.1"): "pass"})
    row = session.exec(select(ClauseResultRow).where(ClauseResultRow.run_id == run.id)).one()
    frames = [{"t": 0.0, "direction": "received", "kind": "binary", "size": 9, "summary": "{'action': ndarray}"}]
    session.add(TranscriptRow(run_id=run.id, phase="p", number=1, label="conn", frames=frames))
    row.transcript_ids, row.message_id = [1], message_id(session, "", "")
    session.add(row)
    session.commit()
    html = client.get(f"/runs/{run.id}/clauses/p/c.1").text
    assert "Observed" in html and "last frame from the target: {&#39;action&#39;: ndarray}" in html
    assert "Expected vs actual" not in html and "<pre>—</pre>" not in html


def test_runs_page_reads_the_empty_values_of_its_filter_form(client: TestClient, session: Session) -> None:
    run = add_run(session, add_target(session), {("p", "c.1"): "pass"})
    response = client.get("/runs", params={"target": "", "kind": "", "status": "", "outcome": "", "trigger": ""})
    assert response.status_code == 200 and f'href="/runs/{run.id}"' in response.text


def test_copyable_commands_name_rlconform_the_way_this_installation_runs_it(monkeypatch, tmp_path: Path) -> None:
    """After the quick start (`.venv` under the working directory, not activated): `.venv/bin/rlconform`."""
    import sys

    venv_bin = Path(sys.executable).parent
    if not (venv_bin / "rlconform").exists():
        pytest.skip("the rlconform script is not installed beside this python")
    monkeypatch.setenv("PATH", str(tmp_path))  # not on PATH, as before `source .venv/bin/activate`
    monkeypatch.chdir(venv_bin.parents[1])
    rlconform_command.cache_clear()
    try:
        assert rlconform_command() == f"{venv_bin.parent.name}/bin/rlconform"
        monkeypatch.chdir(tmp_path)  # elsewhere: the script's full path
        rlconform_command.cache_clear()
        assert rlconform_command() == str(venv_bin / "rlconform")
        monkeypatch.setenv("PATH", str(venv_bin))  # activated: the bare name
        rlconform_command.cache_clear()
        assert rlconform_command() == "rlconform"
    finally:
        rlconform_command.cache_clear()


def test_a_name_too_long_is_refused_beside_the_field_never_cut(client: TestClient) -> None:
    form = client.get("/targets/new").text
    name_input = re.search(r'<input id="name"[^>]*>', form).group(0)
    assert "maxlength" not in name_input  # a browser cuts a pasted value at maxlength without a word
    assert "Up to 64 characters" in form
    pasted = "n" * 5000
    refused = client.post("/targets/new", data={"name": pasted, "kind": "openenv", "url": "http://127.0.0.1:9"})
    assert refused.status_code == 422
    error = re.search(r'id="err-name"[^>]*>(.*?)</', refused.text, re.S)
    assert error is not None and "at most 64 characters; this one has 5000" in error.group(1)


def test_the_api_422_echoes_a_capped_value(client: TestClient) -> None:
    body = {"name": "n" * 5000, "kind": "openenv", "url": "http://127.0.0.1:9"}
    refused = client.post("/api/v1/targets", json=body)
    assert refused.status_code == 422 and len(refused.text) < 1000
    (error,) = [e for e in refused.json()["detail"] if e["loc"] == ["body", "name"]]
    assert error["input"].startswith("n" * 200) and "5000 characters in all" in error["input"]


def test_a_run_cancelled_while_queued_says_it_never_ran(client: TestClient, session: Session) -> None:
    target = add_target(session, "queued-then-cancelled", kind="openenv")
    run = add_run(session, target, {}, status="cancelled", outcome="")
    html = client.get(f"/runs/{run.id}").text
    assert "Cancelled before it ran: no clause was checked." in html
    assert re.search(r'class="progress-bar" style="width: 0(\.0)?%"', html)  # an empty bar, not a full one
    assert "pending" not in html and "waiting…" not in html and "not decided" not in html
    assert "clause-row" not in html


def test_a_run_cancelled_midway_shows_its_progress_and_undecided_clauses(client: TestClient, session: Session) -> None:
    target = add_target(session, "cancelled-midway", kind="openenv")
    run = add_run(session, target, {("discover", "openenv.discover.health"): "pass"}, status="cancelled", outcome="")
    run.started_at, run.total_clauses = run.created_at, 40
    session.add(run)
    session.commit()
    html = client.get(f"/runs/{run.id}").text
    assert "before it ran" not in html and 'style="width: 100%"' not in html
    assert "not decided" in html and "openenv.discover.health" in html


def test_the_trend_chart_reads_right_when_empty_and_when_small() -> None:
    from app.models import TrendPoint
    from app.svg import trend_chart

    empty = str(trend_chart([]))
    assert "no runs yet" in empty and re.findall(r'class="axis">(\d+)<', empty) == []
    one = str(trend_chart([TrendPoint(run_id=1, passed=1, failing=0)]))
    assert sorted(re.findall(r'class="axis">(\d+)<', one)) == ["0", "1"]
    ten = str(trend_chart([TrendPoint(run_id=1, passed=10, failing=2)]))
    assert re.findall(r'class="axis">(\d+)<', ten) == ["0", "5", "10"]


def test_option_forms_show_no_empty_default(client: TestClient) -> None:
    """An option whose default renders as nothing (an empty list or text) says no "Default: ." at all."""
    import re

    for kind in ("plugrl-server", "openenv", "openai-chat", "ors"):
        html = client.get(f"/targets/new?kind={kind}").text
        assert "Default: <code>" in html, kind  # the page does show defaults
        assert not re.search(r"Default: <code>\s*</code>", html), kind
