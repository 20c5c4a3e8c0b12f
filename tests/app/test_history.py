"""History grid, transitions, flaky clauses, trend, run diffs and baselines, on constructed runs."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlmodel import Session

from app.history import clause_timeline, diff_runs, last_passing_run, target_history
from app.models import RunStatus
from app.svg import sparkline
from tests.app.constructed import add_run, add_target, client_session, settings_on_each_backend  # noqa: F401 -- fixtures


def test_history_grid_marks_transitions_and_flaky_clauses(client: TestClient, session: Session) -> None:
    target = add_target(session)
    flaky = ["pass", "fail", "pass", "pass"]
    broke_once = ["pass", "pass", "fail", "fail"]
    harness_down = ["pass", "error", "pass", "error"]
    for index in range(4):
        add_run(
            session,
            target,
            {
                ("a", "c.flaky"): flaky[index],
                ("a", "c.broke"): broke_once[index],
                ("a", "c.down"): harness_down[index],
                # worst across phases: the pass in phase b never hides the warn in phase a
                ("a", "c.multi"): "warn" if index == 3 else "pass",
                ("b", "c.multi"): "pass",
            },
        )
    history = target_history(session, target)
    rows = {clause.clause_id: clause for clause in history.clauses}
    assert history.flaky == ["c.flaky"]
    assert [cell.transition for cell in rows["c.flaky"].cells] == [False, True, True, False]
    assert [cell.transition for cell in rows["c.broke"].cells] == [False, False, True, False]
    assert not rows["c.broke"].flaky and not rows["c.down"].flaky
    assert [c.verdict for c in rows["c.multi"].cells] == ["pass", "pass", "pass", "warn"]
    assert rows["c.multi"].cells[3].phase == "a"
    assert [p.passed for p in history.trend] == [4, 2, 3, 1]
    timeline = clause_timeline(session, target.id, "c.multi", limit=3)
    assert [(c["verdict"], c["phase"]) for c in timeline] == [("pass", "b"), ("pass", "b"), ("warn", "a")]

    evidence = client.get(f"/runs/{history.runs[3].id}/clauses/a/c.multi").text
    assert evidence.count('<li class="current">') == 1 and evidence.count("v-compact") == 4  # one entry per run

    html = client.get(f"/targets/{target.name}").text
    assert html.count('class="cell transition"') == 2 + 1 + 3 + 1  # an error is a transition, not a flip
    assert html.count('</a><span class="sr-only"> (changed)</span></td>') == 7 and "&lt;span" not in html
    assert 'class="is-flaky"' in html and "1 flaky" in html
    assert f'href="/runs/{history.runs[3].id}/clauses/a/c.multi"' in html
    assert '<svg class="trend"' in html


def test_history_uses_one_aggregated_query_whatever_the_window(client: TestClient, session: Session) -> None:
    target = add_target(session)
    for index in range(12):
        add_run(session, target, {("a", f"c.{n}"): "pass" if (index + n) % 3 else "fail" for n in range(8)})
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    engine = client.app.state.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        history = target_history(session, target, limit=10)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(history.runs) == 10 and len(history.clauses) == 8
    assert len([s for s in statements if "clause_result" in s]) == 1


def test_diff_sorts_clauses_into_categories(client: TestClient, session: Session) -> None:
    target = add_target(session)
    base = add_run(
        session,
        target,
        {
            ("a", "c.regress"): "pass",
            ("a", "c.fixed"): "fail",
            ("a", "c.same"): "pass",
            ("a", "c.worse"): "fail",
            ("a", "c.gone"): "pass",
        },
        harness="0.1.0",
    )
    head = add_run(
        session,
        target,
        {
            ("a", "c.regress"): "fail",
            ("a", "c.fixed"): "pass",
            ("a", "c.same"): "pass",
            ("a", "c.worse"): "error",
            ("b", "c.new"): "warn",
        },
        harness="0.2.0",
    )
    diff = diff_runs(session, base, head)
    assert [e.clause_id for e in diff.newly_failing] == ["c.regress"]
    assert [e.clause_id for e in diff.newly_passing] == ["c.fixed"]
    assert [(e.clause_id, e.base, e.head) for e in diff.changed] == [("c.worse", "fail", "error")]
    assert [e.clause_id for e in diff.added] == ["c.new"] and diff.added[0].head_phase == "b"
    assert [e.clause_id for e in diff.removed] == ["c.gone"]
    assert diff.counts.unchanged == 1
    assert (diff.base.harness_version, diff.head.harness_version) == ("0.1.0", "0.2.0")

    html = client.get(f"/runs/{head.id}/diff?against={base.id}").text
    assert "configuration changed between these runs: harness 0.1.0 → 0.2.0" in html
    newly_failing = html.split('id="newly_failing"')[1].split("</section>")[0]
    assert "c.regress" in newly_failing and "c.fixed" not in newly_failing


def test_diff_against_baseline_uses_the_last_passing_run(client: TestClient, session: Session) -> None:
    target = add_target(session)
    green = add_run(session, target, {("a", "c.1"): "pass"})
    add_run(session, target, {("a", "c.1"): "pass"}, status=RunStatus.CANCELLED, outcome="")
    red = add_run(session, target, {("a", "c.1"): "fail"})
    assert last_passing_run(session, target, before=red).id == green.id
    assert last_passing_run(session, target, before=green) is None
    html = client.get(f"/runs/{red.id}/diff?against=baseline").text
    assert f'Diff <a href="/runs/{green.id}">#{green.id}</a>' in html
    assert client.get(f"/runs/{green.id}/diff?against=baseline").status_code == 404
    assert client.get(f"/runs/{green.id}/diff?against=previous").status_code == 404


def test_sparkline_reads_without_colour() -> None:
    svg = sparkline(
        [{"id": 1, "status": "finished", "outcome": "pass"}, {"id": 2, "status": "finished", "outcome": "fail"}],
        width=120,
        height=24,
    )
    bars = re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"', svg)
    (pass_y, pass_h), (fail_y, _) = bars
    assert float(pass_y) + float(pass_h) == pytest.approx(12)  # the pass bar ends at the baseline, above it
    assert float(fail_y) == pytest.approx(12)  # the fail bar starts at the baseline, below it


def test_a_verdict_change_with_a_configuration_change_is_marked_and_not_flaky(
    client: TestClient, session: Session
) -> None:
    target = add_target(session)
    # pass, fail (the URL was edited), pass: without the configuration mark this would be a flake
    for index, verdict in enumerate(["pass", "fail", "pass"]):
        run = add_run(session, target, {("a", "c.moves"): verdict})
        run.url = "ws://127.0.0.1:10" if index >= 1 else target.url
        run.options = {"timeout": 5.0 if index == 2 else 10.0}
        session.add(run)
        session.commit()
    history = target_history(session, target)
    assert [run.config_changes for run in history.runs] == [[], ["URL changed"], ["options changed: timeout"]]
    assert history.flaky == [] and history.clauses[0].transitions == 2

    html = client.get(f"/targets/{target.name}").text
    assert html.count('<span class="config-mark" title="URL changed">') == 1
    assert html.count("config-change") >= 4  # two run headers and their cells
    assert html.count('<td class="cell transition config-change"><a class="v v-') == 2
    diff = client.get(f"/runs/{history.runs[2].id}/diff?against={history.runs[0].id}").text
    assert "configuration changed between these runs: URL changed; options changed: timeout" in diff


def test_history_pages_back_beyond_the_window(client: TestClient, session: Session) -> None:
    target = add_target(session)
    runs = [add_run(session, target, {("a", "c.1"): "pass"}) for _ in range(5)]
    newest = target_history(session, target, limit=2)
    assert [r.id for r in newest.runs] == [runs[3].id, runs[4].id] and newest.older == runs[3].id
    older = target_history(session, target, limit=2, before_id=newest.older)
    assert [r.id for r in older.runs] == [runs[1].id, runs[2].id] and older.older == runs[1].id
    oldest = target_history(session, target, limit=2, before_id=older.older)
    assert [r.id for r in oldest.runs] == [runs[0].id] and oldest.older is None

    api = client.get(f"/api/v1/targets/{target.name}/history", params={"limit": 2, "before_id": runs[3].id}).json()
    assert [r["id"] for r in api["runs"]] == [runs[1].id, runs[2].id]
    html = client.get(f"/targets/{target.name}?before={runs[1].id}").text
    assert "1 older runs" in html and f'href="/runs/{runs[0].id}"' in html and "newest runs →" in html
