"""Taps: register a target that is a tap, read a tap run's live counters, and take the windows a
standalone `rlconform tap --post` sends."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from app import crud, tap_runs
from app.deps import WRITE, RunDep, SessionDep, SettingsDep, TargetDep
from app.models_tap import TapTargetCreate, TapTargetPublic, TapWindow, TapWindowPost, TapWindowPublic

router = APIRouter(tags=["taps"])


def _window_public(window: TapWindow) -> TapWindowPublic:
    return TapWindowPublic.model_validate(window.model_dump())


@router.post("/taps", dependencies=[WRITE], status_code=status.HTTP_201_CREATED, summary="Register a tap target")
def create_tap(data: TapTargetCreate, session: SessionDep, settings: SettingsDep) -> TapTargetPublic:
    """A target whose runs host a tap: clients connect to it, it forwards to `upstream` and judges a copy.

    `tap.listen` (HOST:PORT) must lie within the executing worker's RLCONFORM_LISTEN_HOST / _PORTS;
    empty takes the first free port there. Start a tap run as any run (`POST /targets/{name}/runs`);
    cancelling it stops the tap and keeps the last window's verdicts.
    """
    target, tap = tap_runs.create_tap_target(session, data, settings.allowed_networks)
    return TapTargetPublic(target=crud.target_public(target), tap=tap_runs.tap_settings(tap))


@router.get("/taps/{name}", summary="One tap target")
def read_tap(target: TargetDep, session: SessionDep) -> TapTargetPublic:
    tap = tap_runs.target_tap(session, target)
    if tap is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{target.name} is not a tap target")
    return TapTargetPublic(target=crud.target_public(target), tap=tap_runs.tap_settings(tap))


@router.post(
    "/targets/{name}/tap-windows",
    dependencies=[WRITE],
    summary="Store a window a standalone tap watched, as a tap run of the target",
)
def post_window(data: TapWindowPost, target: TargetDep, session: SessionDep, settings: SettingsDep) -> TapWindowPublic:
    """Posts of one window (`session_id`, `number`) update its run until one says `closed`; the run then
    ends with the window's outcome. A closed window posted again changes nothing (a tap re-sending)."""
    try:
        run = tap_runs.receive_window(
            session, target, data, (settings.retention_runs, settings.retention_whole_passing)
        )
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_ENTITY, str(exc)) from None
    window = session.get(TapWindow, run.id)
    assert window is not None
    return _window_public(window)


@router.get("/runs/{run_id}/tap", summary="A tap run's counters as last written")
def read_window(run: RunDep, session: SessionDep) -> TapWindowPublic:
    window = tap_runs.run_window(session, run)
    if window is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {run.id} is no tap run")
    return _window_public(window)
