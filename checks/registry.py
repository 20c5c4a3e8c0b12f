"""Target kinds: one record each, naming every part of the kind, imported only when asked for.

A record names its suite, reference server, reference client, demo server,
parity script, tap and conforming runs as lazy "module:attribute" references,
or says why the kind has no such part (`Absent`). Nothing here imports a kind's package:
a kind whose optional dependencies are missing stays listed but raises a
clear error when used, so one missing package never hides the others, and
`rlconform` starts without loading every suite.

A kind is named by its full name (`plugrl-server`) or a short name
(`plugrl`). A short name may be shared by a protocol's server and client
kinds; where a command needs one part (a reference client, say) it means
the one kind that has that part.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Protocol

from checks.errors import CheckError

if TYPE_CHECKING:  # the engine (pydantic, asyncio) loads with the first suite, not for `rlconform --help`
    from checks.suite import Suite


@dataclass(frozen=True)
class Absent:
    """A part a kind does not have, and why."""

    reason: str


# A "module:attribute" reference to the part, loaded on first use, or why there is none.
Part = str | Absent

# The parts a record may lack, with how messages name them.
PART_TITLES = {
    "reference_server": "reference server",
    "reference_client": "reference client",
    "demo_server": "demo server",
    "parity_script": "parity script",
    "tap": "tap",
    "conforming": "conforming runs",
}


@dataclass(frozen=True)
class KindRecord:
    """Everything one target kind is made of.

    - `suite`: the kind's `Suite`; its `options_model` is the kind's options.
    - `reference_server`: `main(argv) -> int | None` behind `rlconform reference-server KIND [flags]`.
    - `reference_client`: `main(argv) -> int | None` behind `rlconform reference-client KIND URL [flags]`.
    - `demo_server`: an async `start(host, port)` returning a `RunningServer` (port 0 takes a free one),
      which the service runs and registers as a demo target.
    - `parity_script`: the kind's `checks.parity.script.ParityScript`.
    - `tap`: `build(options) -> checks.tap.run.TapSpec` behind `rlconform tap KIND` and tap targets: what a tap
      of this kind reports and the judges (the suite's own) it runs on copies of the traffic, from the tap's
      `--option key=value` pairs, checked against the kind's options model.
    - `conforming`: the kind's `checks.conforming.ConformingRun`s (a tuple, `RUNS` of `checks/<kind>/conforming.py`):
      the reference peer to start and the shortened options to run the suite with, on which every MUST and
      SHOULD clause is decided `pass` (tests/checks/test_every_clause_decidable.py drives them).
    """

    name: str
    aliases: tuple[str, ...]
    suite: str
    reference_server: Part
    reference_client: Part
    demo_server: Part
    parity_script: Part
    tap: Part = Absent("no tap for this kind yet")
    conforming: Part = Absent("no conforming runs declared")

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def parts(self) -> dict[str, Part]:
        """Every part but the suite, by field name."""
        return {field.name: getattr(self, field.name) for field in fields(self) if field.name in PART_TITLES}

    def has(self, part: str) -> bool:
        return not isinstance(getattr(self, part), Absent)


NO_SERVER_PEER = "a client kind: its reference peer is a client, run by reference-client"
NO_CLIENT_PEER = "a server kind: its reference peer is a server"
NO_DEMO_FOR_CLIENTS = "a client kind: a run listens for the client it grades, so there is no server to register"
NO_PARITY_FOR_CLIENTS = "a client kind: a parity run drives two servers with one script"
# A tap sits before a server: the server kind's tap judges both directions, its client's rules included.
TAP_ON_THE_SERVER = "a client kind: the tap of its server kind judges the client's messages too"


def _record_table(records: Iterable[KindRecord]) -> dict[str, KindRecord]:
    return {record.name: record for record in records}


# Every kind, in the order pages and `rlconform suites` list them. Tests may add one (`tests/app/fakesuite.py`).
RECORDS: dict[str, KindRecord] = _record_table(
    (
        KindRecord(
            name="plugrl-server",
            aliases=("plugrl",),
            suite="checks.plugrl.suite:SUITE",
            reference_server="checks.plugrl.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.plugrl.reference:start_reference_server",
            parity_script="checks.parity.script_plugrl:SCRIPT",
            tap="checks.tap.kinds:plugrl_tap",
            conforming="checks.plugrl.conforming:RUNS",
        ),
        KindRecord(
            name="openenv",
            aliases=(),
            suite="checks.openenv.suite:SUITE",
            reference_server="checks.openenv.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.openenv.reference:start_demo_server",
            parity_script="checks.parity.script_openenv:SCRIPT",
            tap="checks.tap.kinds:openenv_tap",
            conforming="checks.openenv.conforming:RUNS",
        ),
        KindRecord(
            name="rlmesh",
            aliases=(),
            suite="checks.rlmesh.suite:SUITE",
            reference_server="checks.rlmesh.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.rlmesh.reference:start_demo_server",
            parity_script="checks.parity.script_rlmesh:SCRIPT",
            conforming="checks.rlmesh.conforming:RUNS",
        ),
        KindRecord(
            name="rllink",
            aliases=(),
            suite="checks.rllink.suite:SUITE",
            reference_server="checks.rllink.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.rllink.reference:start_demo_server",
            parity_script=Absent("none written for RLlink yet"),
            tap="checks.tap.kinds:rllink_tap",
            conforming="checks.rllink.conforming:RUNS",
        ),
        KindRecord(
            name="openai-chat",
            aliases=("openai",),
            suite="checks.openai.suite:SUITE",
            reference_server="checks.openai.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.openai.reference:start_reference_server",
            parity_script="checks.parity.script_openai:SCRIPT",
            tap="checks.tap.kinds:openai_tap",
            conforming="checks.openai.conforming:RUNS",
        ),
        KindRecord(
            name="session-server",
            aliases=("session",),
            suite="checks.session.suite:SUITE",
            reference_server="checks.session.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.session.reference:start_reference_server",
            parity_script="checks.parity.script_session:SCRIPT",
            tap="checks.tap.kinds:session_tap",
            conforming="checks.session.conforming:RUNS",
        ),
        KindRecord(
            name="ors",
            aliases=(),
            suite="checks.ors.suite:SUITE",
            reference_server="checks.ors.reference:main",
            reference_client=Absent(NO_CLIENT_PEER),
            demo_server="checks.ors.reference:start_reference_server",
            parity_script="checks.parity.script_ors:SCRIPT",
            tap="checks.tap.kinds:ors_tap",
            conforming="checks.ors.conforming:RUNS",
        ),
        KindRecord(
            name="plugrl-client",
            aliases=("plugrl",),
            suite="checks.plugrl_client.suite:SUITE",
            reference_server=Absent(NO_SERVER_PEER),
            reference_client="checks.plugrl_client.reference:main",
            demo_server=Absent(NO_DEMO_FOR_CLIENTS),
            parity_script=Absent(NO_PARITY_FOR_CLIENTS),
            tap=Absent(TAP_ON_THE_SERVER),
            conforming="checks.plugrl_client.conforming:RUNS",
        ),
        KindRecord(
            name="rllink-client",
            aliases=("rllink",),
            suite="checks.rllink_client.suite:SUITE",
            reference_server=Absent(NO_SERVER_PEER),
            reference_client="checks.rllink_client.reference:main",
            demo_server=Absent(NO_DEMO_FOR_CLIENTS),
            parity_script=Absent(NO_PARITY_FOR_CLIENTS),
            tap=Absent(TAP_ON_THE_SERVER),
            conforming="checks.rllink_client.conforming:RUNS",
        ),
    )
)


def load(reference: str) -> object:
    """The object a "module:attribute" reference names, importing its module (ImportError: it cannot be loaded)."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{reference!r} is not a 'module:attribute' reference")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(f"cannot load {reference}: {exc}", name=exc.name) from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ImportError(f"cannot load {reference}: {module_name} has no {attribute!r}", name=module_name) from None


