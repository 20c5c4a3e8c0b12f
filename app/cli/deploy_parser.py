"""The parsers of `rlconform record-deployment` and `can-i-deploy`; their handlers (`app.cli.deploy`) load httpx
only when they run."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import lazy

SERVER_ENV = "RLCONFORM_SERVER"


def _server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", help=f"base URL of the rlconform service (or {SERVER_ENV})")
    parser.add_argument("--token", help="API token for writes (or RLCONFORM_API_TOKEN)")


def add_parsers(commands: Any) -> None:
    record = commands.add_parser(
        "record-deployment", help="record that a target's version is deployed in an environment"
    )
    record.add_argument("target", help="the target's name on the service")
    record.add_argument("--version", required=True, help="the version deployed (a tag, a git SHA)")
    record.add_argument("--env", required=True, metavar="ENVIRONMENT", help="where, e.g. prod-cluster-a")
    record.add_argument(
        "--released", action="store_true", help="kept beside the current version instead of replacing it"
    )
    _server_arguments(record)
    record.set_defaults(handler=lazy("app.cli.deploy:cmd_record_deployment"))

    gone = commands.add_parser(
        "record-undeployment", help="record that a target (or one version of it) no longer runs in an environment"
    )
    gone.add_argument("target", help="the target's name on the service")
    gone.add_argument("--env", required=True, metavar="ENVIRONMENT", help="where it ran")
    gone.add_argument("--version", help="only this version (default: every version recorded there)")
    _server_arguments(gone)
    gone.set_defaults(handler=lazy("app.cli.deploy:cmd_record_undeployment"))

    ask = commands.add_parser(
        "can-i-deploy", help="can a target's version go to an environment: exit 0 yes, 1 no, 2 unknown"
    )
    ask.add_argument("target", help="the target's name on the service")
    ask.add_argument("--version", required=True, help="the version to deploy")
    ask.add_argument("--to", required=True, metavar="ENVIRONMENT", help="the environment to deploy to")
    ask.add_argument(
        "--retry-while-unknown", type=float, default=0.0, metavar="SECONDS", help="ask again while unknown"
    )
    ask.add_argument("--retry-interval", type=float, default=10.0, metavar="SECONDS", help="between retries")
    ask.add_argument("--json", action="store_true", help="print the service's answer as JSON")
    _server_arguments(ask)
    ask.set_defaults(handler=lazy("app.cli.deploy:cmd_can_i_deploy"))
