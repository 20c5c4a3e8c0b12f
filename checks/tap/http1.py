"""Reading a copy of one direction of an HTTP/1.1 connection: heads, bodies (length, chunked, to EOF).

Requests and responses come out whole; the relay has forwarded their bytes already. A response
to HEAD, or a 1xx, 204 or 304, has no body, so the response reader is told each request's method.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

HEAD_LIMIT = 64 * 1024
# Header names whose values never enter recorded evidence (credentials).
SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key")
SCRUBBED = "[scrubbed]"


@dataclass
class Head:
    start: str  # the request line or the status line
    headers: list[tuple[str, str]]

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def value(self, name: str) -> str:
        found = self.values(name)
        return found[0] if found else ""

    def status(self) -> int:
        parts = self.start.split(" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    def method_path(self) -> tuple[str, str]:
        parts = self.start.split(" ", 2)
        return (parts[0], parts[1]) if len(parts) > 1 else ("", "")


def scrubbed(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers with every credential replaced, for evidence and transcripts."""
    return [
        (key, SCRUBBED if key.lower() in SECRET_HEADERS or "token" in key.lower() else value) for key, value in headers
    ]


def is_upgrade(head: Head, response: bool) -> bool:
    """A response switching protocols, or a request asking for a WebSocket."""
    if response:
        return head.status() == 101
    return "websocket" in head.value("upgrade").lower()


def parse_head(data: bytes) -> Head:
    lines = data.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if ":" in line:
            key, _, value = line.partition(":")
            headers.append((key.strip(), value.strip()))
    return Head(lines[0], headers)


@dataclass
class HttpMessage:
    head: Head
    body: bytes
    complete: bool = True  # False: the connection ended before the body did


@dataclass
class MessageReader:
    """One direction's messages. `responses` True reads responses, matching `methods` (the requests, in order)."""

    responses: bool
    methods: deque[str] = field(default_factory=deque)
    broken: str = ""
    upgrades: bool = False  # stop at a WebSocket upgrade (a request asking one, a 101): the rest is frames
    upgraded: Head | None = None
    _buffer: bytearray = field(default_factory=bytearray)
    _head: Head | None = None
    _body: bytearray = field(default_factory=bytearray)
    _remaining: int = 0  # body bytes still due; -1 to the connection's end; -2 chunked
    _chunk_left: int = -1  # chunked: bytes left of this chunk (-1 between chunks)

    def feed(self, data: bytes | memoryview) -> list[HttpMessage]:
        if self.broken:
            return []
        self._buffer += data
        found: list[HttpMessage] = []
        while self.upgraded is None:
            if self._head is None and not self._start():
                return found
            message = self._read_body()
            if message is None:
                return found
            found.append(message)
            if self.upgrades and is_upgrade(message.head, self.responses):
                self.upgraded = message.head
        return found

    def rest(self) -> bytes:
        """What came after the upgrade's head: the first WebSocket bytes."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        return rest

    def end(self) -> list[HttpMessage]:
        """The connection ended: a body read to EOF is complete, any other half message is not."""
        if self._head is None:
            return []
        body = bytes(self._body) + (bytes(self._buffer) if self._remaining == -1 else b"")
        message = HttpMessage(self._head, body, complete=self._remaining == -1)
        self._head = None
        return [message]

    def _start(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > HEAD_LIMIT:
                self.broken = "no end of an HTTP head within 64 KiB"
            return False
        head = parse_head(bytes(self._buffer[: end + 4]))
        del self._buffer[: end + 4]
        self._head, self._body, self._chunk_left = head, bytearray(), -1
        self._remaining = self._body_length(head)
        return True

    def _body_length(self, head: Head) -> int:
        if self.responses:
            status = head.status()
            if 100 <= status < 200:
                return 0  # an interim response: the method's answer is still to come
            method = self.methods.popleft() if self.methods else ""
            if method == "HEAD" or status in (204, 304):
                return 0
        if "chunked" in head.value("transfer-encoding").lower():
            return -2
        length = head.value("content-length")
        if length.strip().isdigit():
            return int(length)
        return -1 if self.responses else 0

    def _read_body(self) -> HttpMessage | None:
        assert self._head is not None
        if self._remaining == -2:
            if not self._read_chunks():
                return None
        elif self._remaining == -1:
            self._body += self._buffer
            self._buffer.clear()
            return None
        else:
            take = min(self._remaining, len(self._buffer))
            self._body += self._buffer[:take]
            del self._buffer[:take]
            self._remaining -= take
            if self._remaining:
                return None
        message = HttpMessage(self._head, bytes(self._body))
        self._head = None
        return message

    def _read_chunks(self) -> bool:
        """Whether the chunked body is complete (its last chunk and trailers read)."""
        buffer = self._buffer
        while True:
            if self._chunk_left < 0:
                end = buffer.find(b"\r\n")
                if end < 0:
                    return False
                size_text = bytes(buffer[:end]).split(b";")[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    self.broken = f"a chunk size that is not hex: {size_text[:20]!r}"
                    return False
                if size == 0:  # the last chunk: trailers, if any, then an empty line
                    trailer_end = buffer.find(b"\r\n\r\n", end)
                    if trailer_end < 0:
                        return False
                    del buffer[: trailer_end + 4]
                    return True
                del buffer[: end + 2]
                self._chunk_left = size
            if len(buffer) < self._chunk_left + 2:
                return False
            self._body += buffer[: self._chunk_left]
            del buffer[: self._chunk_left + 2]
            self._chunk_left = -1
