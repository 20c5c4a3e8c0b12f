"""`rlconform check rllink-client --listen` prints its tcp:// URL first; the reference client passes; no client is 2."""

from __future__ import annotations

from tests.checks.client_kinds import check_listen_passes_reference, check_no_client_exits_2

QUICK = ["--option", "recycle=0.4", "--option", "reply_delay=0.1", "--option", "fragment_length=20", "--timeout", "3"]


def test_listen_prints_url_first_and_reference_client_passes() -> None:
    client = ["rllink", "--dialect", "msgpack", "--retry-for", "1"]
    check_listen_passes_reference("rllink-client", "tcp", QUICK, client)


def test_no_client_exits_2() -> None:
    check_no_client_exits_2("rllink-client")
