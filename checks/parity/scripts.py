"""Each kind's parity script (its record's `parity_script`), imported only when asked for (a kind's
dependencies may be missing)."""

from __future__ import annotations

from functools import cache
from typing import cast

from checks.parity.script import ParityScript
from checks.registry import find_record, kinds_with, load_part


def parity_kinds() -> list[str]:
    """The kinds with a parity script, whether or not it loads on this machine."""
    return kinds_with("parity_script")


@cache
def get_script(kind: str) -> ParityScript:
    """The parity script of `kind` (LookupError: no such kind or no script; ImportError: cannot be loaded)."""
    record = find_record(kind, "parity_script")
    script = load_part(record.name, "parity_script")
    if getattr(script, "kind", None) != record.name:  # ParityScript is a protocol: its kind is what can be checked
        raise TypeError(f"{record.parity_script} is not the parity script of {record.name}")
    return cast(ParityScript, script)


def find_script(kind: str) -> ParityScript | None:
    try:
        return get_script(kind)
    except (LookupError, ImportError):
        return None
