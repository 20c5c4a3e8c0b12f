"""The FastAPI application: schema upgrade, recovery, runner, scheduler and demo in one lifespan."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import webhooks
from app.api import deploy as deploy_api
from app.api import public_router
from app.api import router as api_router
from app.api_docs import add_docs
from app.auth_limit import FailureLimit
from app.crud import TargetInvalid
from app.db import full_message, is_disk_full, make_engine, upgrade_database
from app.demo import close_demo, start_demo
from app.dispatch import defer_run
from app.hostcheck import allowed_hosts
from app.metrics import Metrics
from app.models import Run, stored_id
from app.request_guard import RequestGuard
from app.runner import Runner, recover_interrupted, runner_options
from app.scheduler import Scheduler
from app.settings import Settings, get_settings
from app.textsafe import storable
from app.web import deploy_pages
from app.web import router as web_router
from app.web.pages import error_page, not_a_page, wants_page
from app.web.reference_client import ReferenceClients
from checks.core import HARNESS_VERSION

if TYPE_CHECKING:
    from app.worker import WorkerBackend  # imported when used: it needs procrastinate

log = logging.getLogger("rlconform")

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def _run_backend(
    settings: Settings, engine: Engine, metrics: Metrics, clients: ReferenceClients
) -> Runner | WorkerBackend:
    """What executes the runs: procrastinate workers (PostgreSQL), or the embedded runner and its run processes."""
    if settings.uses_workers:
        from app.worker import WorkerBackend

        return WorkerBackend(settings, engine, metrics)
    on_end = functools.partial(_run_ended, settings, clients)
    if settings.run_processes:
        from app.run_processes import ProcessRunner

        level = logging.getLevelName(logging.getLogger("rlconform").getEffectiveLevel()).lower()
        # A run process ends its runs itself: it queues their webhooks; the reference client is stopped here.
        runner: Runner = ProcessRunner(
            engine, settings, metrics=metrics, on_end=on_end, on_done=clients.run_ended, log_level=level
        )
    else:
        runner = Runner(engine, **runner_options(settings), metrics=metrics, on_end=on_end)
    runner.executor.tap_flush_seconds = settings.tap_flush_seconds
    runner.executor.tap_judging = settings.tap_judging
    return runner


def _run_ended(settings: Settings, clients: ReferenceClients, session: Session, run: Run) -> None:
    """Inside the transaction ending a run: its webhooks are queued and its reference client is stopped.

    In workers mode the workers end runs and the service finds out by looking (`ReferenceClients`).
    """
    webhooks.enqueue_deliveries(session, run, settings.public_url)
    clients.run_ended(stored_id(run))


# How much of a refused value a 422 echoes: enough to recognise it, never a pasted megabyte.
ECHOED_INPUT_CHARS = 200


def capped_inputs(errors: list[Any]) -> list[Any]:
    """Validation errors whose echoed string `input` is cut to ECHOED_INPUT_CHARS, saying how long it was."""
    capped = []
    for error in errors:
        value = error.get("input") if isinstance(error, dict) else None
        if isinstance(value, str) and len(value) > ECHOED_INPUT_CHARS:
            error = {**error, "input": f"{value[:ECHOED_INPUT_CHARS]}… ({len(value)} characters in all)"}
        capped.append(error)
    return capped


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Request, exc: RequestValidationError) -> Response:
        missing = not_a_page(request, exc)
        if missing is not None:  # /runs/abc in a browser: no such run, as a page
            return error_page(request, HTTPException(status.HTTP_404_NOT_FOUND, missing))
        # As FastAPI's own handler, but an echoed input holding a lone surrogate must not break the JSON.
        return JSONResponse({"detail": storable(capped_inputs(jsonable_encoder(exc.errors())))}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _no_route(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == status.HTTP_404_NOT_FOUND and wants_page(request):  # a path no route serves
            return error_page(request, HTTPException(exc.status_code, f"no page at {request.url.path[:200]}"))
        return await http_exception_handler(request, exc)

    @app.exception_handler(SQLAlchemyError)
    async def _database_error(_request: Request, exc: SQLAlchemyError) -> JSONResponse:
        if is_disk_full(exc):  # a condition to fix where the database lives, not a bug: say so, and retry later
            return JSONResponse({"detail": full_message(exc)}, status_code=503, headers={"Retry-After": "30"})
        log.error("a database error answered 500", exc_info=exc)
        return JSONResponse({"detail": "Internal Server Error"}, status_code=500)

    @app.exception_handler(TargetInvalid)
    async def _target_invalid(_request: Request, exc: TargetInvalid) -> JSONResponse:
        detail = [{"loc": ["body", *e["loc"]], "msg": e["msg"], "type": "value_error"} for e in exc.errors]
        return JSONResponse({"detail": detail}, status_code=exc.status_code)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    engine = make_engine(settings.database_url)
    metrics = Metrics()
    clients = ReferenceClients(engine)
    runner = _run_backend(settings, engine, metrics, clients)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(upgrade_database, settings.database_url)
        scheduler: Scheduler | None = None
        if isinstance(runner, Runner):
            interrupted = await asyncio.to_thread(recover_interrupted, engine)
            if interrupted:
                log.warning("%d run(s) left running by a previous process are now interrupted", interrupted)
            runner.start()
            scheduler = Scheduler(engine, settings, runner.wake)
            scheduler.start()
        else:
            await runner.start()
        demo = {}
        if settings.demo:
            try:
                demo = await start_demo(engine)
            except Exception:
                log.exception("the demo targets could not start")
        for server in demo.values():
            runner.allow_own(server.url)
        app.state.demo = demo or None
        # What start-up loaded (modules, suites, templates) lives as long as the process: frozen, it is
        # not walked by the full collections a large page's allocations trigger (300 ms on a fleet's overview).
        # Before the line below, which says the dashboard is ready to answer.
        gc.collect()
        gc.freeze()
        log.info("rlconform dashboard at http://%s:%s", _url_host(settings.host), settings.port)
        try:
            yield
        finally:
            gc.unfreeze()  # what this app held may be garbage once it stops (tests start many apps in one process)
            if scheduler is not None:
                await scheduler.stop()
            await runner.stop()
            await clients.close()
            await close_demo(demo)

    app = FastAPI(
        title="rlconform",
        version=HARNESS_VERSION,
        description="Conformance runs against RL wire-protocol servers: targets, runs, clause results, evidence.",
        lifespan=lifespan,
        docs_url=None,  # served by add_docs, from local assets
        redoc_url=None,
    )
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts(settings.allowed_hosts, settings.host))
    app.state.settings = settings
    app.state.engine = engine
    app.state.runner = runner
    app.state.requeue = defer_run if settings.uses_workers else None
    app.state.metrics = metrics
    app.state.reference_clients = clients
    app.state.auth_limit = FailureLimit(settings.auth_failures_per_minute)
    _add_error_handlers(app)
    add_docs(app)
    app.include_router(api_router)
    app.include_router(deploy_api.router)
    app.include_router(public_router)
    app.include_router(web_router)
    app.include_router(deploy_pages.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    return app