def kind_names() -> list[str]:
    """The full name of every kind, in listing order."""
    return list(RECORDS)


def kinds_with(part: str) -> list[str]:
    """The full names of the kinds that have `part` (a `KindRecord` field name)."""
    return [record.name for record in RECORDS.values() if record.has(part)]


class UnknownKind(CheckError, KeyError):
    """No kind goes by this name."""

    def __str__(self) -> str:
        return f"unknown target kind {self.args[0]!r}; known kinds: {', '.join(map(spelled, kind_names()))}"


class MissingPart(CheckError, LookupError):
    """The kind exists but has no such part (no reference server, say); says why and which kinds have one."""

    def __init__(self, kind: str, part: str, reason: str) -> None:
        self.kind, self.part, self.reason = kind, part, reason
        title = PART_TITLES.get(part, part)
        having = ", ".join(spelled(name) for name in kinds_with(part))
        super().__init__(f"{kind} has no {title} ({reason}); kinds with one: {having}")


class AmbiguousKind(CheckError, LookupError):
    """A short name shared by several kinds, where the command could take either."""

    def __init__(self, name: str, kinds: list[str]) -> None:
        self.name, self.kinds = name, kinds
        super().__init__(f"{name!r} is short for {' and '.join(kinds)}; name one of them")


def spelled(kind: str) -> str:
    """A kind's name with its short names, for usage messages: `plugrl-server (plugrl)`."""
    aliases = RECORDS[kind].aliases
    return f"{kind} ({', '.join(aliases)})" if aliases else kind


