"""`/runs/{run_id}`: one row per clause (rolled up across phases), root causes first, filters in the URL,
live progress and Cancel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session, col, select

from app.deps import RunDep, RunnerDep, SessionDep
from app.history import FAILING, last_passing_run, previous_run
from app.listening import announcement_view
from app.models import ENDED_STATUSES, ClauseResultRow, Run, Target
from app.parity_runs import parity_of
from app.tap_runs import run_window
from app.web.guard import WriteGuard
from app.web.pages import page_router
from app.web.reference_client import reference_clients
from app.web.templating import VERDICT_ORDER, templates
from checks.core import RolledUp, RootCause, Verdict, roll_up, root_causes
from checks.registry import find_suite

router = page_router()


@dataclass
class MatrixRow:
    """One clause of the run: its rolled-up verdict and every phase's result behind it."""

    clause_id: str
    level: str
    rolled: RolledUp[ClauseResultRow] | None  # None: not decided (yet)

    @property
    def verdict(self) -> str | None:
        return str(self.rolled.verdict) if self.rolled else None

    @property
    def result(self) -> ClauseResultRow | None:
        """The result that decided the rolled-up verdict (its phase holds the evidence)."""
        return self.rolled.decisive if self.rolled else None

    @property
    def phase_results(self) -> list[ClauseResultRow]:
        return self.rolled.results if self.rolled else []


@dataclass
class PhaseBlock:
    """The clauses a phase is the home of: the first phase in suite order that declares them."""

    name: str
    description: str = ""
    rows: list[MatrixRow] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Verdict counts of this block's clauses, worst first, zeros left out."""
        counts = {verdict: 0 for verdict in [*VERDICT_ORDER, "pending"]}
        for row in self.rows:
            counts[row.verdict or "pending"] += 1
        return {verdict: n for verdict, n in counts.items() if n}


def roll_up_rows(results: list[ClauseResultRow]) -> list[RolledUp[ClauseResultRow]]:
    return roll_up(results, lambda r: (r.clause_id, r.verdict))


def build_matrix(run: Run, results: list[ClauseResultRow]) -> list[PhaseBlock]:
    """One row per clause, under the first phase (suite order) that declares it.

    Clauses not decided yet show as pending while the run is active. Clauses
    the suite no longer knows or no phase declares are kept, under the phase
    of their first result.
    """
    rolled = {entry.clause_id: entry for entry in roll_up_rows(results)}
    blocks: dict[str, PhaseBlock] = {}
    suite = find_suite(run.kind)
    placed: set[str] = set()
    if suite is not None:
        for phase in suite.phases:
            block = blocks[phase.name] = PhaseBlock(phase.name, phase.description)
            for clause_id in phase.clauses:
                if clause_id in placed:
                    continue
                placed.add(clause_id)
                level = str(suite.catalogue[clause_id].level) if clause_id in suite.catalogue else ""
                block.rows.append(MatrixRow(clause_id, level, rolled.pop(clause_id, None)))
    for entry in rolled.values():
        home = entry.results[0]
        block = blocks.setdefault(home.phase, PhaseBlock(home.phase))
        block.rows.append(MatrixRow(entry.clause_id, home.level, entry))
    return [block for block in blocks.values() if block.rows]


def _filtered(blocks: list[PhaseBlock], verdicts: list[str], phases: list[str]) -> list[PhaseBlock]:
    """Rows with one of `verdicts` (rolled up) that a phase in `phases` recorded or is home to."""
    shown = []
    for block in blocks:
        rows = [
            row
            for row in block.rows
            if (not verdicts or (row.verdict or "pending") in verdicts)
            and (not phases or block.name in phases or any(r.phase in phases for r in row.phase_results))
        ]
        if rows:
            shown.append(PhaseBlock(block.name, block.description, rows))
    return shown


def _counts(blocks: list[PhaseBlock]) -> dict[str, int]:
    counts = {verdict: 0 for verdict in [*VERDICT_ORDER, "pending"]}
    for block in blocks:
        for verdict, n in block.counts().items():
            counts[verdict] += n
    return counts


