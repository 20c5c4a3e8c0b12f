"""`rlconform`: check a target, list suites, run a reference server, serve the dashboard, drive CI.

Exit codes everywhere: 0 pass, 1 conformance failure, 2 harness or infrastructure error.
"""

from __future__ import annotations

import argparse
import sys

from app.cli.common import UsageError, lazy, run_peer
from app.cli.deploy_parser import add_parsers as add_deploy_parsers
from app.cli.parity import add_parser as add_parity_parser
from app.cli.tap_parser import register as register_tap
from app.cli.worker import add_worker_parser
from checks.registry import kinds_with, spelled

__all__ = ["build_parser", "main"]

DESCRIPTION = "check a target, list suites, run a reference server, serve the dashboard, drive CI"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlconform", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="run a check suite against a target and print the report")
    check.add_argument("kind", help="target kind, e.g. plugrl-server, openenv, rlmesh (or a short name: openai)")
    check.add_argument(
        "url", nargs="?", default="", help="target address, e.g. ws://127.0.0.1:8000 (none for client kinds)"
    )
    check.add_argument("--listen", metavar="HOST:PORT", help="client kinds: where to listen (port 0: any free port)")
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
    check.add_argument("--quiet", action="store_true", help="do not print phase progress nor skipped clauses")
    check.set_defaults(handler=lazy("app.cli.check:cmd_check"))

    suites = commands.add_parser("suites", help="list kinds, phases, clauses and options")
    suites.add_argument("kind", nargs="*", help="only these kinds (full or short names; default: every kind)")
    suites.add_argument("--json", action="store_true", help="as JSON, with each options JSON schema")
    suites.set_defaults(handler=lazy("app.cli.suites:cmd_suites"))

    reference = commands.add_parser(
        "reference-server", help="run a conforming reference server (flags after KIND go to it)"
    )
    having = ", ".join(spelled(kind) for kind in kinds_with("reference_server"))
    reference.add_argument("kind", help=f"one of: {having}")
    reference.set_defaults(handler=None)

    reference_client = commands.add_parser(
        "reference-client", help="run a conforming client against a listen-mode run (flags after KIND go to it)"
    )
    having = ", ".join(spelled(kind) for kind in kinds_with("reference_client"))
    reference_client.add_argument("kind", help=f"one of: {having}")
    reference_client.add_argument("rest", nargs=argparse.REMAINDER, help="URL and the client's own flags")
    reference_client.set_defaults(handler=lazy("app.cli.reference_client:cmd_reference_client"))
    register_tap(commands)

    _add_serve_parser(commands)
    _add_ci_parser(commands)
    add_parity_parser(commands)
    add_deploy_parsers(commands)
    add_worker_parser(commands)
    return parser


def _add_serve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serving = commands.add_parser("serve", help="run the dashboard and API")
    serving.add_argument("--host", help="bind address (RLCONFORM_HOST)")
    serving.add_argument("--port", type=int, help="port (RLCONFORM_PORT, default 8080)")
    serving.add_argument("--database-url", help="SQLAlchemy URL (RLCONFORM_DATABASE_URL)")
    serving.add_argument("--max-concurrent-runs", type=int, help="RLCONFORM_MAX_CONCURRENT_RUNS")
    serving.add_argument(
        "--run-processes", type=int, help="RLCONFORM_RUN_PROCESSES: processes executing runs beside the web one"
    )
    serving.add_argument("--no-demo", action="store_true", help="do not start the demo target")
    serving.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),  # app.logsafe.LOG_LEVELS, without importing it
        default="info",
        help="info: the service's own messages; debug adds every request, the service's and its clients'",
    )
    serving.set_defaults(handler=lazy("app.cli.serve:cmd_serve"))


def _add_ci_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ci = commands.add_parser("ci", help="start a run on a server, wait for it and exit 0/1/2")
    ci.add_argument("--server", required=True, help="base URL of the rlconform service")
    ci.add_argument("--target", help="target name (or --parity)")
    ci.add_argument(
        "--parity", nargs="+", metavar="TARGET", help="a parity run: TARGET_A TARGET_B, or TARGET_A with --golden"
    )
    ci.add_argument("--golden", metavar="NAME", help="with --parity TARGET_A: compare it with this stored golden")
    ci.add_argument("--token", help="API token (or RLCONFORM_API_TOKEN)")
    ci.add_argument("--phase", action="append", help="run only this phase (repeatable)")
    ci.add_argument("--option", action="append", metavar="KEY=VALUE", help="option override for this run")
    ci.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    ci.add_argument("--expected-failures", metavar="FILE", help="file of clause ids, one a line, allowed to fail")
    ci.add_argument("--verbose", action="store_true", help="list every clause, not only what failed or errored")
    ci.add_argument("--wait-timeout", type=float, default=1800.0, help="give up waiting after this many seconds")
    ci.add_argument("--version", help="the target's version this run checks (a tag, a git SHA), for can-i-deploy")
    ci.set_defaults(handler=lazy("app.cli.ci:cmd_ci"))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if argv and argv[0] == "reference-server" and len(argv) >= 2 and not argv[1].startswith("-"):
            args = parser.parse_args(argv[:2])
            return run_peer(args.kind, "reference_server", argv[2:])  # the peer imports what it needs
        args = parser.parse_args(argv)
        exit_code: int = args.handler(args)
        return exit_code
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
