"""docs/real-peers.md (## RLlib) documents exactly the faults RLlib's runs are held to (RLLIB_FAULTS)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.realpeers.verdicts import RLLIB_FAULTS, rllib_differences

DOC = Path(__file__).resolve().parents[3] / "docs" / "real-peers.md"
ROW = re.compile(r"^\| `(?P<clause>[a-z0-9.-]+)`[^|]*\| (?P<verdict>fail|warn|error) \| (?P<why>.*) \|$")


def documented_rows() -> dict[str, tuple[str, str]]:
    section = DOC.read_text().split("\n## RLlib\n", 1)[1].split("\n## ", 1)[0]
    found = (ROW.match(line) for line in section.splitlines())
    return {m["clause"]: (m["verdict"], m["why"]) for m in found if m}


def test_the_documented_rllib_faults_are_the_table():
    held = {clause: verdict for faults in RLLIB_FAULTS.values() for clause, verdict in faults.items()}
    rows = documented_rows()
    assert {clause: verdict for clause, (verdict, _) in rows.items()} == held
    for clause, (_, why) in rows.items():
        assert re.search(r"\.py:\d+", why), f"{clause}: no source line of RLlib"


def test_a_changed_verdict_is_a_difference_and_a_missed_race_is_not():
    held = {"rllink.seq.strict": "warn", "rllink.client.second": "warn"}
    assert rllib_differences(held, "default phases") == {}
    assert rllib_differences({"rllink.client.second": "warn"}, "default phases") == {}  # the race missed
    assert rllib_differences({"rllink.seq.strict": "warn"}, "default phases") == {
        "rllink.client.second": ("warn", "no fault")
    }
    assert rllib_differences({**held, "rllink.seq.monotonic": "fail"}, "default phases") == {
        "rllink.seq.monotonic": ("no fault", "fail")
    }
    assert rllib_differences({"rllink.payload.robustness": "fail"}, "handshake + destructive") == {
        "rllink.payload.robustness": ("warn", "fail")
    }