@dataclass
class Banner:
    """What a person acts on first: real failures with their evidence, then what left clauses undecided."""

    failures: list[MatrixRow]
    causes: list[RootCause[ClauseResultRow]]


def _banner(blocks: list[PhaseBlock]) -> Banner:
    rows = [row for block in blocks for row in block.rows]
    failures = [row for row in rows if row.verdict in (Verdict.FAIL, Verdict.WARN)]
    failures.sort(key=lambda row: row.verdict != Verdict.FAIL)
    rolled = [row.rolled for row in rows if row.rolled is not None]
    return Banner(failures, root_causes(rolled, lambda r: (r.phase, r.actual)))


def matrix_context(session: Session, run: Run, verdict: list[str], phase: list[str]) -> dict[str, Any]:
    results = list(
        session.exec(select(ClauseResultRow).where(ClauseResultRow.run_id == run.id).order_by(col(ClauseResultRow.id)))
    )
    blocks = build_matrix(run, results)
    verdicts = [v for v in verdict if v in VERDICT_ORDER or v == "pending"]
    phases = [p for p in phase if p]
    live = run.status not in ENDED_STATUSES
    counts = _counts(blocks)
    if not live:
        counts.pop("pending")
    decided = sum(1 for block in blocks for row in block.rows if row.rolled is not None)
    # A phase may decide clauses beyond the ones it declares, so the planned total is a floor.
    total = max(run.total_clauses, sum(len(b.rows) for b in blocks), decided)
    phase_names = list(dict.fromkeys([b.name for b in blocks] + [r.phase for r in results]))
    return {
        "run": run,
        "blocks": _filtered(blocks, verdicts, phases),
        "all_phases": phase_names,
        "counts": counts,
        "banner": _banner(blocks),
        "filters": {"verdict": verdicts, "phase": phases},
        "live": live,
        "progress": {"decided": decided, "total": total},
        "expected_failures": set(run.expected_failures),
        "failing": FAILING,
        "announcement": announcement_view(run),
        # Ended without starting (cancelled while queued): nothing is pending, nothing was checked.
        "never_ran": not live and run.started_at is None and decided == 0,
    }


VerdictFilter = Annotated[list[str], Query(default_factory=list)]
PhaseFilter = Annotated[list[str], Query(default_factory=list)]


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(
    request: Request, session: SessionDep, run: RunDep, verdict: VerdictFilter, phase: PhaseFilter
) -> Response:
    if parity_of(session, run) is not None:  # a parity run has its own page
        return RedirectResponse(f"/parity/{run.id}", status_code=303)
    if run_window(session, run) is not None:  # so has a tap run
        return RedirectResponse(f"/runs/{run.id}/tap", status_code=303)
    target = session.get(Target, run.target_id)
    context = matrix_context(session, run, verdict, phase)
    context.update(
        target=target,
        previous=previous_run(session, run),
        baseline=last_passing_run(session, target, before=run) if target else None,
        nav="targets",
        client_started=reference_clients(request).started_for(run.id or 0),
    )
    return templates.TemplateResponse(request, "run.html", context)


@router.get("/runs/{run_id}/matrix", response_class=HTMLResponse, include_in_schema=False)
def run_matrix(
    request: Request, session: SessionDep, run: RunDep, verdict: VerdictFilter, phase: PhaseFilter
) -> HTMLResponse:
    """The matrix partial alone, for the page's live-progress script."""
    context = matrix_context(session, run, verdict, phase)
    context["client_started"] = reference_clients(request).started_for(run.id or 0)
    return templates.TemplateResponse(request, "_run_matrix.html", context)


@router.post("/runs/{run_id}/cancel", include_in_schema=False, dependencies=[WriteGuard])
async def cancel(run: RunDep, runner: RunnerDep) -> RedirectResponse:
    if run.status not in ENDED_STATUSES:
        await runner.cancel(run.id or 0)
    return RedirectResponse(f"/runs/{run.id}", status_code=303)
