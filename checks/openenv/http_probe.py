"""HTTP requests to the target, each written into a transcript."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx

from checks.core import TargetUnreachable, Transcript, summarize, truncate
from checks.http_options import TransportOptions, http_client

BODY_CAP = 16 * 1024 * 1024  # as large as a /ws frame may be: a big observation is legal on either


@dataclass
class HttpReply:
    status: int
    content_type: str
    text: str
    body: Any  # the parsed JSON, or None when the body is not JSON
    is_json: bool

    def describe(self) -> str:
        shown = summarize(self.body, 160) if self.is_json else repr(truncate(self.text, 120))
        return f"{self.status} {self.content_type or '(no content type)'} {shown}"


class HttpProbe:
    """One HTTP client for one transcript. Unreachable targets raise TargetUnreachable."""

    def __init__(
        self, base_url: str, transcript: Transcript, timeout: float, transport: TransportOptions | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.transcript = transcript
        self.timeout = timeout
        self.client = http_client(transport or TransportOptions(), timeout)

    async def get(self, path: str) -> HttpReply:
        return await self.request("GET", path)

    async def post(self, path: str, body: Any = None, raw: str | None = None) -> HttpReply:
        return await self.request("POST", path, body=body, raw=raw)

    async def request(self, method: str, path: str, body: Any = None, raw: str | None = None) -> HttpReply:
        content = raw if raw is not None else (json.dumps(body) if body is not None else None)
        self.transcript.sent(
            "http", len(content or ""), f"{method} {path}" + (f" {truncate(content, 200)}" if content else "")
        )
        headers = {"content-type": "application/json"} if content is not None else {}
        data = bytearray()
        try:
            # httpx bounds each read, not the whole body: a server trickling bytes needs this deadline.
            async with asyncio.timeout(self.timeout):
                async with self.client.stream(
                    method, self.base_url + path, content=content, headers=headers
                ) as response:
                    async for chunk in response.aiter_bytes():
                        data += chunk[: BODY_CAP + 1 - len(data)]
                        if len(data) > BODY_CAP:
                            break
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.transcript.note(f"could not connect: {truncate(str(exc) or type(exc).__name__, 200)}")
            raise TargetUnreachable(f"{self.base_url}: {exc}") from None
        except (httpx.HTTPError, TimeoutError) as exc:  # a timeout or a broken response is an answer, status 0
            detail = str(exc) or (
                f"the answer took longer than {self.timeout:g}s"
                if isinstance(exc, TimeoutError)
                else type(exc).__name__
            )
            why = f"no usable answer: {truncate(detail, 200)}"
            self.transcript.note(why)
            return HttpReply(0, "", why, None, False)
        if len(data) > BODY_CAP:
            why = f"the body is larger than {BODY_CAP} bytes; not read further"
            self.transcript.note(why)
            return HttpReply(response.status_code, response.headers.get("content-type", ""), why, None, False)
        text = data.decode("utf-8", errors="replace")
        try:
            body_value, is_json = json.loads(text), True
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deep to decode
            body_value, is_json = None, False
        reply = HttpReply(response.status_code, response.headers.get("content-type", ""), text, body_value, is_json)
        self.transcript.received("http", len(data), reply.describe())
        return reply

    async def close(self) -> None:
        await self.client.aclose()

    async def __aenter__(self) -> HttpProbe:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()