def find_record(name: str, part: str | None = None) -> KindRecord:
    """The record `name` means, for a command that needs `part` (a `KindRecord` field name) if given.

    Among the kinds that go by `name` (and have `part`), the one of that full
    name wins, else the one with that short name. Raises UnknownKind,
    MissingPart or AmbiguousKind.
    """
    candidates = [record for record in RECORDS.values() if name in record.names()]
    if not candidates:
        raise UnknownKind(name)
    if part is not None:
        lacking = next((record for record in candidates if record.name == name), candidates[0])
        candidates = [record for record in candidates if record.has(part)]
        if not candidates:
            absent = getattr(lacking, part)
            raise MissingPart(lacking.name, part, absent.reason)
    exact = [record for record in candidates if record.name == name]
    if exact:
        return exact[0]
    if len(candidates) > 1:
        raise AmbiguousKind(name, [record.name for record in candidates])
    return candidates[0]


def load_part(kind: str, part: str) -> object:
    """The loaded `part` of `kind` (MissingPart when it has none, ImportError when it cannot be loaded)."""
    record = find_record(kind, part)
    reference: Part = getattr(record, part)
    if isinstance(reference, Absent):  # find_record returns a record that has the part; this is for the type
        raise MissingPart(record.name, part, reference.reason)
    return load(reference)


@cache
def get_suite(kind: str) -> Suite:
    from checks.suite import Suite

    record = find_record(kind)
    suite = load(record.suite)
    if not isinstance(suite, Suite):
        raise TypeError(f"{record.suite} is not a Suite")
    return suite


def find_suite(kind: str) -> Suite | None:
    """The suite of `kind`, or None when the kind is unknown or its optional dependencies are missing."""
    try:
        return get_suite(kind)
    except (LookupError, ImportError):
        return None


# A reference peer's entry point: its command-line arguments in, an exit code (None: 0) out.
PeerMain = Callable[[list[str]], int | None]


def peer_main(kind: str, part: str) -> PeerMain:
    """The `main(argv)` of `kind`'s reference server or client (`part`: "reference_server" or "reference_client")."""
    main = load_part(kind, part)
    if not callable(main):
        raise TypeError(f"the {PART_TITLES[part]} of {kind} is not callable")
    return main


class RunningServer(Protocol):
    """An in-process server started by a kind's `demo_server`."""

    @property
    def url(self) -> str: ...

    async def close(self) -> None: ...


def demo_kinds() -> list[str]:
    """The kinds whose in-process reference server the service runs as a demo target."""
    return kinds_with("demo_server")


async def start_demo_server(kind: str, host: str = "127.0.0.1") -> RunningServer:
    """Start the demo server of `kind` on a free port of `host` (ImportError: its package is missing)."""
    start = load_part(kind, "demo_server")
    if not callable(start):
        raise TypeError(f"the demo server of {kind} is not callable")
    server: RunningServer = await start(host, 0)
    return server
