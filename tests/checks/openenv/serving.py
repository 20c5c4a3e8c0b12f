"""Serving an ASGI app on a free 127.0.0.1 port in a background thread, stopped on exit."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import httpx
import uvicorn

from checks.asgi_server import listening_socket


@contextlib.contextmanager
def serve_in_thread(app, ready_path: str = "/openapi.json") -> Iterator[str]:
    """Yield the base URL of `app` served by uvicorn; the server is shut down on exit."""
    sock = listening_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1, ws_max_size=16 * 1024 * 1024
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + ready_path, 20.0)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def wait_until_up(url: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
