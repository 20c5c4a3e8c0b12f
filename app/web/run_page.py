"""`/runs/{run_id}`: the clause matrix by phase, with filters in the URL, live progress and Cancel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlmodel import Session, col, select

from app.deps import RunDep, RunnerDep, SessionDep
from app.history import FAILING, last_passing_run, previous_run
from app.models import ENDED_STATUSES, ClauseResultRow, Run, Target
from app.web.guard import WriteGuard
from app.web.templating import VERDICT_ORDER, templates
from checks.registry import find_suite

router = APIRouter()


@dataclass
class MatrixRow:
    clause_id: str
    level: str
    result: ClauseResultRow | None  # None: not decided (yet)

    @property
    def verdict(self) -> str | None:
        return self.result.verdict if self.result else None


@dataclass
class PhaseBlock:
    name: str
    description: str = ""
    rows: list[MatrixRow] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Verdict counts of this phase, worst first, zeros left out."""
        counts = {verdict: 0 for verdict in [*VERDICT_ORDER, "pending"]}
        for row in self.rows:
            counts[row.verdict or "pending"] += 1
        return {verdict: n for verdict, n in counts.items() if n}


def build_matrix(run: Run, results: list[ClauseResultRow]) -> list[PhaseBlock]:
    """Phases in suite order, each with every clause it decides; results land in their slots.

    Clauses not decided yet show as pending while the run is active. Results
    the suite no longer knows (renamed phases or clauses) are kept, after the rest.
    """
    by_key = {(r.phase, r.clause_id): r for r in results}
    blocks: dict[str, PhaseBlock] = {}
    suite = find_suite(run.kind)
    if suite is not None:
        for phase in suite.phases:
            block = blocks[phase.name] = PhaseBlock(phase.name, phase.description)
            for clause_id in phase.clauses:
                level = str(suite.catalogue[clause_id].level) if clause_id in suite.catalogue else ""
                block.rows.append(MatrixRow(clause_id, level, by_key.pop((phase.name, clause_id), None)))
    for result in sorted(by_key.values(), key=lambda r: r.id or 0):
        block = blocks.setdefault(result.phase, PhaseBlock(result.phase))
        block.rows.append(MatrixRow(result.clause_id, result.level, result))
    return list(blocks.values())


def _filtered(blocks: list[PhaseBlock], verdicts: list[str], phases: list[str]) -> list[PhaseBlock]:
    shown = []
    for block in blocks:
        if phases and block.name not in phases:
            continue
        rows = [row for row in block.rows if not verdicts or (row.verdict or "pending") in verdicts]
        if rows:
            shown.append(PhaseBlock(block.name, block.description, rows))
    return shown


def _counts(blocks: list[PhaseBlock]) -> dict[str, int]:
    counts = {verdict: 0 for verdict in [*VERDICT_ORDER, "pending"]}
    for block in blocks:
        for verdict, n in block.counts().items():
            counts[verdict] += n
    return counts


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
    decided = len(results)
    # A phase may decide clauses beyond the ones it declares, so the planned
    # total is a floor, not a promise.
    total = max(run.total_clauses, sum(len(b.rows) for b in blocks), decided)
    return {
        "run": run,
        "blocks": _filtered(blocks, verdicts, phases),
        "all_phases": [b.name for b in blocks],
        "counts": counts,
        "filters": {"verdict": verdicts, "phase": phases},
        "live": live,
        "progress": {"decided": decided, "total": total},
        "expected_failures": set(run.expected_failures),
        "failing": FAILING,
    }


VerdictFilter = Annotated[list[str], Query(default_factory=list)]
PhaseFilter = Annotated[list[str], Query(default_factory=list)]


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(
    request: Request, session: SessionDep, run: RunDep, verdict: VerdictFilter, phase: PhaseFilter
) -> HTMLResponse:
    target = session.get(Target, run.target_id)
    context = matrix_context(session, run, verdict, phase)
    context.update(
        target=target,
        previous=previous_run(session, run),
        baseline=last_passing_run(session, target, before=run) if target else None,
        nav="targets",
    )
    return templates.TemplateResponse(request, "run.html", context)


@router.get("/runs/{run_id}/matrix", response_class=HTMLResponse, include_in_schema=False)
def run_matrix(
    request: Request, session: SessionDep, run: RunDep, verdict: VerdictFilter, phase: PhaseFilter
) -> HTMLResponse:
    """The matrix partial alone, for the page's live-progress script."""
    context = matrix_context(session, run, verdict, phase)
    return templates.TemplateResponse(request, "_run_matrix.html", context)


@router.post("/runs/{run_id}/cancel", include_in_schema=False, dependencies=[WriteGuard])
async def cancel(run: RunDep, runner: RunnerDep) -> RedirectResponse:
    if run.status not in ENDED_STATUSES:
        await runner.cancel(run.id or 0)
    return RedirectResponse(f"/runs/{run.id}", status_code=303)
