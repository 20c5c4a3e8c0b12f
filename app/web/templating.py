"""The Jinja2 environment of the pages: verdict marks, times, links to clauses and the SPEC.

Autoescaping is on for every template; target data is never marked safe.
Only markup this service builds itself (the SVG charts, the rendered
SPEC.md) is passed as `Markup`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from app.redaction import redact_url
from checks.core import Verdict, seconds, truncate

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"

# Every verdict has a symbol and a word as well as a colour, so the matrix
# reads the same for colour-blind users and in print.
VERDICT_MARKS: dict[str, dict[str, str]] = {
    Verdict.PASS: {"symbol": "✓", "label": "pass", "meaning": "the clause holds"},
    Verdict.FAIL: {"symbol": "✗", "label": "fail", "meaning": "a MUST is broken"},
    Verdict.WARN: {"symbol": "!", "label": "warn", "meaning": "a SHOULD is missed"},
    Verdict.INFO: {"symbol": "i", "label": "info", "meaning": "recorded, never gates"},
    Verdict.UNSUPPORTED: {"symbol": "–", "label": "unsupported", "meaning": "optional feature not offered"},
    Verdict.SKIP: {"symbol": "·", "label": "skip", "meaning": "phase not selected"},
    Verdict.ERROR: {"symbol": "⚠", "label": "error", "meaning": "the harness could not decide"},
}
PENDING_MARK = {"symbol": "…", "label": "pending", "meaning": "not decided yet"}
VERDICT_ORDER = [
    str(v)
    for v in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN, Verdict.PASS, Verdict.INFO, Verdict.UNSUPPORTED, Verdict.SKIP)
]

OUTCOME_MARKS = {
    "pass": {"symbol": "✓", "label": "pass"},
    "fail": {"symbol": "✗", "label": "fail"},
    "error": {"symbol": "⚠", "label": "error"},
}


def verdict_mark(verdict: str | None) -> dict[str, str]:
    return VERDICT_MARKS.get(verdict or "", PENDING_MARK)


def ago(moment: datetime | str | None) -> str:
    """'3 min ago' for people; the exact time goes in a title attribute beside it."""
    if moment is None:
        return "never"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment.tzinfo is None:  # SQLite hands back naive datetimes; they are stored in UTC
        moment = moment.replace(tzinfo=UTC)
    delta = (datetime.now(UTC) - moment).total_seconds()
    if delta < 45:
        return "just now"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if delta >= size:
            return f"{int(delta // size)} {unit} ago"
    return "just now"


def stamp(moment: datetime | str | None) -> str:
    if moment is None:
        return ""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return ""
    return seconds((end - start).total_seconds())


@lru_cache(maxsize=4096)
def _path_part(text: str) -> str:
    # Phases and clause ids repeat in every row and column of the grids: quote each once.
    return quote(text, safe="")


def clause_url(run_id: int, phase: str, clause_id: str) -> str:
    return f"/runs/{run_id}/clauses/{_path_part(phase)}/{_path_part(clause_id)}"


@lru_cache(maxsize=64)
def _verdict_parts(verdict: str | None, compact: bool) -> tuple[str, str, str]:
    """The markup of a verdict mark: (its class attribute, its title attribute, what goes inside the tag)."""
    mark = verdict_mark(verdict)
    label = escape(mark["label"])
    word = f'<span class="sr-only">{label}</span>' if compact else f'<span class="v-word">{label}</span>'
    return (
        f'class="v v-{label}{" v-compact" if compact else ""}"',
        f'title="{label}: {escape(mark["meaning"])}"',
        f'<span class="v-sym" aria-hidden="true">{escape(mark["symbol"])}</span>{word}',
    )


def verdict_badge(verdict: str | None, link: str | None = None, compact: bool = False) -> Markup:
    """A verdict's symbol and word (a link when `link` is given): the `verdict` macro, built in Python because
    the history grid and the matrix draw one per cell."""
    class_, title, inner = _verdict_parts(verdict, compact)
    if link:
        return Markup(f'<a {class_} href="{escape(link)}" {title}>{inner}</a>')
    return Markup(f"<span {class_} {title}>{inner}</span>")


def status_badge(run: Any) -> Markup:
    status = escape(run.status)
    spinner = '<span class="spinner" aria-hidden="true"></span>' if run.status == "running" else ""
    return Markup(f'<span class="badge s-{status}">{spinner}{status}</span>')


def outcome_badge(run: Any) -> Markup:
    """A run's outcome (its status until it has one): the `outcome` macro, once per row of the long lists."""
    if not run.outcome:
        return status_badge(run)
    mark = OUTCOME_MARKS.get(run.outcome, {"symbol": "?", "label": run.outcome})
    label, symbol = escape(mark["label"]), escape(mark["symbol"])
    return Markup(f'<span class="badge o-{label}"><span aria-hidden="true">{symbol}</span> {label}</span>')


def spec_url(clause_id: str) -> str:
    return f"/spec#{quote(clause_id, safe='.-_')}"


def query(params: dict[str, Any], **changes: Any) -> str:
    """A query string from `params` with `changes` applied; None drops a key."""
    merged = {**params, **changes}
    pairs = []
    for key, value in merged.items():
        if value is None or value == "" or value == []:
            continue
        for item in value if isinstance(value, list) else [value]:
            pairs.append((key, item))
    return "?" + urlencode(pairs) if pairs else ""


templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
templates.env.globals.update(
    VERDICT_MARKS=VERDICT_MARKS,
    VERDICT_ORDER=VERDICT_ORDER,
    OUTCOME_MARKS=OUTCOME_MARKS,
    verdict_mark=verdict_mark,
    clause_url=clause_url,
    verdict_badge=verdict_badge,
    outcome_badge=outcome_badge,
    status_badge=status_badge,
    spec_url=spec_url,
    query=query,
)
templates.env.filters.update(ago=ago, stamp=stamp, shorten=truncate, seconds=seconds, duration=duration)
templates.env.filters.update(redact_url=redact_url)
