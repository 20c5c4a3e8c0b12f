"""`rlconform`: check a target, list suites, run a reference server, serve the dashboard, drive CI.

Exit codes everywhere: 0 pass, 1 conformance failure, 2 harness or infrastructure error.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pydantic

# kind -> "module:function" taking argv; each parses its own flags.
REFERENCE_SERVERS = {
    "plugrl": "checks.plugrl.reference:main",
    "rllink": "checks.rllink.reference:main",
}


class UsageError(Exception):
    """Bad command-line input; printed without a traceback, exit 2."""


def parse_option_pairs(pairs: list[str]) -> dict[str, Any]:
    """KEY=VALUE strings into a dict; VALUE is read as JSON when it parses, else kept as text."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option takes KEY=VALUE, got {pair!r}")
        try:
            values[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            values[key.strip()] = raw
    return values


def load_options(suite, options_file: str | None, pairs: list[str], timeout: float | None):
    """The suite's validated options from a file, --option pairs and --timeout, in that order."""
    values: dict[str, Any] = {}
    if options_file:
        try:
            loaded = json.loads(Path(options_file).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read --options-file {options_file}: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"--options-file {options_file} must hold a JSON object")
        values.update(loaded)
    values.update(parse_option_pairs(pairs))
    if timeout is not None:
        values["timeout"] = timeout
    try:
        return suite.parse_options(values)
    except pydantic.ValidationError as exc:
        raise UsageError(describe_validation_error(exc, suite)) from None


def describe_validation_error(exc: pydantic.ValidationError, suite) -> str:
    known = ", ".join(suite.options_model.model_fields)
    lines = [f"invalid options for {suite.kind}:"]
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(options)"
        if error["type"] == "extra_forbidden":
            lines.append(f"  {where}: unknown option; {suite.kind} takes {known}")
        else:
            lines.append(f"  {where}: {error['msg']}")
    return "\n".join(lines)


# ---------------------------------------------------------------- commands


def cmd_check(args: argparse.Namespace) -> int:
    from checks.core import EXIT_CODES, run_suite
    from checks.formats import render_junit, render_text, to_json
    from checks.registry import UnknownKind, get_suite

    try:
        suite = get_suite(args.kind)
    except UnknownKind as exc:
        raise UsageError(str(exc)) from None
    options = load_options(suite, args.options_file, args.option or [], args.timeout)
    try:
        suite.validate_url(args.url)
        suite.select(args.phase)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    phases = list(args.phase or [])
    if args.until_stop and phases and "stop" not in phases:
        phases.append("stop")

    class Progress:
        def result(self, result) -> None:
            pass

        def transcript(self, transcript) -> None:
            pass

        def phase(self, name: str, state: str) -> None:
            if state == "running" and not args.quiet:
                print(f"phase: {name}", file=sys.stderr, flush=True)

    report = asyncio.run(
        run_suite(suite, args.url, options, phases or None, Progress(), include_optional=args.until_stop)
    )
    results = [r.to_dict() for r in report.results.values()]
    outcome = report.outcome()
    print(render_text(results, outcome, f"{suite.kind} {args.url}"))
    if args.json:
        Path(args.json).write_text(
            to_json(
                results,
                outcome,
                kind=suite.kind,
                url=args.url,
                transcripts=[t.to_dict() for t in report.transcripts.values()],
            )
        )
    if args.junit:
        Path(args.junit).write_text(render_junit(results, suite.kind))
    return EXIT_CODES[outcome]


def cmd_suites(args: argparse.Namespace) -> int:
    from checks.registry import KINDS, get_suite

    if args.json:
        from app.suites_info import suites_document  # noqa: PLC0415

        print(json.dumps(suites_document(), indent=2))
        return 0
    for kind in KINDS:
        try:
            suite = get_suite(kind)
        except ImportError as exc:
            print(f"{kind}: unavailable ({exc})\n")
            continue
        schemes = ", ".join(f"{s}://" for s in suite.url_schemes) or "HOST:PORT"
        print(f"{kind}: {suite.title} (spec version {suite.spec_version}; targets {schemes})")
        for phase in suite.phases:
            flag = "" if phase.default else (" (only when named)" if phase.named_only else " (opt-in)")
            print(f"  phase {phase.name}{flag}: {phase.description}")
            for clause_id in phase.clauses:
                clause = suite.catalogue[clause_id]
                print(f"    {clause.level:<6} {clause.id}  {clause.statement}")
        print("  options:")
        for name, field in suite.options_model.model_fields.items():
            default = field.default if field.default is not pydantic_undefined() else "(required)"
            print(f"    {name} = {default!r}  {field.description or ''}")
        print()
    return 0


def pydantic_undefined():
    from pydantic_core import PydanticUndefined

    return PydanticUndefined


def cmd_reference_server(args: argparse.Namespace, rest: list[str]) -> int:
    if args.kind not in REFERENCE_SERVERS:
        raise UsageError(f"no reference server for {args.kind!r}; there are: {', '.join(REFERENCE_SERVERS)}")
    module_name, function = REFERENCE_SERVERS[args.kind].split(":")
    return getattr(importlib.import_module(module_name), function)(rest) or 0


def cmd_serve(args: argparse.Namespace) -> int:
    from app.serve import serve  # noqa: PLC0415

    return serve(args)


def cmd_ci(args: argparse.Namespace) -> int:
    from app.ci_client import run_ci  # noqa: PLC0415

    return run_ci(args)


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlconform", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="run a check suite against a target and print the report")
    check.add_argument("kind", help="target kind, e.g. plugrl-server, openenv, rlmesh")
    check.add_argument("url", help="target address, e.g. ws://127.0.0.1:8000")
    check.add_argument("--phase", action="append", help="run only this phase (repeatable)")
    check.add_argument(
        "--until-stop",
        action="store_true",
        help="also run the opt-in phases that end a run (PlugRL stop, RLMesh shutdown); "
        "long waits such as feedback-timeout run only when named with --phase",
    )
    check.add_argument("--timeout", type=float, help="deadline in seconds for each step")
    check.add_argument("--option", action="append", metavar="KEY=VALUE", help="set a suite option (repeatable)")
    check.add_argument("--options-file", metavar="FILE", help="JSON object of suite options")
    check.add_argument("--json", metavar="FILE", help="also write the results and transcripts as JSON")
    check.add_argument("--junit", metavar="FILE", help="also write JUnit XML")
    check.add_argument("--quiet", action="store_true", help="do not print phase progress")
    check.set_defaults(handler=cmd_check)

    suites = commands.add_parser("suites", help="list kinds, phases, clauses and options")
    suites.add_argument("--json", action="store_true", help="as JSON, with each options JSON schema")
    suites.set_defaults(handler=cmd_suites)

    reference = commands.add_parser(
        "reference-server", help="run a conforming reference server (flags after KIND go to it)"
    )
    reference.add_argument("kind", help=f"one of: {', '.join(REFERENCE_SERVERS)}")
    reference.set_defaults(handler=None)

    serve = commands.add_parser("serve", help="run the dashboard and API")
    serve.add_argument("--host", help="bind address (RLCONFORM_HOST)")
    serve.add_argument("--port", type=int, help="port (RLCONFORM_PORT, default 8080)")
    serve.add_argument("--database-url", help="SQLAlchemy URL (RLCONFORM_DATABASE_URL)")
    serve.add_argument("--max-concurrent-runs", type=int, help="RLCONFORM_MAX_CONCURRENT_RUNS")
    serve.add_argument("--no-demo", action="store_true", help="do not start the demo target")
    serve.set_defaults(handler=cmd_serve)

    ci = commands.add_parser("ci", help="start a run on a server, wait for it and exit 0/1/2")
    ci.add_argument("--server", required=True, help="base URL of the rlconform service")
    ci.add_argument("--target", required=True, help="target name")
    ci.add_argument("--token", help="API token (or RLCONFORM_API_TOKEN)")
    ci.add_argument("--phase", action="append", help="run only this phase (repeatable)")
    ci.add_argument("--option", action="append", metavar="KEY=VALUE", help="option override for this run")
    ci.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    ci.add_argument("--expected-failures", metavar="FILE", help="file of clause ids, one a line, allowed to fail")
    ci.add_argument("--wait-timeout", type=float, default=1800.0, help="give up waiting after this many seconds")
    ci.set_defaults(handler=cmd_ci)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if argv and argv[0] == "reference-server" and len(argv) >= 2 and not argv[1].startswith("-"):
            args = parser.parse_args(argv[:2])
            return cmd_reference_server(args, argv[2:])
        args = parser.parse_args(argv)
        return args.handler(args)
    except UsageError as exc:
        print(f"rlconform: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`); what it read is all it wanted
        sys.stderr.close()
        return 0
    except OSError as exc:  # e.g. an unwritable --junit/--json path: the harness could not deliver, so 2, not 1
        print(f"rlconform: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
