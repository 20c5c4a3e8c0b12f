"""Which addresses runs may connect to (`RLCONFORM_ALLOWED_NETWORKS`).

Entries are CIDRs (`10.0.0.0/8`, `::1/128`) or host names (`trainer.internal`,
`*.cluster.local`). A host allowed by name is trusted as named; any other host
is resolved and every address it resolves to must lie in an allowed network,
so a name cannot smuggle a run to, say, a cloud metadata address.

With no entries (the default), loopback, private and public addresses are
allowed (the service runs beside clusters), but never link-local and cloud
metadata addresses (REFUSED_BY_DEFAULT), in any spelling, nor anything that
is not a plain name or address (a gRPC `unix:` socket). Those are reached only
through an entry that lies inside them (`169.254.169.254/32`), not a broad
one such as `0.0.0.0/0`.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from app.errors import ServiceError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# A DNS name as a run connects to it. Anything else (a gRPC target such as
# `ipv4:10.0.0.1:80,a.internal`, `unix:/path`, or `%`/`@`/`,` tricks) could make the
# connecting library reach an address other than the one checked here.
# Matched with fullmatch: `$` would also admit a name ending in a newline.
HOST_NAME = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?")


REFUSED_BY_DEFAULT: tuple[Network, ...] = (
    ipaddress.ip_network("169.254.0.0/16"),  # IPv4 link-local, where cloud metadata services answer
    ipaddress.ip_network("fe80::/10"),  # IPv6 link-local
    ipaddress.ip_network("fd00:ec2::254/128"),  # EC2's IPv6 metadata address
)


UNIX_PREFIX = "unix:"  # a gRPC Unix-socket target, allowed only when listed whole (`unix:/run/env.sock`)


class NetworkRefused(ServiceError):
    """The target's address lies outside the allowed networks, or cannot be resolved."""


def parse_allowed(entries: Sequence[str]) -> tuple[list[Network], list[str]]:
    """Split entries into networks and (lower-cased) host-name patterns."""
    networks: list[Network] = []
    names: list[str] = []
    for entry in entries:
        entry = entry.strip()
        if not entry or entry.startswith(UNIX_PREFIX):
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            names.append(entry.lower().rstrip("."))
    return networks, names


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _name_allowed(host: str, names: list[str]) -> bool:
    host = host.lower().rstrip(".")
    for pattern in names:
        if pattern.startswith("*.") and host.endswith(pattern[1:]):
            return True
        if host == pattern:
            return True
    return False


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _in_networks(address: str, networks: Sequence[Network]) -> bool:
    ip = _ip(address)
    return any(ip.version == net.version and ip in net for net in networks)


def _refused_by_default(address: str, networks: list[Network]) -> bool:
    """In a link-local or metadata range, and not admitted by an entry lying inside that range."""
    ip = _ip(address)
    for special in REFUSED_BY_DEFAULT:
        if ip.version == special.version and ip in special:
            return not any(
                net.version == special.version and ip in net and net.subnet_of(special)  # type: ignore[arg-type]
                for net in networks
            )
    return False


def source_allowed(address: str, allowed: Sequence[str]) -> bool:
    """Whether a client connecting from `address` may be graded (listen-mode runs); empty allows any.

    Only network entries admit a source: a host-name entry names where runs may
    connect, and a source address cannot prove which name it has.
    """
    if not allowed:
        return True
    networks, _ = parse_allowed(allowed)
    try:
        return _in_networks(address, networks)
    except ValueError:
        return False


def resolve(host: str, port: int | None) -> list[str]:
    """Every address `host` resolves to (blocking: call it off the event loop)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise NetworkRefused(f"cannot resolve {host!r}: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def check_host(host: str, port: int | None, allowed: Sequence[str], *, connecting: bool = False) -> str | None:
    """Raise NetworkRefused unless the policy lets a run connect to host:port.

    Returns the checked address when the check resolved `host`: a run must
    connect to it (`checks.pinning`) rather than resolve the name again.
    Under the default policy a name that does not resolve passes when a target
    is registered, not when a run is `connecting` (it would resolve it again).
    """
    if host.startswith(UNIX_PREFIX) and host in allowed:
        return None  # a Unix socket listed as such
    networks, names = parse_allowed(allowed)
    if not host:
        raise NetworkRefused("the target URL names no host")
    if len(host) > 253 or not (_is_ip_literal(host) or HOST_NAME.fullmatch(host)):
        unix = " (list it in RLCONFORM_ALLOWED_NETWORKS to allow it)" if host.startswith(UNIX_PREFIX) else ""
        raise NetworkRefused(f"{host[:80]!r} is neither an IP address nor a plain host name{unix}")
    if _name_allowed(host, names):
        return None  # trusted as named
    try:
        addresses = resolve(host, port)
    except NetworkRefused:
        if allowed or connecting:
            raise
        return None
    _refuse_outside(host, addresses, allowed, networks)
    return None if _is_ip_literal(host) else addresses[0]


def _refuse_outside(host: str, addresses: list[str], allowed: Sequence[str], networks: list[Network]) -> None:
    special = [address for address in addresses if _refused_by_default(address, networks)]
    if special:
        raise NetworkRefused(
            f"{host} resolves to {', '.join(special)}, a link-local or cloud metadata address; list it in "
            "RLCONFORM_ALLOWED_NETWORKS (e.g. 169.254.169.254/32) to allow it"
        )
    outside = [address for address in addresses if allowed and not _in_networks(address, networks)]
    if outside:
        raise NetworkRefused(
            f"{host} resolves to {', '.join(outside)}, outside the allowed networks "
            f"({', '.join(allowed)}); set RLCONFORM_ALLOWED_NETWORKS to allow it"
        )


async def check_host_async(host: str, port: int | None, allowed: Sequence[str]) -> str | None:
    """`check_host` for a run about to connect, with name resolution off the event loop."""
    return await asyncio.to_thread(functools.partial(check_host, host, port, allowed, connecting=True))


@dataclass
class Reach:
    """Where the runs of a process may connect (the policy, and the service's own servers) and where they listen."""

    allowed_networks: Sequence[str] = ()
    listen_host: str = "127.0.0.1"  # where listen-mode (client kind) runs bind, and on which ports
    listen_ports: Sequence[int] = (0,)
    own_endpoints: set[tuple[str, int | None]] = field(default_factory=set)

    def allow_own(self, url: str) -> None:
        """Let runs reach `url`, a server this service runs itself (the demo), whatever the policy says."""
        parsed = urlsplit(url)
        self.own_endpoints.add((parsed.hostname or "", parsed.port))

    async def checked_address(self, host: str, port: int | None) -> str | None:
        """The address a run must connect to for host:port (`checks.pinning`), None to resolve as usual.

        Raises NetworkRefused when the policy forbids it; the service's own servers are always allowed.
        """
        if (host, port) in self.own_endpoints:
            return None
        return await check_host_async(host, port, self.allowed_networks)
