"""The address a run connects to for its target's host name, resolved once when the run starts.

A service checks the target's resolved address against its network policy;
if each connection resolved the name again, a name that changes its answer
between phases (DNS rebinding) would escape that check. The runner resolves
once and pins the checked address for the run (`pinned`); every transport
asks `address_for(host)` where it connects, and keeps the host name for TLS
(SNI) and the Host header. Without a pin the host name is used as given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# Per run: the runner's task and the tasks its phases start each see their own run's pin.
_PINS: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("rlconform_pinned_addresses", default=())


def _key(host: str) -> str:
    return host.lower().rstrip(".").strip("[]")


@contextmanager
def pinned(host: str, address: str | None) -> Iterator[None]:
    """Within the block, connections to `host` go to `address` (None: resolve as usual)."""
    if address is None:
        yield
        return
    token = _PINS.set((*_PINS.get(), (_key(host), address)))
    try:
        yield
    finally:
        _PINS.reset(token)


def address_for(host: str) -> str:
    """Where to connect for `host`: the address pinned for this run, else `host` itself."""
    for pinned_host, address in reversed(_PINS.get()):
        if pinned_host == _key(host):
            return address
    return host


def authority(address: str, port: int) -> str:
    """`address:port` as a URL or gRPC target writes it (IPv6 in brackets)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
