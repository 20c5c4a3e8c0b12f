"""Schedules: each target's stable offset spreads a fleet over its interval; each slot fires once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import Session

from app import crud
from app.db import make_engine, upgrade_database
from app.models import Run, RunStatus, Schedule, ScheduleIn, TargetCreate
from app.scheduler import ANCHOR, due_slot, fire_due, latest_slot, spread_offset

MINUTE = timedelta(minutes=1)
NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def test_offsets_are_stable_and_a_fleet_is_spread_evenly_over_its_interval() -> None:
    assert spread_offset(1, MINUTE) == spread_offset(1, MINUTE) == timedelta(seconds=37.082)  # same in any process
    offsets = sorted(spread_offset(target_id, MINUTE) for target_id in range(1, 201))
    assert all(timedelta(0) <= offset < MINUTE for offset in offsets)
    gaps = [b - a for a, b in zip(offsets, offsets[1:], strict=False)] + [offsets[0] + MINUTE - offsets[-1]]
    assert max(gaps) < 2 * MINUTE / 200  # no burst: never more than twice the even spacing apart
    assert min(gaps) > MINUTE / 200 / 2  # and never a pile-up
    per_second = [sum(1 for o in offsets if o // timedelta(seconds=1) == second) for second in range(60)]
    assert max(per_second) <= 4  # 200 due per minute arrive at most 4 in any one second


def test_a_targets_slots_sit_on_its_own_grid_one_interval_apart() -> None:
    interval = timedelta(seconds=90)
    slot = latest_slot(7, interval, NOW)
    assert slot <= NOW < slot + interval
    assert (slot - ANCHOR) % interval == spread_offset(7, interval)
    assert latest_slot(7, interval, slot) == slot  # a tick exactly at the slot finds it
    assert latest_slot(7, interval, slot + interval - timedelta(microseconds=1)) == slot
    assert latest_slot(7, interval, NOW + interval) == slot + interval


def test_due_slot_waits_for_the_first_slot_fires_each_once_and_makes_up_a_missed_one_once() -> None:
    schedule = Schedule(target_id=3, interval_seconds=60, created_at=NOW)
    first = latest_slot(3, MINUTE, NOW) + MINUTE
    assert due_slot(schedule, None, first - timedelta(seconds=1)) is None  # a new schedule waits for its slot
    assert due_slot(schedule, None, first) == first
    assert due_slot(schedule, first, first + timedelta(seconds=59)) is None  # once per slot
    assert due_slot(schedule, first, first + MINUTE) == first + MINUTE
    assert due_slot(schedule, first, first + 5 * MINUTE + timedelta(seconds=3)) == first + 5 * MINUTE  # latest only


def test_a_cron_schedule_comes_due_at_the_times_it_names() -> None:
    schedule = Schedule(target_id=3, cron="0 3 * * *", created_at=NOW)
    three = datetime(2025, 6, 2, 3, 0, tzinfo=UTC)
    assert due_slot(schedule, None, three - timedelta(seconds=1)) is None
    assert due_slot(schedule, None, three + timedelta(seconds=2)) == three
    assert due_slot(schedule, three, three + timedelta(hours=1)) is None


def test_fire_due_queues_each_slot_once_and_skips_while_the_previous_run_is_queued(
    database_url: str, fake_kind: str
) -> None:
    upgrade_database(database_url)
    engine = make_engine(database_url)
    with Session(engine) as session:
        target = crud.create_target(
            session, TargetCreate(name="ticking", kind="fake", url="ws://127.0.0.1:9"), allowed_networks=()
        )
        target_id = target.id
        assert target_id is not None
        crud.set_schedule(session, target, ScheduleIn(interval_seconds=60))
    slot = latest_slot(target_id, MINUTE, datetime.now(UTC)) + MINUTE
    assert fire_due(engine, slot - timedelta(seconds=1)) == []
    [run_id] = fire_due(engine, slot)
    assert fire_due(engine, slot + timedelta(seconds=1)) == []  # this slot has its run
    assert fire_due(engine, slot + MINUTE) == []  # the previous run is still queued: skip
    with Session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None and run.trigger == "schedule"
        assert run.scheduled_for is not None and run.scheduled_for.replace(tzinfo=UTC) == slot
        run.status = RunStatus.FINISHED
        session.commit()
    [late] = fire_due(engine, slot + MINUTE + timedelta(seconds=2))  # made up once it is free
    with Session(engine) as session:
        late_run = session.get(Run, late)
        assert late_run is not None and late_run.scheduled_for is not None
        assert late_run.scheduled_for.replace(tzinfo=UTC) == slot + MINUTE
