"""Every broken client of the zoo fails the rllink-client suite on its own clause; the reference passes."""

from __future__ import annotations

import pytest

from checks.rllink_client.reference import ReferenceClient
from tests.checks.client_kinds import assert_fails_its_clause, assert_no_client_is_an_error, assert_passes
from tests.checks.rllink_client.conftest import Grade
from tests.zoo.rllink_client.catalogue import ZOO


def test_zoo_is_big_enough() -> None:
    assert len(ZOO) >= 10


@pytest.mark.parametrize("dialect", ["json", "msgpack"])
async def test_reference_client_passes(grade_client: Grade, dialect: str) -> None:
    passed = assert_passes(await grade_client(ReferenceClient, dialect=dialect))
    assert {"rllink-client.onpolicy.weights", "rllink-client.connect.retries"} <= passed
    assert ("rllink-client.chunk.continuity" in passed) is (dialect == "msgpack")


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_client_fails_its_clause(grade_client: Grade, name: str) -> None:
    entry = ZOO[name]
    report = await grade_client(entry.start, phases=list(entry.phases or ()), dialect=entry.dialect)
    assert_fails_its_clause(report, entry.clause, entry.verdict)


async def test_no_client_is_an_error(grade_client: Grade) -> None:
    assert_no_client_is_an_error(await grade_client(None, connect_deadline=0.3))


def test_config_pickle_reads_back_without_unpickling() -> None:
    from checks.rllink.pickle_scan import scan
    from checks.rllink_client.config_pickle import config_pickle

    facts = scan(config_pickle(4, 2, 48))
    assert facts.fragment_length()[0] == 48
    assert "ray.rllib.algorithms.ppo.ppo.PPOConfig" in facts.globals_named
