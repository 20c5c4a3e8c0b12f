"""`checks/suites_listing.json`: what `rlconform suites` reads instead of importing every suite.

The file must match the suites as they are (else `suites` falls back to importing
them, correct but slow), and a file that no longer matches the sources, or a kind
whose record names another suite, must never be read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checks import listing
from checks.registry import RECORDS, get_suite, load
from tests.app.fakesuite import RECORD as FAKE_RECORD

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_written_listing_is_current() -> None:
    # In a fresh interpreter, so no kind a test registers is part of it.
    done = subprocess.run(
        [sys.executable, "-m", "checks.listing"],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr  # stale: python -m checks.listing --write


def test_the_written_listing_is_what_the_suites_say() -> None:
    written = json.loads(listing.LISTING_FILE.read_text())["kinds"]
    for kind, entry in written.items():
        assert entry == json.loads(json.dumps(listing.listing_entry(kind, get_suite(kind)))), kind


def test_a_listing_older_than_the_sources_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = listing.listing_entry("plugrl-server", get_suite("plugrl-server"))
    forged = {**entry, "document": {**entry["document"], "title": "from the file"}}
    stale = tmp_path / "suites_listing.json"
    stale.write_text(json.dumps({"fingerprint": "not the sources'", "kinds": {"plugrl-server": forged}}))
    monkeypatch.setattr(listing, "LISTING_FILE", stale)
    listing.written_entries.cache_clear()
    try:
        assert listing.entry_of("plugrl-server") == entry
        stale.write_text(json.dumps({"fingerprint": listing.source_fingerprint(), "kinds": {"plugrl-server": forged}}))
        listing.written_entries.cache_clear()
        assert listing.entry_of("plugrl-server") == forged  # the same file, current: read as it is
    finally:
        listing.written_entries.cache_clear()


def test_a_kind_whose_record_names_another_suite_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RECORDS, "plugrl-server", dataclasses.replace(FAKE_RECORD, name="plugrl-server"))
    get_suite.cache_clear()  # the registry keeps each kind's suite once loaded
    try:
        entry = listing.entry_of("plugrl-server")
        assert entry is not None and entry["suite"] == FAKE_RECORD.suite
        assert entry["document"]["title"] == load(FAKE_RECORD.suite).title  # type: ignore[attr-defined]
    finally:
        get_suite.cache_clear()


def test_a_kind_the_file_does_not_hold_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RECORDS, "fake", FAKE_RECORD)
    document = listing.suites_document(["fake", "plugrl-server"])
    assert [kind["kind"] for kind in document] == ["fake", "plugrl-server"]
    assert document[0]["title"] == get_suite("fake").title
