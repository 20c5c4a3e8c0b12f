"""History of a target's clauses across runs, run diffs and the last passing run.

Everything here is computed from one aggregated query per view (never one
query per cell), and returns the response models of `app.models`, so the
REST API hands them out unchanged and the pages render the same objects.

A clause decided in several phases of one run is rolled up by the engine's
one rule (`checks.core.ROLLUP_RANK`). The aggregate picks the rolled-up
verdict together with the phase that produced it, so every cell can link to
the evidence behind it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, String, and_, case, cast, func, literal, or_, type_coerce
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from app.models import (
    ClauseHistory,
    ClauseResultRow,
    DiffCounts,
    DiffEntry,
    HistoryCell,
    ParityRun,
    Run,
    RunDiff,
    RunStatus,
    RunSummary,
    Target,
    TargetHistory,
    TrendPoint,
    parse_row_id,
    stored_id,
)
from checks.core import ROLLUP_RANK, Gate, Outcome, Verdict
from checks.registry import find_suite

# For flakiness only the target's own verdicts count, whatever the gate: an
# `error` is the harness failing to decide (e.g. the target was down), not a flip.
FLIP_FAILING = Gate.STRICT.failing()
# Verdicts that mean "the target did not do what the clause asks (or the harness could not tell)", for diffs.
FAILING = FLIP_FAILING | {Verdict.ERROR}

_RANK_TO_VERDICT = {rank: verdict for verdict, rank in ROLLUP_RANK.items()}


def _worst_per_clause(
    session: Session, run_ids: Sequence[int], clause_id: str | None = None
) -> dict[tuple[int, str], dict[str, str]]:
    """{(run_id, clause_id): {"verdict", "phase", "level"}}, rolled up across phases, in one query.

    The rank is a single digit, so `max(rank || ':' || phase)` picks the worst
    verdict and, among its phases, one deterministic phase to link to.
    """
    if not run_ids:
        return {}
    rank = case(
        *((col(ClauseResultRow.verdict) == str(verdict), rank) for verdict, rank in ROLLUP_RANK.items()),
        else_=ROLLUP_RANK[Verdict.ERROR],
    )
    worst_key = func.max(cast(rank, String) + literal(":") + ClauseResultRow.phase)
    statement = (
        select(ClauseResultRow.run_id, ClauseResultRow.clause_id, worst_key, func.max(ClauseResultRow.level))
        .where(col(ClauseResultRow.run_id).in_(list(run_ids)))
        .group_by(col(ClauseResultRow.run_id), col(ClauseResultRow.clause_id))
    )
    if clause_id is not None:
        statement = statement.where(ClauseResultRow.clause_id == clause_id)
    cells: dict[tuple[int, str], dict[str, str]] = {}
    for run_id, decided_clause, key, level in session.exec(statement):
        rank_text, _, phase = key.partition(":")
        verdict = _RANK_TO_VERDICT.get(int(rank_text), Verdict.ERROR)
        cells[(run_id, decided_clause)] = {"verdict": str(verdict), "phase": phase, "level": level}
    return cells


def _clause_order(kind: str, clause_ids: Iterable[str]) -> list[str]:
    """Clause ids in the suite's catalogue order; unknown ones (renamed, retired) last, sorted."""
    suite = find_suite(kind)
    order = {clause.id: index for index, clause in enumerate(suite.catalogue)} if suite is not None else {}
    return sorted(set(clause_ids), key=lambda cid: (order.get(cid, len(order)), cid))


def conformance_runs() -> ColumnElement[bool]:
    """Runs of the target's own suite: a parity run is stored under its first target but compares two."""
    return ~select(ParityRun.run_id).where(ParityRun.run_id == Run.id).exists()


# A run's type and what a parity comparison found (checks.parity.script.Status), in their own words: a parity
# run is neither a conformance pass nor a fail, so the run lists filter the two apart.
RUN_TYPES = ("conformance", "parity")
COMPARISONS = ("identical", "divergent", "undecided")


def runs_with_parity() -> Any:
    """Runs each with its parity row (None for a conformance run), by one outer join the id order still drives."""
    return select(Run, ParityRun).join(ParityRun, col(ParityRun.run_id) == Run.id, isouter=True)


def narrow_to_type(statement: Any, run_type: str, comparison: str) -> Any:
    """`runs_with_parity()` narrowed to one type of run (`""`: both) and, for parity runs, one comparison."""
    if run_type == "conformance":
        statement = statement.where(col(ParityRun.run_id).is_(None))
    elif run_type == "parity":
        statement = statement.where(col(ParityRun.run_id).is_not(None))
    if comparison:
        statement = statement.where(ParityRun.verdict == comparison)
    return statement


