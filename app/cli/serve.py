"""`rlconform serve`: the dashboard and API under uvicorn, settings from env overridden by flags."""

from __future__ import annotations

import argparse

import pydantic
import uvicorn

from app.cli.common import UsageError
from app.main import create_app
from app.settings import Settings


def settings_from_args(args: argparse.Namespace) -> Settings:
    """RLCONFORM_* settings with the flags that were given laid over them."""
    overrides = {
        "host": getattr(args, "host", None),
        "port": getattr(args, "port", None),
        "database_url": getattr(args, "database_url", None),
        "max_concurrent_runs": getattr(args, "max_concurrent_runs", None),
    }
    values = {key: value for key, value in overrides.items() if value is not None}
    if getattr(args, "no_demo", False):
        values["demo"] = False
    return Settings(**values)  # init arguments outrank the environment


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"RLCONFORM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"bad setting: {problems}") from None
    from app.db import startup_problem
    from app.logsafe import configure_logging  # credentials never reach a log line

    problem = startup_problem(settings.database_url)  # one line, not the lifespan's traceback
    if problem:
        raise UsageError(problem)
    level = getattr(args, "log_level", "info")
    configure_logging(level)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=level,
        log_config=None,  # keep the levels set above; uvicorn's own config would reset its loggers
        access_log=level == "debug",
    )
    return 0
