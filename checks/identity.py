"""Which implementation, at which version, a target is, read from what its protocol shows on the wire.

Only what a protocol (or the servers people run for it) exposes is read, one
or two requests, through the one recorded HTTP client:

- `openenv`: `GET /metadata` names the environment (`name`) and its own `version`.
- `ors`: `GET /version` answers `{"version", "build_sha"}` on openreward; ors-sdk has no such route.
- `openai-chat`: the `server` response header (`vllm/0.6.3`, `uvicorn`) and `/models`' `owned_by`
  (vLLM says `vllm`, SGLang `sglang`); the header's `product/version` gives the version when it has one.

Every other kind shows nothing that names an implementation: `identify` answers None without a request.
Nothing here decides a verdict; an answer that cannot be read is simply no identity.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from checks.evidence import Transcript
from checks.http_client import HttpClient, Reply
from checks.http_options import TransportOptions

FIELD_CHARS = 128  # an implementation name or version is cut to this many characters


@dataclass(frozen=True)
class Identity:
    """What the wire said: an implementation (a name) and its version, either possibly unknown."""

    implementation: str | None
    version: str | None
    evidence: str  # the request and what in its answer said so


Reader = Callable[[HttpClient], Awaitable[Identity | None]]


def _text(value: Any) -> str | None:
    """A non-empty string field, cut to FIELD_CHARS; None for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:FIELD_CHARS]


async def _openenv(http: HttpClient) -> Identity | None:
    reply = await http.get("/metadata")
    if reply.status != 200 or not isinstance(reply.body, dict):
        return None
    name, version = _text(reply.body.get("name")), _text(reply.body.get("version"))
    if name is None and version is None:
        return None
    return Identity(name, version, f"GET /metadata: name {name!r}, version {version!r}")


async def _ors(http: HttpClient) -> Identity | None:
    reply = await http.get("/version")
    if reply.status != 200 or not isinstance(reply.body, dict):
        return None
    version = _text(reply.body.get("version"))
    if version is None:
        return None
    build = _text(reply.body.get("build_sha"))
    shown = f", build_sha {build!r}" if build else ""
    # Only openreward answers this route (ors-sdk redirects it to a 404), so the answer names it.
    return Identity("openreward", version, f"GET /version: version {version!r}{shown}")


SERVER_PRODUCT = re.compile(r"^([A-Za-z0-9._-]+)(?:/([A-Za-z0-9._+-]+))?")


def _server_header(reply: Reply) -> tuple[str | None, str | None]:
    """(product, version) from the first `server` header's first product token, e.g. `vllm/0.6.3`."""
    values = reply.header_values("server")
    match = SERVER_PRODUCT.match(values[0].strip()) if values else None
    if match is None:
        return None, None
    return _text(match.group(1)), _text(match.group(2))


def _owner(reply: Reply) -> str | None:
    """The `owned_by` of the first listed model."""
    data = reply.body.get("data") if isinstance(reply.body, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    return _text(first.get("owned_by")) if isinstance(first, dict) else None


async def _openai(http: HttpClient) -> Identity | None:
    reply = await http.get("/models")
    if reply.status == 0:
        return None
    product, version = _server_header(reply)
    owner = _owner(reply) if reply.status == 200 else None
    if owner is None and product is None:
        return None
    # A generic web server (uvicorn, nginx) in the header says less than the engine that owns the models.
    implementation = owner or product
    if owner is not None and product is not None and product.lower() != owner.lower():
        version = None  # the header's version is the web server's, not the engine's
    said = f"server {product!r}" + (f" version {version!r}" if version else "")
    return Identity(implementation, version, f"GET /models: owned_by {owner!r}, {said}")


READERS: dict[str, Reader] = {"openenv": _openenv, "ors": _ors, "openai-chat": _openai}


def readable(kind: str) -> bool:
    """Whether `identify` reads anything for `kind` (else it answers None at once)."""
    return kind in READERS


async def identify(kind: str, url: str, options: Any, timeout: float) -> Identity | None:
    """The identity a target of `kind` at `url` shows, or None when its protocol shows none or it cannot be read.

    `options` are the run's suite options: their headers, key and TLS settings reach the request.
    """
    reader = READERS.get(kind)
    if reader is None or not url:
        return None
    transport = options if isinstance(options, TransportOptions) else None
    transcript = Transcript(0, "identity", "identity")
    try:
        async with HttpClient(url, transcript, timeout, transport, body_cap=256 * 1024) as http:
            return await reader(http)
    except Exception:  # unreachable, refused, a TLS failure: no identity, never a verdict
        return None
