"""The one recorded HTTP client of every HTTP kind (openai-chat, openenv, session-server).

Every request goes through `PinnedTransport` with the run's transport options,
under one overall deadline (connect, headers and body together: httpx bounds
each read, not the whole answer, so a server trickling bytes would otherwise
hold a phase), and reads its body streamed up to a byte cap, never the whole
body before cutting it. Every outcome is written into the transcript: the
request, then the answer, or why there is none (unreachable, refused, reset,
deadline).

`exchange` raises the error family of `checks.errors` when no usable answer
came: `TargetUnreachable` when the target cannot be reached at all, `NoReply`
at the deadline, `Malformed` for bytes that are not HTTP, `PeerClosed` for a
connection that ended mid-answer. `request` turns all but the first into a
status-0 `Reply` whose text says why, for kinds that judge "no answer" as an
answer. `stream` reads server-sent events with the one SSE parser, `SseParser`, which
also keeps each event's type (ORS names its events: `task_id`, `chunk`, `end`).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import time
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Self

import httpx

from checks.errors import CheckError, Malformed, NoReply, PeerClosed, TargetUnreachable
from checks.evidence import Transcript, summarize, truncate
from checks.http_options import TransportOptions
from checks.pinning import address_for

DEFAULT_BODY_CAP = 16 * 1024 * 1024
EVENT_CAP = 20_000  # SSE events read from one stream before giving up on it


class PinnedTransport(httpx.AsyncHTTPTransport):
    """Connects to the address the run pinned for a request's host (`checks.pinning`), so a name that
    answers differently after the network policy checked it cannot redirect a request; the request
    keeps naming the host in its Host header and in TLS SNI."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        address = address_for(request.url.host)
        if address != request.url.host:
            request.extensions = {**request.extensions, "sni_hostname": request.url.host}
            request.url = request.url.copy_with(host=address)  # the Host header was set from the name
        return await super().handle_async_request(request)


class HeaderAuth(httpx.Auth):
    """An `Authorization` the options set. As the client's auth it outranks a URL's user info, which
    httpx would otherwise turn into `Basic` credentials replacing the key on every request."""

    def __init__(self, value: str) -> None:
        self.value = value

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if "Authorization" not in request.headers:  # one a caller set for this client on purpose stays
            request.headers["Authorization"] = self.value
        yield request


def http_client(options: TransportOptions, timeout: float, *, authorized: bool = True) -> httpx.AsyncClient:
    """An httpx client carrying the options' headers and TLS settings (without the key when not `authorized`).

    When the options set `Authorization` (an `api_key`, or an extra header), it wins over user info in
    the URL (`http://user:pass@host`), which is then not sent.
    """
    headers = options.request_headers()
    if not authorized:
        headers.pop("Authorization", None)
    authorization = next((value for name, value in headers.items() if name.lower() == "authorization"), None)
    auth = HeaderAuth(authorization) if authorization is not None else None
    transport = PinnedTransport(verify=options.tls_verify())
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, headers=headers, auth=auth, transport=transport)


