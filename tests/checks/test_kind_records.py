"""Every kind has one record naming each of its parts, or saying why it has none; the CLI takes both spellings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from checks.core import Suite, SuiteOptions
from checks.parity.scripts import get_script
from checks.registry import (
    PART_TITLES,
    RECORDS,
    Absent,
    AmbiguousKind,
    KindRecord,
    MissingPart,
    UnknownKind,
    find_record,
    get_suite,
    kind_names,
    load,
)

ROOT = Path(__file__).resolve().parents[2]
EVERY_KIND = {
    "plugrl-server",
    "openenv",
    "rlmesh",
    "rllink",
    "openai-chat",
    "session-server",
    "ors",
    "plugrl-client",
    "rllink-client",
}
# What the short names meant before the records: (command part, name) -> entry point.
OLD_SPELLINGS = {
    ("reference_server", "plugrl"): "checks.plugrl.reference:main",
    ("reference_server", "rllink"): "checks.rllink.reference:main",
    ("reference_server", "openai"): "checks.openai.reference:main",
    ("reference_server", "session"): "checks.session.reference:main",
    ("reference_client", "plugrl"): "checks.plugrl_client.reference:main",
    ("reference_client", "rllink"): "checks.rllink_client.reference:main",
}


def problems(record: KindRecord) -> list[str]:
    """What is wrong with a record as declared: a part neither named nor absent with a reason."""
    found = []
    if not isinstance(record.suite, str) or ":" not in record.suite:
        found.append(f"{record.name}: suite is not a 'module:attribute' reference")
    for part, value in record.parts().items():
        if isinstance(value, Absent):
            if not value.reason.strip():
                found.append(f"{record.name}: {part} is absent without a reason")
        elif not isinstance(value, str) or ":" not in value:
            found.append(f"{record.name}: {part} is neither a 'module:attribute' reference nor Absent(reason)")
    return found


def loaded(reference: str) -> object:
    try:
        return load(reference)
    except ImportError as exc:
        if exc.name and not exc.name.startswith(("checks", "app")):  # an optional package missing on this machine
            pytest.skip(f"{reference}: {exc}")
        raise


def test_every_kind_has_exactly_one_record() -> None:
    assert set(kind_names()) == EVERY_KIND
    for name, record in RECORDS.items():
        assert record.name == name
    assert set(PART_TITLES) == set(KindRecord.__dataclass_fields__) - {"name", "aliases", "suite"}


@pytest.mark.parametrize("kind", sorted(EVERY_KIND))
def test_every_part_is_named_or_absent_with_a_reason(kind: str) -> None:
    assert problems(RECORDS[kind]) == []


def test_a_part_absent_without_a_reason_is_caught() -> None:
    silent = KindRecord("x", (), "tests.app.fakesuite:SUITE", "a:b", Absent(" "), Absent("why"), "c:d")
    assert problems(silent) == ["x: reference_client is absent without a reason"]


@pytest.mark.parametrize("kind", sorted(EVERY_KIND))
def test_every_named_part_loads_as_what_it_claims(kind: str) -> None:
    record = RECORDS[kind]
    suite = loaded(record.suite)
    assert isinstance(suite, Suite)
    assert suite.kind == kind
    assert issubclass(suite.options_model, SuiteOptions)
    assert get_suite(kind) is suite
    for part in ("reference_server", "reference_client", "demo_server"):
        reference = getattr(record, part)
        if isinstance(reference, str):
            assert callable(loaded(reference)), f"{kind} {part}"
    if isinstance(record.parity_script, str):
        loaded(record.parity_script)
        assert get_script(kind).kind == kind
    # A listen-mode suite grades a client, so its reference peer is a client; any other kind's is a server.
    assert not (record.has("reference_server") and record.has("reference_client"))
    if suite.listen:
        assert not record.has("demo_server") and not record.has("parity_script")


def test_short_names_still_mean_what_they_meant() -> None:
    for (part, name), entry in OLD_SPELLINGS.items():
        assert getattr(find_record(name, part), part) == entry, (part, name)
    assert find_record("openai").name == "openai-chat"
    assert find_record("session").name == "session-server"
    assert find_record("rllink").name == "rllink"  # a full name wins over rllink-client's short name
    with pytest.raises(AmbiguousKind, match="plugrl-server and plugrl-client"):
        find_record("plugrl")


def test_an_unknown_name_lists_every_kind() -> None:
    with pytest.raises(UnknownKind) as caught:
        find_record("plugrl-srever")
    message = str(caught.value)
    assert "'plugrl-srever'" in message
    for kind in EVERY_KIND:
        assert kind in message
    assert "openai-chat (openai)" in message


def test_a_missing_part_says_why_and_who_has_one() -> None:
    with pytest.raises(MissingPart) as caught:
        find_record("plugrl-client", "reference_server")
    assert "a client kind" in str(caught.value) and "plugrl-server (plugrl)" in str(caught.value)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["reference-server", "nope"], "unknown target kind 'nope'; known kinds: plugrl-server (plugrl)"),
        (["reference-client", "plugrl-server", "ws://127.0.0.1:1"], "plugrl-server has no reference client"),
        (["reference-server", "rllink-client"], "rllink-client has no reference server"),
        (["check", "plugrl", "ws://127.0.0.1:1"], "'plugrl' is short for plugrl-server and plugrl-client"),
        (["parity", "rllink", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2"], "rllink has no parity script"),
        (["suites", "nope"], "unknown target kind 'nope'"),
    ],
)
def test_the_cli_refuses_a_name_it_cannot_use(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_suites_takes_full_and_short_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "openai", "session-server"]) == 0
    listed = [line.split(":")[0] for line in capsys.readouterr().out.splitlines() if line and not line[0].isspace()]
    assert listed == ["openai-chat", "session-server"]


# Each peer's own parser names flags only that peer has, so its `--help` shows which peer a name reached.
PEER_FLAGS = {
    ("reference-server", "plugrl-server"): "--horizon",
    ("reference-server", "plugrl"): "--horizon",
    ("reference-server", "rllink"): "--fragment-length",
    ("reference-server", "openai-chat"): "--api-key",
    ("reference-server", "openai"): "--api-key",
    ("reference-server", "session"): "--tree",
    ("reference-client", "plugrl-client"): "--envs",
    ("reference-client", "plugrl"): "--envs",
    ("reference-client", "rllink-client"): "--obs-dim",
    ("reference-client", "rllink"): "--obs-dim",
}


@pytest.mark.parametrize("command", sorted(PEER_FLAGS))
def test_peer_commands_take_both_spellings(command: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    assert PEER_FLAGS[command] in capsys.readouterr().out


def test_the_installed_command_takes_full_names() -> None:
    """As a user runs it: `python -m app.cli`, both peer commands by full name, started side by side."""
    commands = [("reference-server", "plugrl-server"), ("reference-client", "rllink-client")]
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", *command, "--help"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    for command, process in zip(commands, started, strict=True):
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, (command, err)
        assert PEER_FLAGS[command] in out, (command, out)


def test_loading_the_records_imports_no_kind() -> None:
    packages = sorted({record.suite.split(":")[0].rsplit(".", 1)[0] for record in RECORDS.values()})
    probe = (
        "import sys, checks.registry, checks.parity.scripts, app.cli; "
        f"packages = {packages!r}; "
        "print([m for m in sys.modules if m in packages or m.startswith(tuple(p + '.' for p in packages))])"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
