"""An HTTP client for OpenAI-compatible endpoints: JSON calls and SSE streams, each written into a transcript.

The base URL ends in `/v1` (or is a session server's `.../sessions/<id>/v1`);
paths such as `/chat/completions` are appended to it, so the same client
serves a bare endpoint and a session's proxy.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from checks.core import TargetUnreachable, Transcript, summarize, truncate
from checks.http_options import HttpOptions, http_client

BODY_CAP = 8 * 1024 * 1024
EVENT_CAP = 20_000  # SSE events read from one stream before giving up on it


@dataclass
class Reply:
    """One HTTP answer. Status 0 means no usable answer (a timeout or a broken response); `text` says why."""

    status: int
    content_type: str = ""
    text: str = ""
    body: Any = None  # the parsed JSON, or None when the body is not JSON
    is_json: bool = False
    headers: list[tuple[str, str]] = field(default_factory=list)  # as sent, repeated names kept
    raw_size: int = 0
    elapsed: float = 0.0

    def header_values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def describe(self) -> str:
        shown = summarize(self.body, 300) if self.is_json else repr(truncate(self.text, 200))
        return f"{self.status} {self.content_type or '(no content type)'} {shown}"


@dataclass
class StreamReply:
    """An SSE answer: every `data:` payload in order, and what broke the stream if anything did."""

    status: int
    content_type: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    payloads: list[str] = field(default_factory=list)  # data of each event before [DONE]
    done: bool = False  # a `data: [DONE]` event arrived
    after_done: list[str] = field(default_factory=list)  # anything sent after [DONE]
    stray_lines: list[str] = field(default_factory=list)  # lines that are no SSE field
    problem: str = ""  # a timeout, a reset or an over-long stream
    error_reply: Reply | None = None  # the JSON answer when the server did not stream

    def chunks(self) -> list[Any]:
        """The payloads parsed as JSON (None for one that is not)."""
        parsed: list[Any] = []
        for payload in self.payloads:
            try:
                parsed.append(json.loads(payload))
            except ValueError:
                parsed.append(None)
        return parsed


class ChatClient:
    """Requests to one OpenAI-compatible base URL. An unreachable target raises TargetUnreachable."""

    def __init__(
        self,
        base_url: str,
        options: HttpOptions,
        timeout: float,
        transcript: Transcript,
        *,
        authorized: bool = True,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.transcript = transcript
        self.timeout = timeout
        self.client = http_client(options, timeout, authorized=authorized)
        # Uncompressed bodies: the raw bytes read are the body whose content-length is checked.
        self.client.headers["accept-encoding"] = "identity"
        if headers:
            self.client.headers.update(headers)

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.aclose()

    async def get(self, path: str) -> Reply:
        return await self.request("GET", path)

    async def chat(self, body: dict[str, Any]) -> Reply:
        return await self.request("POST", "/chat/completions", body=body)

    async def request(self, method: str, path: str, body: Any = None, raw: str | None = None) -> Reply:
        content = raw if raw is not None else (json.dumps(body, ensure_ascii=False) if body is not None else None)
        self._note_sent(method, path, content)
        headers = {"content-type": "application/json"} if content is not None else {}
        data = bytearray()
        started = time.monotonic()
        try:
            # httpx bounds each read, not the whole body: a trickling server needs this deadline.
            async with asyncio.timeout(self.timeout):
                async with self.client.stream(
                    method, self.base_url + path, content=content.encode() if content else None, headers=headers
                ) as response:
                    async for chunk in response.aiter_raw():
                        data += chunk[: BODY_CAP + 1 - len(data)]
                        if len(data) > BODY_CAP:
                            break
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.transcript.note(f"could not connect: {truncate(str(exc) or type(exc).__name__, 200)}")
            raise TargetUnreachable(f"{self.base_url}: {exc}", self.transcript) from None
        except (httpx.HTTPError, TimeoutError) as exc:
            return self._no_answer(exc, time.monotonic() - started)
        reply = Reply(
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw],
            raw_size=len(data),
            elapsed=time.monotonic() - started,
        )
        if len(data) > BODY_CAP:
            reply.text = f"the body is larger than {BODY_CAP} bytes; not read further"
        else:
            reply.text = bytes(data).decode("utf-8", errors="replace")
            try:
                reply.body, reply.is_json = json.loads(reply.text), True
            except (ValueError, RecursionError):
                pass
        self.transcript.received("http", len(data), reply.describe())
        return reply

    async def stream(self, body: dict[str, Any], path: str = "/chat/completions") -> StreamReply:
        """POST `body` and read the answer as server-sent events, up to `[DONE]` and a little past it."""
        content = json.dumps(body, ensure_ascii=False)
        self._note_sent("POST", path, content)
        out = StreamReply(status=0)
        try:
            async with asyncio.timeout(self.timeout):
                async with self.client.stream(
                    "POST", self.base_url + path, content=content.encode(), headers={"content-type": "application/json"}
                ) as response:
                    out.status = response.status_code
                    out.content_type = response.headers.get("content-type", "")
                    out.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
                    if not out.content_type.startswith("text/event-stream"):
                        text = (await response.aread())[:BODY_CAP].decode("utf-8", errors="replace")
                        out.error_reply = _json_reply(out.status, out.content_type, text, out.headers)
                        self.transcript.received("http", len(text), out.error_reply.describe())
                        return out
                    await self._read_events(response, out)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.transcript.note(f"could not connect: {truncate(str(exc) or type(exc).__name__, 200)}")
            raise TargetUnreachable(f"{self.base_url}: {exc}", self.transcript) from None
        except (httpx.HTTPError, TimeoutError) as exc:
            out.problem = _why(exc, self.timeout)
            self.transcript.note(f"stream broken: {out.problem}")
        return out

    async def _read_events(self, response: httpx.Response, out: StreamReply) -> None:
        data_lines: list[str] = []
        count = 0
        async for line in response.aiter_lines():
            if line == "":
                if data_lines:
                    payload = "\n".join(data_lines)
                    data_lines = []
                    count += 1
                    self._take(payload, out)
                    if count > EVENT_CAP:
                        out.problem = f"more than {EVENT_CAP} events; not read further"
                        return
                continue
            name, _, value = line.partition(":")
            if name == "data":
                data_lines.append(value[1:] if value.startswith(" ") else value)
            elif name not in ("", "event", "id", "retry"):
                out.stray_lines.append(truncate(line, 200))
        if data_lines:
            self._take("\n".join(data_lines), out)

    def _take(self, payload: str, out: StreamReply) -> None:
        self.transcript.received("sse", len(payload), truncate(payload, 300))
        if out.done:
            out.after_done.append(payload)
        elif payload.strip() == "[DONE]":
            out.done = True
        else:
            out.payloads.append(payload)

    def _note_sent(self, method: str, path: str, content: str | None) -> None:
        shown = f" {truncate(content, 300)}" if content else ""
        self.transcript.sent("http", len(content or ""), f"{method} {path}{shown}")

    def _no_answer(self, exc: BaseException, elapsed: float) -> Reply:
        why = f"no usable answer: {_why(exc, self.timeout)}"
        self.transcript.note(why)
        return Reply(status=0, text=why, elapsed=elapsed)


def _why(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"the answer took longer than {timeout:g}s"
    return truncate(str(exc) or type(exc).__name__, 200)


def _json_reply(status: int, content_type: str, text: str, headers: list[tuple[str, str]]) -> Reply:
    reply = Reply(status=status, content_type=content_type, text=text, headers=headers, raw_size=len(text))
    try:
        reply.body, reply.is_json = json.loads(text), True
    except (ValueError, RecursionError):
        pass
    return reply
