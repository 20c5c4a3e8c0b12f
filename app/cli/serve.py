"""`rlconform serve`: the dashboard and API under uvicorn, settings from env overridden by flags."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket

import pydantic
import uvicorn

from app.cli.common import UsageError
from app.main import create_app
from app.settings import Settings
from checks.asgi_server import listening_socket

log = logging.getLogger("rlconform")
STARTUP_FAILURE = 3  # uvicorn.run's exit status when the application did not start


def settings_from_args(args: argparse.Namespace) -> Settings:
    """RLCONFORM_* settings with the flags that were given laid over them."""
    overrides = {
        "host": getattr(args, "host", None),
        "port": getattr(args, "port", None),
        "database_url": getattr(args, "database_url", None),
        "max_concurrent_runs": getattr(args, "max_concurrent_runs", None),
        "run_processes": getattr(args, "run_processes", None),
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
    # gRPC's fork handlers (the rlmesh demo server runs gRPC threads) print "skipping fork() handlers" each
    # time the service forks to start a reference client; the child execs at once and needs none of them.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    # Bound before anything starts: a taken port is one line, with no demo servers started and stopped again.
    sock = bind(settings.host, settings.port)
    level = getattr(args, "log_level", "info")
    configure_logging(level)
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=level,
        log_config=None,  # keep the levels set above; uvicorn's own config would reset its loggers
        access_log=level == "debug",
    )
    return serve_until_stopped(uvicorn.Server(config), sock)


def bind(host: str, port: int) -> socket.socket:
    """The service's listening socket; UsageError saying so when the address cannot be had."""
    try:
        return listening_socket(host, port)
    except OSError as exc:
        why = "already in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        shown = f"[{host}]" if ":" in host else host
        raise UsageError(
            f"cannot listen on {shown}:{port}: {why}; stop what holds it or choose another (--port, RLCONFORM_PORT)"
        ) from None


def serve_until_stopped(server: uvicorn.Server, sock: socket.socket) -> int:
    """Serve until SIGTERM or SIGINT, then shut down and return 0 (3 when start-up failed).

    uvicorn re-raises the signal it stopped on once it has shut down, which with the default handler
    ends the process with 143 (SIGTERM) and a process manager reports a failure; the handler set here
    takes that re-raised signal instead and the stop is reported in one line.
    """
    stopped_by: list[str] = []

    def stop(signum: int, _frame: object) -> None:
        stopped_by.append(signal.Signals(signum).name)
        server.should_exit = True  # a signal before uvicorn takes over its handlers stops it too

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    if not server.started:
        return STARTUP_FAILURE
    log.info("rlconform stopped (%s): shut down cleanly", stopped_by[-1] if stopped_by else "exit")
    return 0
