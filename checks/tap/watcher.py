"""What every tap's watcher does with a connection before its kind's judges see a message: keep one state per
connection from its first copy until the server ends it, mark the state once a copy of it was dropped, and
write the connection's opening and end into the ledger's transcript.

A kind's watcher subclasses `ConnectionWatcher`, says what it keeps of a connection (`new_connection`, a
`Connection`) and judges what either side sent in `copied`; `ended` and `forget` are told a side's end and
the connection's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from checks.tap.copies import Copy
from checks.tap.ledger import Ledger
from checks.tap.relay import Ended, Opened


@dataclass
class Connection:
    """What every tap keeps of a connection: whether a copy of it was dropped, so its order is not known."""

    order_lost: bool = False


ConnectionT = TypeVar("ConnectionT", bound=Connection)


class ConnectionWatcher(Generic[ConnectionT]):
    """One state per connection, and the connection's life in the ledger; `copied` judges what was sent."""

    def __init__(self) -> None:
        self.connections: dict[int, ConnectionT] = {}
        self.copies = 0  # copies judged so far: an order over every connection's messages

    def new_connection(self) -> ConnectionT:
        """The state of a connection not seen before."""
        raise NotImplementedError

    def judge(self, copy: Copy, ledger: Ledger) -> None:
        state = self.connections.get(copy.connection)
        if state is None:
            state = self.connections[copy.connection] = self.new_connection()
        state.order_lost = state.order_lost or copy.after_gap
        self.copies += 1
        item = copy.item
        if isinstance(item, Opened):
            ledger.note(copy.connection, f"connection from {item.source}")
        elif isinstance(item, Ended):
            ledger.note(copy.connection, f"{item.by} {item.how} the stream")
            self.ended(copy, ledger)
            if item.by == "server":
                self.connections.pop(copy.connection, None)
                self.forget(copy.connection)
                ledger.forget(copy.connection)
        else:
            self.copied(copy, state, ledger)

    def copied(self, copy: Copy, state: ConnectionT, ledger: Ledger) -> None:
        """Judge what one side sent (`copy.sender`), with what the connection has shown so far."""

    def ended(self, copy: Copy, ledger: Ledger) -> None:
        """One side of a connection ended."""

    def forget(self, connection: int) -> None:
        """The connection is over: drop what was kept for it beside its state."""
