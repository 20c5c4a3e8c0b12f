"""`rlconform check plugrl-client --listen` prints its URL first; the reference client passes it; no client is 2."""

from __future__ import annotations

from tests.checks.client_kinds import check_listen_passes_reference, check_no_client_exits_2

QUICK = ["--option", "steps=6", "--option", "reconnect_window=0.4", "--timeout", "3"]


def test_listen_prints_url_first_and_reference_client_passes() -> None:
    check_listen_passes_reference("plugrl-client", "ws", QUICK, ["plugrl", "--restart-delay", "0.8"])


def test_no_client_exits_2() -> None:
    check_no_client_exits_2("plugrl-client")
