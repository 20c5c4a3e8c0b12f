"""A tiny suite for service tests: no network, clauses decided on a timer, outcomes set by options.

Registered as kind `fake` by the `fake_kind` fixture (tests/app/conftest.py)
or, in a subprocess, by `register()`.
"""

from __future__ import annotations

import asyncio

from pydantic import Field, SecretStr

from checks.core import Catalogue, Phase, PhaseContext, Suite, SuiteOptions
from checks.registry import Absent, KindRecord

CATALOGUE = Catalogue()
CATALOGUE.must("fake.1.greets", "The target greets first.")
CATALOGUE.must("fake.1.names-itself", "The greeting names the target.")
CATALOGUE.must("fake.2.echoes", "The target echoes what it is sent.")
CATALOGUE.should("fake.2.fast", "The echo comes back quickly.")
CATALOGUE.must("fake.2.orders", "Echoes keep the order they were sent in.")
CATALOGUE.must("fake.3.stops", "The target closes cleanly when told to stop.")
# An old id of fake.2.orders, for tests of ids that an alias maps to a current clause.
CATALOGUE.alias("fake.2.in-order", "fake.2.orders")


class FakeOptions(SuiteOptions):
    delay: float = Field(0.0, ge=0, le=60, description="Seconds before each clause is decided.")
    fail: list[str] = Field(default_factory=list, description="Clause ids to decide as not met.")
    hang_in: str = Field("", description="A phase that never returns, to exercise its deadline.")
    token: SecretStr | None = Field(None, description="A credential the target would need.")
    reply_codepoints: list[int] = Field(
        default_factory=list,
        description="Code points of a text the fake target puts in its replies and close reason, "
        "to send what no option may hold (NUL, a lone surrogate).",
    )


Ctx = PhaseContext[FakeOptions, None]


async def _decide(ctx: Ctx, phase: str, clause_ids: tuple[str, ...]) -> None:
    options = ctx.options
    transcript = ctx.report.transcript(f"{phase} connection to {ctx.url}")
    secret = options.token.get_secret_value() if options.token else ""
    transcript.sent("text", 5, f"hello token={secret}" if secret else "hello")
    if options.hang_in == phase:
        await asyncio.Event().wait()
    said = "".join(map(chr, options.reply_codepoints))
    for clause_id in clause_ids:
        await asyncio.sleep(options.delay)
        transcript.received("text", 2, f"reply for {clause_id}{said}")
        ctx.report.check(
            clause_id not in options.fail,
            clause_id,
            expected="a proper reply",
            actual=f"a bad reply{said}",
            evidence=transcript,
        )
    transcript.closed(1000, f"bye{said}", "checker")


def _phase(name: str, clause_ids: tuple[str, ...], default: bool = True) -> Phase:
    async def run(ctx: Ctx) -> None:
        await _decide(ctx, name, clause_ids)

    return Phase(name, run, clause_ids, f"the {name} phase", default=default, budget=2.0)


SUITE = Suite(
    kind="fake",
    title="Fake protocol for service tests",
    url_schemes=("ws",),
    options_model=FakeOptions,
    phases=(
        _phase("hello", ("fake.1.greets", "fake.1.names-itself")),
        _phase("echo", ("fake.2.echoes", "fake.2.fast", "fake.2.orders")),
        _phase("stop", ("fake.3.stops",), default=False),
    ),
    catalogue=CATALOGUE,
    url_example="ws://127.0.0.1:9000",
)


def suite_only_record(name: str, suite: str) -> KindRecord:
    """A record for a test kind: a suite and nothing else."""
    absent = Absent("a test kind")
    return KindRecord(name, (), suite, absent, absent, absent, absent)


RECORD = suite_only_record("fake", "tests.app.fakesuite:SUITE")


def register() -> None:
    from checks.registry import RECORDS

    RECORDS["fake"] = RECORD
