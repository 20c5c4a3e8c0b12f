"""The shape of the code: no module over 500 lines, no function over 80, no import circles.

Generated code (the rlmesh protobuf modules, alembic's migration versions) and
the tests are left out. The import graph is the one Python builds at import
time: module-level imports only, not those under `if TYPE_CHECKING:` or
inside a function, and only between modules of `checks/` and `app/`.
"""

from __future__ import annotations

import ast
import builtins
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
GENERATED = ("checks/rlmesh/proto/", "app/migrations/versions/")
GRAPHED = ("checks", "app")
# What finds the import statements of a module's tree.
Imports = Callable[[ast.Module], Iterable[ast.stmt]]


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


def imported_modules(
    name: str, is_package: bool, tree: ast.Module, known: set[str], imports: Imports | None = None
) -> set[str]:
    """The modules of `known` that module `name` imports when it is imported (or, given `imports`, in the
    statements it finds)."""
    found: set[str] = set()
    statements = imports(tree) if imports is not None else import_time_statements(tree.body)
    for statement in statements:
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


def import_graph(imports: Imports | None = None) -> dict[str, set[str]]:
    paths = {module_name(path): path for path in source_files() if path.relative_to(ROOT).parts[0] in GRAPHED}
    known = set(paths)
    return {
        name: imported_modules(
            name, path.name == "__init__.py", ast.parse(path.read_text(encoding="utf-8")), known, imports
        )
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


def every_import_statement(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every import of a module, those inside functions included, but not those under `if TYPE_CHECKING:`."""
    checking_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and is_type_checking(node.test):
            checking_only.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in checking_only:
            yield node


# Circles closed only by an import inside a function, each with why it is still there. The list is exact:
# a circle gone must be dropped from it.
FUNCTION_LEVEL_CIRCLES: dict[str, str] = {}


def test_no_import_circles_even_through_imports_in_functions() -> None:
    """An import inside a function hides a circle from the interpreter, not from a reader: app.crud once asked
    app.tap_runs, which imports app.crud, for a tap run's settings that way."""
    graph = import_graph(every_import_statement)
    components = strongly_connected(graph)
    circles = {
        component[0]: " -> ".join(one_cycle(graph, component))
        for component in components
        if not set(component) & FUNCTION_LEVEL_CIRCLES.keys()
    }
    assert not circles, "import circles (imports in functions included):\n" + "\n".join(circles.values())
    listed = {name for name in FUNCTION_LEVEL_CIRCLES if any(name in component for component in components)}
    assert listed == FUNCTION_LEVEL_CIRCLES.keys(), "no longer in a circle: drop from FUNCTION_LEVEL_CIRCLES"


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
    assert imported_modules("checks.a", False, tree, known, every_import_statement) == {
        "checks.b",
        "checks.c",
        "checks.e",
    }


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


# ---------------------------------------------------------------- one error family per package

# Each package's root and the exception classes defined there that may stay outside it, with why.
ERROR_ROOTS = {"checks": "CheckError", "app": "ServiceError"}
OUTSIDE_THE_FAMILY: dict[str, str] = {}
BUILTIN_EXCEPTIONS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
}


def base_names(node: ast.ClassDef) -> set[str]:
    """The names of a class's bases as written (`errors.CheckError` -> `CheckError`)."""
    return {base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "") for base in node.bases}


def exceptions_outside(trees: dict[str, ast.Module], root: str) -> list[str]:
    """`path:Class` of the exception classes in `trees` not deriving from `root`, resolved by class name."""
    classes = [
        (path, node) for path, tree in trees.items() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
    ]
    exceptions, family = set(BUILTIN_EXCEPTIONS), {root}
    while True:  # to a fixed point: a class is one when a base is, however deep
        grown = exceptions | {node.name for _, node in classes if base_names(node) & exceptions}
        grown_family = family | {node.name for _, node in classes if base_names(node) & family}
        if (grown, grown_family) == (exceptions, family):
            break
        exceptions, family = grown, grown_family
    return sorted(
        f"{path}:{node.name}"
        for path, node in classes
        if base_names(node) & exceptions and not base_names(node) & family and node.name != root
    )


def test_every_exception_derives_from_its_package_root() -> None:
    found = []
    for package, root in ERROR_ROOTS.items():
        trees = {
            relative(path): ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in source_files()
            if relative(path).startswith(f"{package}/")
        }
        found += exceptions_outside(trees, root)
    outside = set(found) - OUTSIDE_THE_FAMILY.keys()
    assert not outside, (
        "exceptions outside their package's family (checks.errors.CheckError, app.errors.ServiceError):\n"
        + "\n".join(sorted(outside))
    )
    assert OUTSIDE_THE_FAMILY.keys() <= set(found), "in the family now: drop from OUTSIDE_THE_FAMILY"


def test_the_family_finder_follows_bases() -> None:
    tree = ast.parse(
        "class Root(Exception): pass\n"
        "class Leaf(Root, KeyError): pass\n"
        "class Deeper(errors.Leaf): pass\n"
        "class Stray(ValueError): pass\n"
        "class StrayLeaf(Stray): pass\n"
        "class NotAnError: pass\n"
    )
    assert exceptions_outside({"m.py": tree}, "Root") == ["m.py:Stray", "m.py:StrayLeaf"]
