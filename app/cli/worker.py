"""`rlconform worker --label L`: execute the runs of some worker labels, beside the cluster they reach.

Only the database URL is needed (RLCONFORM_DATABASE_URL or --database-url).
SIGTERM drains: no new runs are taken, running ones get `shutdown_grace`
seconds to finish, then are handed back to the queue and resumed elsewhere.
"""

from __future__ import annotations

import argparse

from app.cli.common import UsageError, lazy


def cmd_worker(args: argparse.Namespace) -> int:
    import asyncio

    import pydantic

    from app.db import make_engine, startup_problem  # the database stack loads for this command only
    from app.logsafe import configure_logging  # credentials never reach a log line
    from app.names import label_problem
    from app.settings import Settings

    labels = list(dict.fromkeys(args.label or ["default"]))
    problem = next(filter(None, map(label_problem, labels)), None)
    if problem:
        raise UsageError(f"--label {problem}")
    values = {"database_url": args.database_url} if args.database_url else {}
    try:
        settings = Settings(**values)
    except pydantic.ValidationError as exc:
        raise UsageError(f"bad setting: {exc.errors()[0]['msg']}") from None
    if not settings.database_url.startswith("postgresql"):
        raise UsageError("workers need a PostgreSQL database URL (RLCONFORM_DATABASE_URL or --database-url)")
    problem = startup_problem(settings.database_url)  # upgrades the schema, or says in one line why not
    if problem:
        raise UsageError(problem)
    configure_logging()
    from app.worker import run_worker

    asyncio.run(run_worker(settings, make_engine(settings.database_url), labels, args.concurrency))
    return 0


def add_worker_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser("worker", help="execute runs of some worker labels (PostgreSQL)")
    worker.add_argument("--label", action="append", help="worker label to serve (repeatable; default: default)")
    worker.add_argument("--concurrency", type=int, default=4, help="runs executed at once")
    worker.add_argument("--database-url", help="SQLAlchemy URL (RLCONFORM_DATABASE_URL)")
    worker.set_defaults(handler=lazy("app.cli.worker:cmd_worker"))
