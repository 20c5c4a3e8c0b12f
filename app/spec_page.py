"""SPEC.md as HTML, with an `id` on every clause line equal to the clause id.

Clause lines are list items of the form `- **LEVEL** `clause.id`: statement`
(see `checks.spec`). Headings get slug anchors too, so sections can be linked.
Raw HTML in the file is not passed through (comments are dropped first).
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from checks.spec import CLAUSE_LINE, SpecClause, load_spec

HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _link_clause_code(inline: Token, clause_id: str) -> None:
    """Wrap the clause id's code span in a link to its own anchor."""
    children = inline.children or []
    for index, child in enumerate(children):
        if child.type == "code_inline" and child.content == clause_id:
            opening = Token("html_inline", "", 0, content=f'<a class="anchor" href="#{escape(clause_id)}">')
            closing = Token("html_inline", "", 0, content="</a>")
            inline.children = [*children[:index], opening, child, closing, *children[index + 1 :]]
            return


def _anchor_tokens(tokens: list[Token]) -> list[str]:
    """Set ids on clause list items and headings, in place; return the clause ids in order."""
    clause_ids: list[str] = []
    open_items: list[Token] = []
    seen_slugs: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type == "list_item_open":
            open_items.append(token)
        elif token.type == "list_item_close" and open_items:
            open_items.pop()
        elif token.type == "heading_open" and index + 1 < len(tokens):
            slug = _slug(tokens[index + 1].content)
            while slug in seen_slugs:
                slug += "-"
            seen_slugs.add(slug)
            token.attrSet("id", slug)
        elif token.type == "inline" and open_items:
            match = CLAUSE_LINE.match(f"- {token.content.strip()}")
            if match:
                level, clause_id, _ = match.groups()
                item = open_items[-1]
                item.attrSet("id", clause_id)
                item.attrSet("class", f"clause clause-{level.lower()}")
                clause_ids.append(clause_id)
                _link_clause_code(token, clause_id)
    return clause_ids


@lru_cache(maxsize=4)
def _render(path: Path, mtime_ns: int) -> tuple[str, tuple[str, ...]]:
    text = HTML_COMMENT.sub("", path.read_text(encoding="utf-8"))
    markdown = MarkdownIt("commonmark", {"html": False})
    tokens = markdown.parse(text)
    clause_ids = _anchor_tokens(tokens)
    return markdown.renderer.render(tokens, markdown.options, {}), tuple(clause_ids)


def render_spec(path: Path) -> tuple[Markup, tuple[str, ...]]:
    """The HTML of SPEC.md (built from our own file, escaped by markdown-it) and its clause ids."""
    html, clause_ids = _render(path, path.stat().st_mtime_ns)
    return Markup(html), clause_ids


@lru_cache(maxsize=4)
def _clauses(path: Path, mtime_ns: int) -> dict[str, SpecClause]:
    return load_spec(path)


def spec_clauses(path: Path) -> dict[str, SpecClause]:
    """SPEC.md's clauses by id, re-read only when the file changes."""
    try:
        return _clauses(path, path.stat().st_mtime_ns)
    except (OSError, ValueError):
        return {}
