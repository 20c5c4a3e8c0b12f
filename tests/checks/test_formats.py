"""Reports as text, JUnit XML and per-clause rollups."""

from xml.etree import ElementTree as ET

from checks.core import Outcome
from checks.formats import render_junit, render_text


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


def test_text_report_names_each_clause_and_says_a_shared_reason_once():
    text = render_text(RESULTS, Outcome.FAIL, "demo")
    assert "FAIL  k.1.b" in text and "expected close 1001; got close 1011" in text
    assert text.count("target unreachable: refused") == 1
    assert text.index("ERR   k.2.b") < text.index("target unreachable: refused") < text.index("warn  k.2.c")
    assert "phase not selected" not in text
    assert text.rstrip().endswith("1 pass, 1 fail, 1 warn, 1 skip, 2 error; outcome: fail")


def test_junit_maps_verdicts_and_honours_expected_failures():
    root = ET.fromstring(render_junit(RESULTS, "kind").split("?>", 1)[1])
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("6", "1", "2", "2")
    failure = root.find(".//testcase[@name='k.1.b']/failure")
    assert failure is not None and "close 1011" in failure.get("message")
    relaxed = ET.fromstring(render_junit(RESULTS, "kind", expected_failures=["k.1.b"]).split("?>", 1)[1])
    assert relaxed.get("failures") == "0" and relaxed.get("skipped") == "3"


def test_junit_stays_valid_xml_whatever_a_target_sent():
    hostile = result("errors", "k.3.a", "fail", "close 1001", "reason 'a\x00b\x1b\ud800'")
    xml = render_junit([hostile], "kind")
    root = ET.fromstring(xml.split("?>", 1)[1])
    failure = root.find(".//testcase[@name='k.3.a']/failure")
    assert failure is not None and "a\\x00b\\x1b\\ud800" in failure.get("message")
