"""The `tap` subcommand's arguments, apart from its code so that building the CLI's parser imports no tap."""

from __future__ import annotations

import argparse

from app.cli.common import lazy


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tap = commands.add_parser("tap", help="forward a real client's traffic to its server unchanged and judge a copy")
    tap.add_argument("kind", help="the upstream's kind, e.g. plugrl-server or openai-chat (or a short name)")
    tap.add_argument("--listen", required=True, metavar="HOST:PORT", help="where the client connects (port 0: free)")
    tap.add_argument("--upstream", required=True, metavar="URL", help="the real server, e.g. ws://10.0.0.5:8000")
    tap.add_argument("--duration", type=float, help="stop after this many seconds")
    tap.add_argument("--max-messages", type=int, help="stop after this many messages")
    tap.add_argument("--roll-seconds", type=float, help="start a new window after this many seconds")
    tap.add_argument("--roll-messages", type=int, help="start a new window after this many messages")
    tap.add_argument("--option", action="append", metavar="KEY=VALUE", help="a tap option, e.g. preset=miles-session")
    tap.add_argument("--strict", action="store_true", help="a SHOULD missed fails too (the strict gate)")
    tap.add_argument("--json", metavar="FILE", help="also write every window as JSON")
    tap.add_argument("--quiet", action="store_true", help="leave out clauses the traffic did not decide")
    tap.add_argument("--post", metavar="SERVICE_URL", help="also send each window to this service as a tap run")
    tap.add_argument("--target", metavar="NAME", help="the service's target the windows are runs of (with --post)")
    tap.add_argument("--token", help="the service's API token (default: RLCONFORM_API_TOKEN)")
    tap.add_argument("--post-every", type=float, default=5.0, metavar="SECONDS", help="how often to post (default 5)")
    tap.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="the relay's event loop (default auto: uvloop when installed, as uvicorn picks)",
    )
    tap.set_defaults(handler=lazy("app.cli.tap:cmd_tap"))
