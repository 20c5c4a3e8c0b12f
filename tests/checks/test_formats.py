"""Reports as text, JUnit XML and per-clause rollups."""

import json
from xml.etree import ElementTree as ET

from checks.core import Outcome, Verdict
from checks.formats import render_junit, render_text, to_json


def result(phase, clause_id, verdict, expected="", actual="", level="MUST"):
    return {
        "phase": phase,
        "clause_id": clause_id,
        "verdict": verdict,
        "expected": expected,
        "actual": actual,
        "level": level,
        "duration": 0.25,
    }


RESULTS = [
    result("exchange", "k.1.a", "pass", actual="fine"),
    result("exchange", "k.1.b", "fail", "close 1001", "close 1011"),
    result("errors", "k.2.a", "error", actual="target unreachable: refused"),
    result("errors", "k.2.b", "error", actual="target unreachable: refused"),
    result("errors", "k.2.c", "warn", "a reply", "silence", level="SHOULD"),
    result("stop", "k.1.b", "skip", actual="phase not selected"),
]


def test_text_report_has_one_line_per_clause_and_says_a_root_cause_once():
    text = render_text(RESULTS, Outcome.FAIL, "demo")
    assert "FAIL  k.1.b" in text and "expected close 1001; got close 1011" in text
    assert "skip  k.1.b" not in text  # k.1.b rolls up to its worst judged verdict
    assert text.count("target unreachable: refused") == 1
    assert "ERR   k.2.b" not in text and "in phase errors: 2 clauses" in text and "k.2.a, k.2.b" in text
    assert text.index("warn  k.2.c") < text.index("not decided, by cause:")
    assert text.rstrip().endswith("1 pass, 1 fail, 1 warn, 2 error; outcome: fail")


def test_text_report_hides_verdicts_but_still_counts_them():
    text = render_text(RESULTS, Outcome.FAIL, hide={Verdict.PASS, Verdict.WARN}, expected_failures={"k.1.b"})
    assert "k.1.a" not in text and "k.2.c" not in text
    assert "FAIL  k.1.b  (expected failure)" in text
    assert text.rstrip().endswith("1 pass, 1 fail, 1 warn, 2 error; outcome: fail")


def test_json_has_clauses_counts_and_root_causes_that_agree():
    data = json.loads(to_json(RESULTS, Outcome.FAIL, kind="k"))
    assert data["counts"]["fail"] == 1 and data["counts"]["skip"] == 0 and sum(data["counts"].values()) == 5
    by_id = {c["clause_id"]: c for c in data["clauses"]}
    assert by_id["k.1.b"]["verdict"] == "fail" and by_id["k.1.b"]["phases"] == {"exchange": "fail", "stop": "skip"}
    assert data["root_causes"] == [
        {"reason": "target unreachable: refused", "phase": "errors", "clause_ids": ["k.2.a", "k.2.b"]}
    ]
    assert len(data["results"]) == 6  # every phase's result stays, for evidence


def test_junit_has_one_testcase_per_clause_and_honours_expected_failures():
    root = ET.fromstring(render_junit(RESULTS, "kind").split("?>", 1)[1])
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("5", "1", "2", "1")
    assert len(root.findall(".//testcase[@name='k.1.b']")) == 1
    failure = root.find(".//testcase[@name='k.1.b']/failure")
    assert failure is not None and "close 1011" in failure.get("message")
    relaxed = ET.fromstring(render_junit(RESULTS, "kind", expected_failures=["k.1.b"]).split("?>", 1)[1])
    assert relaxed.get("failures") == "0" and relaxed.get("skipped") == "2"


def test_junit_stays_valid_xml_whatever_a_target_sent():
    hostile = result("errors", "k.3.a", "fail", "close 1001", "reason 'a\x00b\x1b\ud800'")
    xml = render_junit([hostile], "kind")
    root = ET.fromstring(xml.split("?>", 1)[1])
    failure = root.find(".//testcase[@name='k.3.a']/failure")
    assert failure is not None and "a\\x00b\\x1b\\ud800" in failure.get("message")
