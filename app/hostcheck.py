"""Which `Host` headers the service answers (`RLCONFORM_ALLOWED_HOSTS`), against DNS rebinding.

A page on `http://rebind.example:8080`, whose name an attacker points at
127.0.0.1, is same-origin with itself: the browser lets it read what the
service answers and post to it with `Origin` equal to `Host`. Only the names
the service is really reached by are answered; any other `Host` is refused
before routing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
ANY_HOST = "*"


def _normal(name: str) -> str:
    """A host name or address as compared: lower case, no trailing dot, IPv6 without brackets."""
    name = name.strip().lower().rstrip(".")
    return name[1:-1] if name.startswith("[") and name.endswith("]") else name


def _all_interfaces(bind: str) -> bool:
    return bind in ("", "0.0.0.0", "::")  # noqa: S104 - comparing, not binding


def _own_names_and_addresses() -> list[str]:
    """This machine's host names and the addresses they resolve to (for a service listening on every interface)."""
    names = [socket.gethostname(), socket.getfqdn()]
    found = list(names)
    for name in names:
        try:
            found += [str(info[4][0]) for info in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)]
        except OSError:
            continue
    return found


def default_hosts(bind: str) -> list[str]:
    """The hosts admitted when `RLCONFORM_ALLOWED_HOSTS` is unset, for a service bound to `bind`."""
    hosts = list(LOOPBACK_HOSTS)
    if _all_interfaces(bind):
        hosts += _own_names_and_addresses()
    else:
        hosts.append(bind)
    return list(dict.fromkeys(_normal(host) for host in hosts))


def host_of(header: str) -> str:
    """The host part of a `Host` header value (`name:port`, `[v6]:port`), normalised; "" when malformed."""
    header = header.strip()
    if header.startswith("["):
        end = header.find("]")
        rest = header[end + 1 :]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return ""
        return _normal(header[: end + 1])
    name, _, port = header.partition(":")
    if port and not port.isdigit():
        return ""
    return _normal(name)


class AllowedHosts:
    """The `Host` values the service answers: exact names and addresses, or `*` for any."""

    def __init__(self, hosts: Iterable[str]) -> None:
        self.hosts = {_normal(host) for host in hosts}

    def admits(self, header: str | None) -> bool:
        if ANY_HOST in self.hosts:
            return True
        host = host_of(header or "")
        if not host:
            return False
        try:
            host = str(ipaddress.ip_address(host))  # one spelling per address (`::0:1` is `::1`)
        except ValueError:
            pass
        return host in self.hosts or any(_same_address(host, allowed) for allowed in self.hosts)


def _same_address(host: str, allowed: str) -> bool:
    try:
        return ipaddress.ip_address(host) == ipaddress.ip_address(allowed)
    except ValueError:
        return False


def allowed_hosts(configured: Sequence[str], bind: str) -> AllowedHosts:
    """The configured hosts, or the defaults for `bind` when none are configured."""
    return AllowedHosts(configured or default_hosts(bind))