@dataclass
class Reply:
    """One HTTP answer. Status 0 means no usable answer (a deadline or a broken response); `text` says why."""

    status: int
    content_type: str = ""
    text: str = ""  # the body decoded as UTF-8 (replacing), or why there is no body
    body: Any = None  # the parsed JSON, or None when the body is not JSON
    is_json: bool = False
    raw: bytes = b""  # the bytes read, at most the client's cap
    headers: list[tuple[str, str]] = field(default_factory=list)  # as sent, repeated names kept
    raw_size: int = 0
    elapsed: float = 0.0
    method: str = ""  # the request this answers, for evidence
    path: str = ""
    sent: Any = None  # its JSON body, or its raw text
    over_cap: bool = False  # the body was longer than the cap and was not read further
    stopped_early: bool = False  # the caller's `until` stopped reading before the body ended
    # How much of the body `describe` shows: (JSON summary limit, text limit), set by the client.
    shown: tuple[int, int] = field(default=(300, 200), repr=False, compare=False)

    def header_values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def describe(self, limit: int | None = None) -> str:
        json_limit, text_limit = self.shown
        shown = summarize(self.body, limit or json_limit) if self.is_json else repr(truncate(self.text, text_limit))
        return f"{self.status} {self.content_type or '(no content type)'} {shown}"

    def error_message(self) -> str | None:
        """The {"error": "<string>"} shape (miles'); None when the body is not that."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), str):
            return str(self.body["error"])
        return None


@dataclass
class SseEvents:
    """Server-sent events read so far: each `data:` payload before `[DONE]`, and what did not fit."""

    payloads: list[str] = field(default_factory=list)
    done: bool = False  # a `data: [DONE]` event arrived
    after_done: list[str] = field(default_factory=list)  # anything sent after [DONE]
    stray_lines: list[str] = field(default_factory=list)  # lines that are no SSE field
    # Every event dispatched, in order, as (event type, data): "message" when no `event:` line named it.
    named: list[tuple[str, str]] = field(default_factory=list)
    comments: int = 0  # comment lines (": ..."), which servers send as keep-alive pings


class SseParser:
    """The SSE line grammar (WHATWG `text/event-stream`): `data:` lines join into one payload per blank line."""

    def __init__(self) -> None:
        self.events = SseEvents()
        self._data: list[str] = []
        self._event = ""

    def feed(self, line: str) -> str | None:
        """Take one line (without its end); return the payload an event completes, if this line ends one."""
        if line == "":
            return self._dispatch()
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "":
            self.events.comments += 1
        elif name not in ("id", "retry"):
            self.events.stray_lines.append(truncate(line, 200))
        return None

    def end(self) -> str | None:
        """The stream ended: an event without its closing blank line still counts."""
        return self._dispatch()

    def _dispatch(self) -> str | None:
        event, self._event = self._event or "message", ""
        if not self._data:
            return None
        payload = "\n".join(self._data)
        self._data = []
        self.events.named.append((event, payload))
        if self.events.done:
            self.events.after_done.append(payload)
        elif payload.strip() == "[DONE]":
            self.events.done = True
        else:
            self.events.payloads.append(payload)
        return payload


def parse_sse(text: str) -> SseEvents:
    """A whole SSE body read at once (a session server's fake-streamed reply)."""
    parser = SseParser()
    for line in text.splitlines():
        parser.feed(line)
    parser.end()
    return parser.events


@dataclass
class StreamReply:
    """An SSE answer: every `data:` payload in order, and what broke the stream if anything did."""

    status: int
    content_type: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    events: SseEvents = field(default_factory=SseEvents)
    problem: str = ""  # a deadline, a reset or an over-long stream
    error_reply: Reply | None = None  # the answer when the server did not stream

    @property
    def payloads(self) -> list[str]:
        return self.events.payloads

    @property
    def done(self) -> bool:
        return self.events.done

    @property
    def after_done(self) -> list[str]:
        return self.events.after_done

    @property
    def stray_lines(self) -> list[str]:
        return self.events.stray_lines

    def chunks(self) -> list[Any]:
        """The payloads parsed as JSON (None for one that is not)."""
        parsed: list[Any] = []
        for payload in self.payloads:
            try:
                parsed.append(json.loads(payload))
            except (ValueError, RecursionError):
                parsed.append(None)
        return parsed


class HttpClient:
    """Requests to one base URL, each written into `transcript`; paths are appended to the base URL."""

    def __init__(
        self,
        base_url: str,
        transcript: Transcript,
        timeout: float,
        options: TransportOptions | None = None,
        *,
        authorized: bool = True,
        headers: dict[str, str] | None = None,
        body_cap: int = DEFAULT_BODY_CAP,
        shown: tuple[int, int] = (160, 120),
        decode_content: bool = True,
        ensure_ascii: bool = True,
        json_when_declared: bool = False,
    ) -> None:
        """`decode_content=False` reads the raw bytes (asking for identity encoding), so the size read is
        the size a content-length names; `json_when_declared` parses JSON only under a JSON content type."""
        self.base_url = base_url.rstrip("/")
        self.transcript = transcript
        self.timeout = timeout
        self.body_cap = body_cap
        self.shown = shown
        self.decode_content = decode_content
        self.ensure_ascii = ensure_ascii
        self.json_when_declared = json_when_declared
        self.client = http_client(options or TransportOptions(), timeout, authorized=authorized)
        if not decode_content:
            self.client.headers["accept-encoding"] = "identity"
        if headers:
            self.client.headers.update(headers)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.client.aclose()

    async def get(self, path: str, *, headers: dict[str, str] | None = None) -> Reply:
        return await self.request("GET", path, headers=headers)

    async def post(
        self, path: str, body: Any = None, raw: str | None = None, *, headers: dict[str, str] | None = None
    ) -> Reply:
        return await self.request("POST", path, body=body, raw=raw, headers=headers)

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: str | bytes | None = None,
        *,
        headers: dict[str, str] | None = None,
        until: Callable[[bytes], bool] | None = None,
    ) -> Reply:
        """The answer, or a status-0 reply saying why none came; only an unreachable target raises."""
        started = time.monotonic()
        try:
            return await self.exchange(method, path, body, raw, headers=headers, until=until)
        except TargetUnreachable:
            raise
        except CheckError as exc:
            return Reply(status=0, text=f"no usable answer: {reason_of(exc)}", elapsed=time.monotonic() - started)

    async def exchange(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: str | bytes | None = None,
        *,
        headers: dict[str, str] | None = None,
        until: Callable[[bytes], bool] | None = None,
    ) -> Reply:
        """The answer; without a usable one, the error family says why (see the module's docstring).

        `headers` are added to this request only; `until`, given the body read so far after each
        chunk, stops reading when it returns True (the reply is then `stopped_early`)."""
        content = self._content(body, raw)
        self._note_sent(method, path, content)
        sent_headers = {"content-type": "application/json"} if content is not None else {}
        sent_headers.update(headers or {})
        data = bytearray()
        stopped = False
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeout):
                async with self.client.stream(
                    method, self.base_url + path, content=content, headers=sent_headers
                ) as response:
                    async for chunk in self._chunks(response):
                        data += chunk[: self.body_cap + 1 - len(data)]
                        if len(data) > self.body_cap:
                            break
                        if until is not None and until(bytes(data)):
                            stopped = True
                            break
        except BaseException as exc:
            raise self._failure(exc) from None
        reply = self._reply(response, bytes(data), time.monotonic() - started)
        reply.stopped_early = stopped
        reply.method, reply.path = method, path
        reply.sent = body if raw is None else (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)
        self.transcript.received("http", len(data), reply.describe())
        return reply

    async def stream(self, body: Any, path: str) -> StreamReply:
        """POST `body` and read the answer as server-sent events, up to `[DONE]` and a little past it."""
        content = self._content(body, None)
        self._note_sent("POST", path, content)
        out = StreamReply(status=0)
        try:
            async with asyncio.timeout(self.timeout):
                async with self.client.stream(
                    "POST", self.base_url + path, content=content, headers={"content-type": "application/json"}
                ) as response:
                    out.status = response.status_code
                    out.content_type = response.headers.get("content-type", "")
                    out.headers = _raw_headers(response)
                    if not out.content_type.startswith("text/event-stream"):
                        data = bytearray()
                        async for chunk in self._chunks(response):
                            data += chunk[: self.body_cap + 1 - len(data)]
                            if len(data) > self.body_cap:
                                break
                        out.error_reply = self._reply(response, bytes(data), 0.0)
                        self.transcript.received("http", len(data), out.error_reply.describe())
                        return out
                    await self._read_events(response, out)
        except BaseException as exc:
            failure = self._failure(exc)
            if isinstance(failure, TargetUnreachable):
                raise failure from None
            out.problem = reason_of(failure)
            self.transcript.note(f"stream broken: {out.problem}")
        return out

    async def _read_events(self, response: httpx.Response, out: StreamReply) -> None:
        parser = SseParser()
        out.events = parser.events
        async for line in _lines(self._chunks(response), self.body_cap):
            if line is None:
                out.problem = f"the stream is larger than {self.body_cap} bytes; not read further"
                return
            payload = parser.feed(line)
            if payload is not None:
                self.transcript.received("sse", len(payload), truncate(payload, 300))
                if len(parser.events.payloads) > EVENT_CAP:
                    out.problem = f"more than {EVENT_CAP} events; not read further"
                    return
        payload = parser.end()
        if payload is not None:
            self.transcript.received("sse", len(payload), truncate(payload, 300))

    def _chunks(self, response: httpx.Response) -> AsyncIterator[bytes]:
        return response.aiter_bytes() if self.decode_content else response.aiter_raw()

    def _content(self, body: Any, raw: str | bytes | None) -> bytes | None:
        if raw is not None:
            return raw.encode() if isinstance(raw, str) else raw
        if body is None:
            return None
        return json.dumps(body, ensure_ascii=self.ensure_ascii).encode()

    def _reply(self, response: httpx.Response, data: bytes, elapsed: float) -> Reply:
        reply = Reply(
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            raw=data[: self.body_cap],
            headers=_raw_headers(response),
            raw_size=len(data),
            elapsed=elapsed,
            shown=self.shown,
        )
        if len(data) > self.body_cap:
            reply.over_cap = True
            reply.text = f"the body is larger than {self.body_cap} bytes; not read further"
            return reply
        reply.text = data.decode("utf-8", errors="replace")
        if self.json_when_declared and not reply.content_type.startswith("application/json"):
            return reply
        try:
            reply.body, reply.is_json = json.loads(data), True
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deep to decode
            return reply
        if self.json_when_declared:
            reply.is_json = reply.body is not None
        return reply

    def _note_sent(self, method: str, path: str, content: bytes | None) -> None:
        shown = f" {truncate(content.decode('utf-8', 'replace'), 300)}" if content else ""
        self.transcript.sent("http", len(content or b""), f"{method} {path}{shown}")

    def _failure(self, exc: BaseException) -> CheckError:
        """The error family's member for what broke a request, noted in the transcript; other errors pass."""
        detail = truncate(str(exc) or type(exc).__name__, 200)
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            self.transcript.note(f"could not connect: {detail}")
            return TargetUnreachable(f"{self.base_url}: {exc}", self.transcript)
        failure: CheckError
        if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
            failure = NoReply(f"the answer took longer than {self.timeout:g}s", self.timeout)
        elif isinstance(exc, (httpx.RemoteProtocolError, httpx.DecodingError)):
            failure = Malformed(detail)
        elif isinstance(exc, httpx.HTTPError):
            failure = PeerClosed(by="network", reason=detail)
        else:
            raise exc
        self.transcript.note(f"no usable answer: {reason_of(failure)}")
        return failure


def reason_of(error: CheckError) -> str:
    """What an error of the family says happened, without the class's own wording around it."""
    if isinstance(error, (Malformed, PeerClosed)):
        return error.reason
    return str(error)


def _raw_headers(response: httpx.Response) -> list[tuple[str, str]]:
    return [(key.decode("latin-1"), value.decode("latin-1")) for key, value in response.headers.raw]


async def _lines(chunks: AsyncIterator[bytes], cap: int) -> AsyncIterator[str | None]:
    """The lines of a byte stream (CR, LF or CRLF ends one); None, once, when more than `cap` bytes came."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span two chunks
    pending, size = "", 0
    async for chunk in chunks:
        size += len(chunk)
        if size > cap:
            yield None
            return
        pending += decoder.decode(chunk)
        # A CR at the end may be the first half of a CRLF: hold it back until the next chunk.
        held = pending.endswith("\r")
        lines = _split(pending[:-1] if held else pending)
        pending = lines.pop() + ("\r" if held else "")
        for line in lines:
            yield line
    tail = pending + decoder.decode(b"", final=True)
    for line in _split(tail) if tail else []:
        yield line


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