def _recent_runs(session: Session, target_id: int, limit: int, before_id: int | None = None) -> list[Run]:
    """The target's last `limit` runs (older than run `before_id` if given), oldest first."""
    statement = select(Run).where(Run.target_id == target_id, conformance_runs())
    if before_id is not None:
        statement = statement.where(col(Run.id) < before_id)
    newest_first = session.exec(
        statement.order_by(col(Run.created_at).desc(), col(Run.id).desc()).limit(max(1, limit))
    ).all()
    return list(reversed(newest_first))


def config_changes(before: Run | None, after: Run) -> list[str]:
    """What of a run's configuration differs from the run before it, in words; [] when nothing or no run before.

    The URL is named, not shown: it may hold what a person would not put on a page.
    """
    if before is None:
        return []
    changes = []
    if before.url != after.url:
        changes.append("URL changed")
    changed_options = sorted(
        key for key in set(before.options) | set(after.options) if before.options.get(key) != after.options.get(key)
    )
    if changed_options:
        changes.append("options changed: " + ", ".join(changed_options))
    if before.phases != after.phases:
        changes.append("phases changed: " + (", ".join(after.phases) or "default"))
    if before.harness_version != after.harness_version:
        changes.append(f"harness {before.harness_version} → {after.harness_version}")
    if before.spec_version != after.spec_version:
        changes.append(f"spec {before.spec_version} → {after.spec_version}")
    return changes


def _ids(runs: Iterable[Run]) -> list[int]:
    return [stored_id(run) for run in runs]


