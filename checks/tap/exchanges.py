"""What every HTTP kind's tap shares: requests paired with their responses per connection, read as the
suites' recorded `Reply`, and readers that follow a connection from HTTP into WebSocket frames.

A kind's watcher subclasses `ExchangeWatcher` and judges `exchange(connection, request, response, ledger)`;
a kind that also speaks WebSocket (OpenEnv's /ws) gets the frames in `frame(copy, message, ledger)`.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from checks.http_client import Reply
from checks.tap.arena import Arena
from checks.tap.copies import Copy
from checks.tap.http1 import Head, HttpMessage, MessageReader, scrubbed
from checks.tap.ledger import Ledger
from checks.tap.watcher import Connection, ConnectionWatcher
from checks.tap.wsframes import FrameReader, WsMessage


class RequestReader(MessageReader):
    """Reads requests and tells the response reader each one's method (a HEAD's answer has no body)."""

    def __init__(self, responses: MessageReader, upgrades: bool = False) -> None:
        super().__init__(responses=False, upgrades=upgrades)
        self.answers = responses

    def feed(self, data: bytes | memoryview) -> list[HttpMessage]:
        found = super().feed(data)
        for message in found:
            self.answers.methods.append(message.head.method_path()[0])
        return found


class UpgradingReader:
    """HTTP messages until a WebSocket upgrade, then the frames after it (`http` stops at the upgrade)."""

    def __init__(self, http: MessageReader) -> None:
        self.http = http
        self.frames: FrameReader | None = None
        self.arena: Arena | None = None

    def use_arena(self, arena: Arena) -> None:
        self.arena = arena

    def feed(self, data: bytes | memoryview) -> list[HttpMessage | Head | WsMessage]:
        if self.frames is not None:
            return list(self.frames.feed(data))
        found: list[HttpMessage | Head | WsMessage] = list(self.http.feed(data))
        if self.http.upgraded is not None:
            self.frames = FrameReader(head=self.http.upgraded, arena=self.arena)
            found += self.frames.feed(self.http.rest())
        return found

    def end(self) -> list[HttpMessage | Head | WsMessage]:
        if self.frames is None:
            return list(self.http.end())
        return list(self.frames.end())


def json_of(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def reply_of(request: HttpMessage, response: HttpMessage) -> Reply:
    """The exchange as the suites' recorded client would have recorded it (credentials scrubbed)."""
    method, path = request.head.method_path()
    content_type = response.head.value("content-type")
    parsed = json_of(response.body) if "json" in content_type else None
    return Reply(
        response.head.status(),
        content_type=content_type,
        text=response.body.decode("utf-8", "replace"),
        body=parsed,
        is_json=parsed is not None,
        raw=response.body,
        headers=scrubbed(response.head.headers),
        raw_size=len(response.body),
        method=method,
        path=path,
        sent=json_of(request.body),
    )


@dataclass
class HttpConnection(Connection):
    """Requests not answered yet, in order, each with when it reached the tap (`ExchangeWatcher.copies`)."""

    pending: deque[tuple[int, HttpMessage]] = field(default_factory=deque)


class ExchangeWatcher(ConnectionWatcher[HttpConnection]):
    """Pairs each response with the request it answers; subclasses judge the pairs (and any frames)."""

    upgrades = False  # True: a connection may switch to WebSocket frames (OpenEnv's /ws)

    def __init__(self) -> None:
        super().__init__()
        self.asked_at = 0  # when the request `exchange` is judging reached the tap, in that order

    def new_connection(self) -> HttpConnection:
        return HttpConnection()

    def readers(self) -> tuple[Any, Any]:
        responses = MessageReader(responses=True, upgrades=self.upgrades)
        requests = RequestReader(responses, upgrades=self.upgrades)
        if self.upgrades:
            return UpgradingReader(requests), UpgradingReader(responses)
        return requests, responses

    def copied(self, copy: Copy, state: HttpConnection, ledger: Ledger) -> None:
        item, pending = copy.item, state.pending
        if isinstance(item, HttpMessage) and copy.sender == "client":
            pending.append((self.copies, item))
            headers = ", ".join(f"{key}: {value}" for key, value in scrubbed(item.head.headers))
            ledger.note(copy.connection, f"client: {item.head.start} ({len(item.body)} bytes) {headers}")
        elif isinstance(item, HttpMessage) and pending:
            self.asked_at, request = pending.popleft()
            ledger.note(copy.connection, f"server: {item.head.start} ({len(item.body)} bytes)")
            self.exchange(copy.connection, request, item, ledger)
        elif isinstance(item, WsMessage):
            self.frame(copy, item, ledger)

    def exchange(self, connection: int, request: HttpMessage, response: HttpMessage, ledger: Ledger) -> None:
        """Judge one request and its response."""

    def frame(self, copy: Copy, message: WsMessage, ledger: Ledger) -> None:
        """Judge one WebSocket message (only where `upgrades`)."""
