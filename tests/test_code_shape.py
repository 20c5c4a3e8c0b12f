"""The shape of the code: no module over 500 lines, no function over 80, no import circles.

Generated code (the rlmesh protobuf modules, alembic's migration versions) and
the tests are left out. The import graph is the one Python builds at import
time: module-level imports only, not those under `if TYPE_CHECKING:` or
inside a function, and only between modules of `checks/` and `app/`.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
GENERATED = ("checks/rlmesh/proto/", "app/migrations/versions/")
GRAPHED = ("checks", "app")


def source_files() -> list[Path]:
    """Every .py file git tracks or would track (new files count before they are committed), tests excepted."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(
        ROOT / name
        for name in set(listed)
        if not name.startswith("tests/") and not name.startswith(GENERATED) and (ROOT / name).is_file()
    )


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_no_module_is_over_500_lines() -> None:
    long = []
    for path in source_files():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long.append(f"{relative(path)}: {lines} lines")
    assert not long, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(long)


def test_no_function_is_over_80_lines() -> None:
    long = []
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{relative(path)}:{node.lineno} {node.name}: {lines} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


# ---------------------------------------------------------------- import circles


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_time_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module runs when imported: its body, and the blocks of its ifs, trys and withs,
    but not function bodies or `if TYPE_CHECKING:` blocks."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            if not is_type_checking(statement.test):
                yield from import_time_statements(statement.body)
            yield from import_time_statements(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from import_time_statements(block)
            for handler in statement.handlers:
                yield from import_time_statements(handler.body)
        elif isinstance(statement, (ast.With, ast.ClassDef)):
            yield from import_time_statements(statement.body)


def imported_modules(name: str, is_package: bool, tree: ast.Module, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` imports when it is imported."""
    found: set[str] = set()
    for statement in import_time_statements(tree.body):
        if isinstance(statement, ast.Import):
            found.update(alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (statement.level - 1)]
                base = ".".join([*package, base] if base else package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in statement.names)  # a submodule imported by name
    return {module for module in found if module in known and module != name}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in source_files() if path.relative_to(ROOT).parts[0] in GRAPHED}
    known = set(paths)
    return {
        name: imported_modules(name, path.name == "__init__.py", ast.parse(path.read_text(encoding="utf-8")), known)
        for name, path in paths.items()
    }


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iterative, so a deep graph cannot overflow the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest circle through the component's first module, as the import chain that closes it."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    return component


def test_no_import_circles_among_checks_and_app() -> None:
    graph = import_graph()
    circles = [" -> ".join(one_cycle(graph, component)) for component in strongly_connected(graph)]
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_imports_under_type_checking_or_in_functions_are_not_edges() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import checks.b\n"
        "from . import c\n"
        "if TYPE_CHECKING:\n    import checks.d\n"
        "def f():\n    import checks.e\n"
    )
    known = {"checks.a", "checks.b", "checks.c", "checks.d", "checks.e"}
    assert imported_modules("checks.a", False, tree, known) == {"checks.b", "checks.c"}


# ---------------------------------------------------------------- the judgement seam

# Where a clause may be decided on a report directly: the engine itself (recording a judge's decisions, the
# harness's own errors). Everywhere else in checks/ a judge returns Decisions and a phase records them.
ENGINE = ("checks/decision.py", "checks/report.py", "checks/suite.py", "checks/core.py")
DECIDING_CALLS = ("check", "passed", "failed")


def inline_decisions(tree: ast.AST) -> Iterator[int]:
    """Lines calling `report.check/passed/failed` (on `report`, `ctx.report`, `self.report`, ...)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in DECIDING_CALLS:
            continue
        owner = node.func.value
        named = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if named == "report":
            yield node.lineno


def decision_types(tree: ast.AST) -> Iterator[int]:
    """Lines defining a class called Decision."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Decision":
            yield node.lineno


def test_every_clause_is_decided_by_a_judge_not_inline() -> None:
    inline = [
        f"{relative(path)}:{line}"
        for path in source_files()
        if relative(path).startswith("checks/") and relative(path) not in ENGINE
        for line in inline_decisions(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    ]
    assert not inline, "clauses decided inline (return Decisions from a judge and record them):\n" + "\n".join(inline)


def test_there_is_one_decision_type() -> None:
    defined = [
        f"{relative(path)}:{line}"
        for path in source_files()
        for line in decision_types(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    ]
    assert defined == ["checks/decision.py:28"] or (
        len(defined) == 1 and defined[0].startswith("checks/decision.py")
    ), "Decision types besides checks/decision.py's:\n" + "\n".join(defined)


def test_the_seam_finders_find_what_they_look_for() -> None:
    tree = ast.parse(
        "ctx.report.check(x, 'a', expected='', actual='')\n"
        "report.passed('a')\n"
        "self.report.failed('a', expected='', actual='')\n"
        "record(ctx.report, decisions)\n"
        "other.check(1)\n"
        "class Decision: pass\n"
    )
    assert sorted(inline_decisions(tree)) == [1, 2, 3]
    assert list(decision_types(tree)) == [6]
