"""What a kind's tap is made of (`TapSpec`, its `Watcher`) and the switch interval of the tap's own process.

Apart from `checks.tap.run` so the kinds' taps (`checks.tap.kinds`), which the judging process imports to make a
spec again, never import the module that starts that process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from checks.report import Catalogue
from checks.tap.copies import Copy
from checks.tap.ledger import Ledger
from checks.tap.relay import StreamReader

# A thread of the tap's (the judging thread, or the feeder of the judging process's queue) gives the event loop
# the GIL back this often (seconds): forwarding waits at most this long. Set by the process that is the tap's own
# (`rlconform tap`, a judging process), never by a service that hosts taps among its other work.
SWITCH_INTERVAL = 0.0005


def shorten_switch_interval() -> None:
    """In the tap's own process: hand the GIL back to the relay's event loop often (see SWITCH_INTERVAL)."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)


class Watcher(Protocol):
    """A kind's judging side: readers for a connection's two directions, and the judge of each copy."""

    def readers(self) -> tuple[StreamReader, StreamReader]: ...

    def judge(self, copy: Copy, ledger: Ledger) -> None: ...


@dataclass(frozen=True)
class TapSpec:
    """What a kind's tap reports: its clauses, those only an active run decides, and those a profile makes MUST."""

    catalogue: Catalogue
    active_only: frozenset[str]
    raised: frozenset[str]
    watcher: Callable[[], Watcher]
    # The kind and options `kinds.tap_spec` made it from: how a spawned judging process makes it again.
    origin: tuple[str, tuple[tuple[str, str], ...]] = ("", ())
