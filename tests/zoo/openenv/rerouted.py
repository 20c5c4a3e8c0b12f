"""Conforming apps with one HTTP route, or the /ws frames, changed: the way a zoo entry breaks one answer.

`reroute` answers one route with another endpoint (the OpenAPI document keeps the original paths, as it
was made before); `rewriting_frames` and `closing_after` wrap the ASGI app and change what /ws sends.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI

Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def reroute(app: FastAPI, path: str, methods: list[str], endpoint: Callable[..., Any]) -> FastAPI:
    """`app` with `path` (for `methods`) answered by `endpoint`; OpenAPI still lists what `app` served."""
    if path != "/openapi.json":
        document = app.openapi()  # made before the route changes, and served as it was
        _replace(app, "/openapi.json", ["GET"], lambda: document)
    _replace(app, path, methods, endpoint)
    return app


def _replace(app: FastAPI, path: str, methods: list[str], endpoint: Callable[..., Any]) -> None:
    app.router.routes = [
        route
        for route in app.router.routes
        if not (getattr(route, "path", None) == path and set(methods) & set(getattr(route, "methods", None) or ()))
    ]
    app.add_api_route(path, endpoint, methods=methods, include_in_schema=False)


def original(app: FastAPI, path: str) -> Callable[[], Awaitable[Any]]:
    """What `app`'s own GET `path` endpoint (one taking no arguments) answers, as JSON data: taken before
    a `reroute` of the same path replaces it."""
    endpoint = next(route.endpoint for route in app.router.routes if getattr(route, "path", None) == path)  # type: ignore[attr-defined]

    async def body() -> Any:
        answer = endpoint()
        answer = await answer if inspect.isawaitable(answer) else answer
        return answer.model_dump() if hasattr(answer, "model_dump") else answer

    return body


def rewriting_frames(app: Asgi, rewrite: Callable[[str], str]) -> Asgi:
    """`app` whose /ws text frames pass through `rewrite` on their way out."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def rewritten(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send" and message.get("text") is not None:
                message = {**message, "text": rewrite(message["text"])}
            await send(message)

        await app(scope, receive, rewritten if scope["type"] == "websocket" else send)

    return wrapped


def closing_after(app: Asgi, marker: str) -> Asgi:
    """`app` whose /ws session is closed (1000) right after a text frame containing `marker`."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        closed = False

        async def closing(message: dict[str, Any]) -> None:
            nonlocal closed
            if closed:
                return
            await send(message)
            if message["type"] == "websocket.send" and marker in (message.get("text") or ""):
                closed = True
                await send({"type": "websocket.close", "code": 1000, "reason": ""})

        await app(scope, receive, closing if scope["type"] == "websocket" else send)

    return wrapped


def answering_state_first(app: Asgi, patience: float = 0.05) -> Asgi:
    """`app` whose /ws serves a state message that arrived right behind a step before that step."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await app(scope, receive, send)
            return
        held: list[dict[str, Any]] = []
        waiting: list[asyncio.Task[Any]] = []  # a read begun while peeking, kept so no message is lost

        async def next_message() -> dict[str, Any]:
            if waiting:
                return await waiting.pop()
            message: dict[str, Any] = await receive()
            return message

        async def reordering() -> dict[str, Any]:
            message = held.pop() if held else await next_message()
            if '"step"' not in (message.get("text") or ""):
                return message
            peek = asyncio.ensure_future(next_message())
            done, _ = await asyncio.wait({peek}, timeout=patience)
            if not done:
                waiting.append(peek)
                return message
            following = peek.result()
            if '"state"' in (following.get("text") or ""):
                held.append(message)
                return following
            held.append(following)
            return message

        await app(scope, reordering, send)

    return wrapped
