"""The cells of the two big grids (a target's history, a kind's matrix) as markup built in Python.

A fleet's grid has thousands of cells; drawn by a Jinja loop, each cost a macro call, attribute
look-ups and escapes, and the pages took hundreds of milliseconds. Here each row is one join of
f-strings with the verdict marks and clause URLs cached (`app.web.templating`); the markup is the
loop's own, byte for byte, so the pages read the same.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from app.models import TargetHistory
from app.web.templating import clause_url, verdict_badge

HISTORY_NONE = Markup('<span class="none" title="not decided in this run">&nbsp;</span>')
CHANGED = Markup('<span class="sr-only"> (changed)</span>')
MATRIX_NONE = Markup('<span class="none" title="not decided">&nbsp;</span>')


def history_row_cells(history: TargetHistory) -> list[Markup]:
    """Per clause of the history grid, its `<td>`s, one per run, oldest first."""
    column_classes = [" config-change" if run.config_changes else "" for run in history.runs]
    rows = []
    for clause in history.clauses:
        parts = []
        for cell, column_class in zip(clause.cells, column_classes, strict=True):
            moved = " transition" if cell.transition else ""
            if cell.verdict:
                link = clause_url(cell.run_id, cell.phase or "", clause.clause_id)
                inner = verdict_badge(cell.verdict, link, True) + (CHANGED if cell.transition else Markup())
            else:
                inner = HISTORY_NONE
            parts.append(f'\n      <td class="cell{moved}{column_class}">{inner}</td>\n      ')
        rows.append(Markup("".join(parts)))
    return rows


def matrix_row_cells(columns: list[tuple[Any, Any]], clause_ids: list[str], cells: dict[Any, Any]) -> list[Markup]:
    """Per clause of the matrix, its `<td>`s, one per target's latest finished run (None: no such run)."""
    run_ids = [run.id if run else None for _, run in columns]
    rows = []
    for clause_id in clause_ids:
        parts = []
        for run_id in run_ids:
            cell = cells.get((run_id, clause_id)) if run_id is not None else None
            if cell:
                inner = verdict_badge(cell["verdict"], clause_url(run_id or 0, cell["phase"], clause_id), True)
            else:
                inner = MATRIX_NONE
            parts.append(f'\n        \n        <td class="cell">{inner}</td>\n      ')
        rows.append(Markup("".join(parts)))
    return rows
