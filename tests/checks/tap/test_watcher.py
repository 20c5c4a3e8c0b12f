"""The connection bookkeeping every tap shares: a state per connection, a dropped copy marks it, a server's
end forgets it; what either side sent goes to the kind's `copied`."""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.plugrl.clauses import CATALOGUE
from checks.tap.copies import Copy
from checks.tap.ledger import Ledger
from checks.tap.relay import Ended, Opened
from checks.tap.watcher import Connection, ConnectionWatcher


@dataclass
class Counted(Connection):
    items: list[object] = field(default_factory=list)


class CountingWatcher(ConnectionWatcher[Counted]):
    def __init__(self) -> None:
        super().__init__()
        self.forgotten: list[int] = []
        self.ends: list[str] = []

    def new_connection(self) -> Counted:
        return Counted()

    def copied(self, copy: Copy, state: Counted, ledger: Ledger) -> None:
        state.items.append(copy.item)

    def ended(self, copy: Copy, ledger: Ledger) -> None:
        self.ends.append(copy.sender)

    def forget(self, connection: int) -> None:
        self.forgotten.append(connection)


def copy(connection: int, sender: str, item: object, after_gap: bool = False) -> Copy:
    return Copy(connection, sender, item, size=1, at=0.0, after_gap=after_gap)


def test_a_state_per_connection_marked_by_a_gap_and_forgotten_when_the_server_ends():
    watcher, ledger = CountingWatcher(), Ledger(CATALOGUE)
    watcher.judge(copy(1, "tap", Opened("127.0.0.1:5")), ledger)
    assert list(ledger.log(1).recent) == ["connection from 127.0.0.1:5"]
    watcher.judge(copy(1, "client", "hello"), ledger)
    watcher.judge(copy(2, "client", "other"), ledger)
    assert watcher.connections[1].items == ["hello"] and not watcher.connections[1].order_lost
    watcher.judge(copy(1, "server", "after a drop", after_gap=True), ledger)
    assert watcher.connections[1].order_lost and not watcher.connections[2].order_lost
    watcher.judge(copy(1, "client", Ended("closed", "client")), ledger)
    assert 1 in watcher.connections and watcher.ends == ["client"]
    watcher.judge(copy(1, "server", Ended("closed", "server")), ledger)
    assert 1 not in watcher.connections and watcher.forgotten == [1]
    assert watcher.copies == 6