def clause_timeline(session: Session, target_id: int, clause_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """One clause over the target's last `limit` runs, worst verdict per run, oldest first."""
    run_ids = _ids(_recent_runs(session, target_id, limit))
    cells = _worst_per_clause(session, run_ids, clause_id)
    return [{"run_id": run_id, **cells[(run_id, clause_id)]} for run_id in run_ids if (run_id, clause_id) in cells]


def _run_summary(run: Run) -> RunSummary:
    return RunSummary.model_validate(run, from_attributes=True)


def _flips(verdicts: Sequence[str | None], reconfigured: Sequence[bool] = ()) -> tuple[list[bool], bool]:
    """Which cells change verdict from the clause's previous result, and whether it is flaky.

    Flaky means at least one pass->fail and one fail->pass inside the window;
    a clause that only broke once (or only got fixed) is a transition, not a flake,
    and so is a change in a run whose configuration changed (`reconfigured`).
    """
    transitions: list[bool] = []
    previous: str | None = None
    went_bad = went_good = False
    for index, verdict in enumerate(verdicts):
        if verdict is None:
            transitions.append(False)
            continue
        changed = previous is not None and verdict != previous
        transitions.append(changed)
        if changed and not (index < len(reconfigured) and reconfigured[index]):
            if previous == Verdict.PASS and verdict in FLIP_FAILING:
                went_bad = True
            elif previous in FLIP_FAILING and verdict == Verdict.PASS:
                went_good = True
        previous = verdict
    return transitions, went_bad and went_good


def target_history(session: Session, target: Target, limit: int = 30, before_id: int | None = None) -> TargetHistory:
    """The clauses x last `limit` runs grid of a target, oldest run first.

    Each cell is the clause's worst verdict in that run (None when the run
    did not decide it), with the phase to link to and whether it is a
    transition from the clause's previous result. Clauses flipping both
    ways inside the window are flaky, unless the change coincides with a
    configuration change. `trend` has the pass count per run. `before_id`
    pages back to older runs.
    """
    window = _recent_runs(session, stored_id(target), limit + 1, before_id)
    earlier = window[0] if len(window) > limit else None
    runs = window[-limit:]
    run_ids = _ids(runs)
    summaries = []
    for before, run in zip([earlier, *runs][: len(runs)], runs, strict=True):
        summary = _run_summary(run)
        summary.config_changes = config_changes(before, run)
        summaries.append(summary)
    reconfigured = [bool(summary.config_changes) for summary in summaries]
    cells = _worst_per_clause(session, run_ids)

    levels: dict[str, str] = {}
    for (_, clause_id), cell in cells.items():
        levels.setdefault(clause_id, cell["level"])

    clauses = []
    for clause_id in _clause_order(target.kind, levels):
        row = [cells.get((run_id, clause_id)) for run_id in run_ids]
        transitions, is_flaky = _flips([cell["verdict"] if cell else None for cell in row], reconfigured)
        # Built without validation (every value is already typed): a fleet's grid has thousands of cells.
        history_cells = [
            HistoryCell.model_construct(
                run_id=run_id,
                verdict=Verdict(cell["verdict"]) if cell else None,
                phase=cell["phase"] if cell else None,
                transition=moved,
            )
            for run_id, cell, moved in zip(run_ids, row, transitions, strict=True)
        ]
        clauses.append(
            ClauseHistory(
                clause_id=clause_id,
                level=levels[clause_id],
                flaky=is_flaky,
                transitions=sum(transitions),
                cells=history_cells,
            )
        )

    tally = {run_id: [0, 0, 0] for run_id in run_ids}  # passed, failing, decided: plain ints, then one model each
    for (run_id, _), cell in cells.items():
        counts = tally[run_id]
        counts[0] += cell["verdict"] == Verdict.PASS
        counts[1] += cell["verdict"] in FAILING
        counts[2] += 1
    trend = {run_id: TrendPoint(run_id=run_id, passed=p, failing=f, decided=d) for run_id, (p, f, d) in tally.items()}
    return TargetHistory(
        target=target.name,
        kind=target.kind,
        runs=summaries,
        clauses=clauses,
        flaky=[clause.clause_id for clause in clauses if clause.flaky],
        trend=list(trend.values()),
        older=runs[0].id if earlier is not None else None,
    )


def _diff_entry(clause_id: str, base: dict[str, str] | None, head: dict[str, str] | None) -> DiffEntry:
    return DiffEntry(
        clause_id=clause_id,
        level=(head or base or {}).get("level"),
        base=Verdict(base["verdict"]) if base else None,
        head=Verdict(head["verdict"]) if head else None,
        base_phase=base["phase"] if base else None,
        head_phase=head["phase"] if head else None,
    )


DIFF_CATEGORIES = ("newly_failing", "newly_passing", "changed", "added", "removed")


def diff_runs(session: Session, base: Run, head: Run) -> RunDiff:
    """What changed from `base` to `head`, per clause rolled up across phases.

    newly_failing: decided in both, now failing (fail, warn or error) and not before.
    newly_passing: decided in both, failing before and pass now.
    changed: decided in both with another verdict that is neither of the above.
    added / removed: decided only in head / only in base.
    """
    cells = _worst_per_clause(session, _ids([base, head]))
    before = {clause_id: cell for (run_id, clause_id), cell in cells.items() if run_id == base.id}
    after = {clause_id: cell for (run_id, clause_id), cell in cells.items() if run_id == head.id}
    categories: dict[str, list[DiffEntry]] = {name: [] for name in DIFF_CATEGORIES}
    unchanged = 0
    for clause_id in _clause_order(head.kind, set(before) | set(after)):
        old, new = before.get(clause_id), after.get(clause_id)
        if old is None:
            category = "added"
        elif new is None:
            category = "removed"
        elif old["verdict"] == new["verdict"]:
            unchanged += 1
            continue
        elif new["verdict"] in FAILING and old["verdict"] not in FAILING:
            category = "newly_failing"
        elif old["verdict"] in FAILING and new["verdict"] == Verdict.PASS:
            category = "newly_passing"
        else:
            category = "changed"
        categories[category].append(_diff_entry(clause_id, old, new))
    counts = DiffCounts(unchanged=unchanged, **{name: len(entries) for name, entries in categories.items()})
    return RunDiff(
        base=_run_summary(base),
        head=_run_summary(head),
        counts=counts,
        config_changes=config_changes(base, head),
        **categories,
    )


def _older_than(run: Run) -> ColumnElement[bool]:
    """Runs created before `run`; the id breaks ties between equal timestamps."""
    return or_(
        col(Run.created_at) < run.created_at,
        and_(col(Run.created_at) == run.created_at, col(Run.id) < run.id),
    )


def comparison_run(session: Session, run: Run, against: str) -> Run | None:
    """The run `against` names for a diff of `run`: `baseline`, `previous` or a run id.

    None when that run does not exist; ValueError when `against` is none of these.
    """
    if against == "baseline":
        target = session.get(Target, run.target_id)
        return last_passing_run(session, target, before=run) if target is not None else None
    if against == "previous":
        return previous_run(session, run)
    if not (against.isascii() and against.isdigit()):
        raise ValueError("against must be a run id, baseline or previous")
    base_id = parse_row_id(against)
    return session.get(Run, base_id) if base_id is not None else None


def last_passing_run(session: Session, target: Target, before: Run | None = None) -> Run | None:
    """The target's most recent finished run whose outcome is pass, older than `before` if given."""
    statement = select(Run).where(
        Run.target_id == target.id, Run.status == RunStatus.FINISHED, Run.outcome == Outcome.PASS, conformance_runs()
    )
    if before is not None:
        statement = statement.where(_older_than(before))
    statement = statement.order_by(col(Run.created_at).desc(), col(Run.id).desc()).limit(1)
    return session.exec(statement).first()


def previous_run(session: Session, run: Run) -> Run | None:
    """The target's run just before `run`, whatever its outcome."""
    return session.exec(
        select(Run)
        .where(Run.target_id == run.target_id, _older_than(run), conformance_runs())
        .order_by(col(Run.created_at).desc(), col(Run.id).desc())
        .limit(1)
    ).first()


Cells = dict[tuple[int, str], dict[str, str]]


class RunBrief(NamedTuple):
    """What the overview and the matrix show of a run: they never load its options, phases or message."""

    id: int
    target_id: int
    status: str
    outcome: str | None
    created_at: datetime
    finished_at: datetime | None


def _moment(value: datetime | str) -> datetime:
    """A stored time read as text (SQLite) or as the driver's datetime (PostgreSQL)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def latest_runs_per_target(
    session: Session, limit: int, *, kind: str | None = None, finished_only: bool = False
) -> dict[int, list[RunBrief]]:
    """The last `limit` conformance runs of every target (of `kind`), oldest first, as `RunBrief`s.

    One index probe per target over `(target_id, created_at)`, however many runs the fleet holds:
    a per-target LIMIT (LATERAL on PostgreSQL, a correlated id subquery on SQLite), never a ranking
    of every run. The columns are read as plain values and turned into times here: the ORM's per-value
    type processing cost more than the query on a fleet's overview (4,000 rows).
    """
    inner = aliased(Run, name="newest")
    newest = (
        select(inner.id)
        .where(inner.target_id == Target.id, ~select(ParityRun.run_id).where(ParityRun.run_id == inner.id).exists())
        .correlate(Target)
    )
    if finished_only:
        newest = newest.where(inner.status == RunStatus.FINISHED)
    newest = newest.order_by(col(inner.created_at).desc(), col(inner.id).desc()).limit(max(1, limit))
    plain = ("status", "outcome", "created_at", "finished_at")
    statement: Any
    picked: list[Any]
    if session.get_bind().dialect.name == "postgresql":
        lateral = newest.add_columns(col(inner.target_id), *[getattr(inner, name) for name in plain]).lateral("latest")
        picked = [lateral.c.id, lateral.c.target_id, *[type_coerce(lateral.c[name], String) for name in plain]]
        statement = select(*picked).select_from(Target).join(lateral, literal(True))
    else:
        picked = [col(Run.id), col(Run.target_id), *[type_coerce(getattr(Run, name), String) for name in plain]]
        statement = select(*picked).select_from(Target).join(Run, col(Run.id).in_(newest.scalar_subquery()))
    if kind is not None:
        statement = statement.where(Target.kind == kind)
    by_target: dict[int, list[RunBrief]] = {}
    for run_id, target_id, status, outcome, created_at, finished_at in session.execute(statement):
        ended = None if finished_at is None else _moment(finished_at)
        brief = RunBrief(run_id, target_id, status, outcome, _moment(created_at), ended)
        by_target.setdefault(target_id, []).append(brief)
    for runs in by_target.values():
        runs.sort(key=lambda run: (run.created_at, run.id))
    return by_target


def kind_matrix(session: Session, kind: str) -> tuple[list[tuple[Target, Any]], list[str], Cells]:
    """Clauses x targets of one kind, wpt.fyi style: each target's latest finished run, rolled up per clause.

    Returns the (target, its latest finished run's brief row or None) columns by name, the clause ids in
    catalogue order, and the cells keyed by (run id, clause id), from three queries.
    """
    targets = session.exec(select(Target).where(Target.kind == kind).order_by(col(Target.name))).all()
    latest = latest_runs_per_target(session, 1, kind=kind, finished_only=True)
    runs = {target_id: rows[-1] for target_id, rows in latest.items()}
    columns = [(target, runs.get(stored_id(target))) for target in targets]
    cells = _worst_per_clause(session, [run.id for run in runs.values()])
    return columns, _clause_order(kind, {clause_id for _, clause_id in cells}), cells
