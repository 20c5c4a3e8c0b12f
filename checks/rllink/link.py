"""One recorded TCP connection to an RLlink server: frames out, frames in, every wait bounded."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from checks.core import Transcript, truncate
from checks.errors import NoReply, PeerClosed, Refused
from checks.pinning import address_for
from checks.rllink.codec import HEADER_SIZE, BodyError, Dialect, HeaderError, decode_body, encode, strict_length

# How a TCP connection ends, as `PeerClosed.reason`: the peer's FIN, or a reset nobody chose on purpose.
EOF = "EOF"
RESET = "reset"


def eof() -> PeerClosed:
    return PeerClosed(by="peer", reason=EOF)


def reset(detail: str = RESET) -> PeerClosed:
    return PeerClosed(by="network", reason=detail)


@dataclass(frozen=True)
class Frame:
    header: bytes
    body: bytes


def describe(message: dict[str, Any]) -> str:
    keys = ", ".join(str(k) for k in message if k != "type")
    return f"{message.get('type')} {{{truncate(keys, 120)}}}"


async def read_exactly(reader: asyncio.StreamReader, size: int, timeout: float, transcript: Transcript) -> bytes:
    """Exactly `size` bytes: PeerClosed on EOF or reset, NoReply when they do not all come within `timeout`."""
    try:
        return await asyncio.wait_for(reader.readexactly(size), timeout)
    except asyncio.IncompleteReadError as exc:
        transcript.note(f"EOF after {len(exc.partial)} of {size} bytes")
        raise eof() from None
    except TimeoutError:  # an OSError too, so it goes first
        transcript.note(f"nothing arrived within {timeout:g}s")
        raise NoReply(f"nothing arrived within {timeout:g}s", timeout) from None
    except (ConnectionError, OSError) as exc:
        transcript.note(f"connection reset: {exc}")
        raise reset() from None


class Link:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        transcript: Transcript,
        timeout: float,
        cap: int,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.transcript, self.timeout, self.cap = transcript, timeout, cap

    @classmethod
    async def open(cls, host: str, port: int, transcript: Transcript, timeout: float, cap: int) -> Link:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(address_for(host), port), timeout)
        except ConnectionRefusedError as exc:
            transcript.note(f"connect to {host}:{port} refused")
            raise Refused(f"{host}:{port} refused the connection") from exc
        except TimeoutError:
            transcript.note(f"connect to {host}:{port} did not complete within {timeout:g}s")
            raise NoReply(f"connect did not complete within {timeout:g}s", timeout) from None
        except OSError as exc:
            transcript.note(f"connect to {host}:{port} failed: {exc}")
            raise Refused(f"{host}:{port}: {exc}") from exc
        transcript.note(f"connected to {host}:{port}")
        return cls(reader, writer, transcript, timeout, cap)

    async def send_raw(self, data: bytes, summary: str) -> None:
        self.transcript.sent("binary", len(data), summary)
        try:
            self.writer.write(data)
            await asyncio.wait_for(self.writer.drain(), self.timeout)
        except TimeoutError:  # an OSError too, so it goes first
            raise NoReply(f"sending did not finish within {self.timeout:g}s", self.timeout) from None
        except (ConnectionError, OSError) as exc:
            raise reset(f"sending failed: {exc}") from None

    async def send(self, message: dict[str, Any], dialect: Dialect) -> None:
        await self.send_raw(encode(message, dialect), describe(message))

    async def _read(self, size: int, timeout: float) -> bytes:
        return await read_exactly(self.reader, size, timeout, self.transcript)

    async def read_frame(self, timeout: float | None = None) -> Frame:
        """One frame under a strict header. HeaderError (FrameTooLarge) propagates, after the header is logged."""
        wait = self.timeout if timeout is None else timeout
        header = await self._read(HEADER_SIZE, wait)
        try:
            length = strict_length(header, self.cap)
        except HeaderError:
            self.transcript.received("binary", len(header), f"header {header!r} (not 8 ASCII digits, or over the cap)")
            raise
        body = await self._read(length, wait)
        return Frame(header, body)

    async def read_message(self, dialect: Dialect, timeout: float | None = None) -> tuple[Frame, dict[str, Any]]:
        """A frame and its message. Malformed (HeaderError, BodyError) propagates, after the transcript shows it."""
        got = await self.read_frame(timeout)
        try:
            message = decode_body(got.body, dialect)
        except BodyError as exc:
            self.transcript.received("binary", len(got.body), f"<undecodable: {truncate(str(exc), 120)}>")
            raise
        self.transcript.received("binary", len(got.body) + HEADER_SIZE, describe(message))
        return got, message

    async def silent_for(self, seconds: float) -> bytes | None:
        """None when nothing arrives for `seconds`; else the first bytes that did. PeerClosed on EOF/reset."""
        try:
            data = await asyncio.wait_for(self.reader.read(HEADER_SIZE), seconds)
        except TimeoutError:
            return None
        except (ConnectionError, OSError):
            raise reset() from None
        if not data:
            raise eof()
        self.transcript.received("binary", len(data), f"unexpected bytes {truncate(repr(data), 60)}")
        return data

    async def closes_within(self, seconds: float) -> str | None:
        """How the server closed (EOF or reset) within `seconds`, draining what it sent; None if still open."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (left := end - loop.time()) > 0:
            try:
                data = await asyncio.wait_for(self.reader.read(65536), left)
            except TimeoutError:
                return None
            except (ConnectionError, OSError):
                return RESET
            if not data:
                return EOF
            self.transcript.received("binary", len(data), f"bytes before the close {truncate(repr(data), 60)}")
        return None

    async def close(self, reason: str | None = None) -> None:
        """Close from the checker's side; a `reason` records it as the transcript's close event."""
        if reason is None:
            self.transcript.note("checker closed the connection")
        else:
            self.transcript.closed(None, reason, "checker")
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
