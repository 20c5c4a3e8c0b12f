"""`pip install -e .` alone must run the service: every package app/ and checks/ import is a main dependency.

The tests run with the test extra installed, so a module missing from the main
dependencies would pass them and break the README's quick start; this reads
the imports and the dependency tree instead of trusting the environment.
"""

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWN = {"app", "checks"}
# Maintenance scripts a developer runs with the test extra, never the service.
DEVELOPER_SCRIPTS = {ROOT / "checks/rlmesh/proto/generate.py"}


def imported_top_level_modules() -> set[str]:
    modules = set()
    for path in [*ROOT.glob("app/**/*.py"), *ROOT.glob("checks/**/*.py")]:
        if path in DEVELOPER_SCRIPTS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - OWN - set(sys.stdlib_module_names)


def requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def installed_closure(names: set[str]) -> set[str]:
    """The distributions `names` pull in, following requirements without extras or non-matching markers."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" in requirement:
                continue
            todo.append(requirement_name(requirement))
    return seen


def test_every_imported_package_is_a_main_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    main = {requirement_name(r) for r in project["dependencies"]}
    available = installed_closure(main)
    providers = metadata.packages_distributions()
    missing = {}
    for module in sorted(imported_top_level_modules()):
        distributions = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        if not distributions & available:
            missing[module] = sorted(distributions) or ["(not installed)"]
    assert not missing, f"imported by app/ or checks/ but not installed by `pip install -e .`: {missing}"
