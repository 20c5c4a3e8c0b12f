"""`rlconform ci`: start a run on an rlconform service, follow it, summarise it, exit 0 / 1 / 2.

0: the run passed its gate; 1: a conformance failure (the failing clause ids
are listed); 2: the service is unreachable, the target unknown, the run did
not finish (cancelled, interrupted, timed out) or the harness could not decide.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from app.cli.check import check_writable
from app.cli.common import UsageError, parse_option_pairs
from app.cli.deploy import give_version
from app.errors import ServiceError
from checks.core import EXIT_CODES, Gate, Outcome, Verdict, rolled_verdicts
from checks.evidence import visible_escape
from checks.formats import NOT_XML, render_junit, render_text, rolled_up

POLL_INTERVAL = 0.5
MAX_POLL_FAILURES = 10
ENDED = {"finished", "cancelled", "interrupted"}
RUN_FIELDS = (
    "id",
    "kind",
    "url",
    "status",
    "outcome",
    "gate",
    "expected_failures",
    "message",
    "current_phase",
    "decided_clauses",
    "total_clauses",
)
RESULT_FIELDS = {"phase", "clause_id", "level", "verdict"}


def read_expected_failures(path: str | None) -> set[str]:
    """Clause ids, one a line; blank lines and `#` comments are ignored."""
    if not path:
        return set()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read --expected-failures {path}: {exc}") from None
    return {line.split("#", 1)[0].strip() for line in lines} - {""}


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class ServiceAnswerInvalid(ServiceError):
    """The server answered, but not with the JSON an rlconform service sends."""


def _json(response: httpx.Response, *keys: str) -> Any:
    """The response's JSON; with `keys`, an object that has them."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if keys and not (isinstance(data, dict) and all(key in data for key in keys)):
        raise ServiceAnswerInvalid(
            f"{response.request.url} answered HTTP {response.status_code} with {response.text[:200]!r}, "
            "which is not an rlconform service's answer"
        )
    return data


def _refusal(response: httpx.Response, target: str, server: str) -> str:
    if response.status_code == 404:
        return f"the service at {server} has no target named {target!r}"
    if response.status_code in (401, 403):
        if "Authorization" in response.request.headers:
            return f"token refused: the service at {server} did not accept the API token given"
        return "the service needs an API token for writes: pass --token or set RLCONFORM_API_TOKEN"
    data = _json(response)
    detail = data.get("detail") if isinstance(data, dict) else response.text[:300]
    if isinstance(detail, list):
        detail = "; ".join(f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg')}" for d in detail)
    return f"the service refused the run (HTTP {response.status_code}): {detail}"


def _follow(http: httpx.Client, run: dict[str, Any], wait_timeout: float) -> dict[str, Any] | None:
    """Poll the run until it ends, printing progress; None when it did not end in time or polling broke."""
    deadline = time.monotonic() + wait_timeout
    shown: tuple[Any, ...] = ()
    failures = 0
    while run["status"] not in ENDED:
        if time.monotonic() > deadline:
            _say(f"run {run['id']} did not end within {wait_timeout:g}s; cancelling it")
            try:
                http.post(f"/api/v1/runs/{run['id']}/cancel")
            except httpx.HTTPError:
                pass
            return None
        time.sleep(POLL_INTERVAL)
        try:
            response = http.get(f"/api/v1/runs/{run['id']}")
            if response.status_code == 404:
                _say(f"run {run['id']} no longer exists on the service (was its target deleted?)")
                return None
            response.raise_for_status()
        except httpx.HTTPError as exc:
            failures += 1
            if failures >= MAX_POLL_FAILURES:
                _say(f"lost the service while following run {run['id']}: {exc}")
                return None
            continue
        failures = 0
        run = _json(response, *RUN_FIELDS)
        state = (run["status"], run["current_phase"], run["decided_clauses"])
        if state != shown:
            shown = state
            phase = f", phase {run['current_phase']}" if run["current_phase"] else ""
            # A parity run decides no clauses: it compares two recordings, so it has no count to show.
            counted = f", {run['decided_clauses']}/{run['total_clauses']} clauses" if run["total_clauses"] else ""
            _say(f"run {run['id']}: {run['status']}{phase}{counted}")
    return run


def cmd_ci(args: argparse.Namespace) -> int:
    server = args.server.rstrip("/")
    token = args.token or os.environ.get("RLCONFORM_API_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    follow = _parity_mode(args)
    if follow is None and not args.target:
        raise UsageError("give --target NAME, or --parity TARGET_A (TARGET_B | --golden NAME)")
    extra_expected = read_expected_failures(args.expected_failures)
    check_writable(args.junit, "--junit")
    body = {
        "phases": args.phase or None,
        "options": parse_option_pairs(args.option or []) or None,
        "expected_failures": sorted(extra_expected),
        "trigger": "ci",
    }
    try:
        http = httpx.Client(base_url=server, headers=headers, timeout=30.0)
    except httpx.InvalidURL as exc:
        _say(f"rlconform ci: --server {server!r} is not a usable URL: {exc}")
        return 2
    try:
        with http:
            if follow is not None:
                return follow(args, http, server)
            return _start_and_follow(args, http, server, body, extra_expected)
    except (httpx.InvalidURL, ServiceAnswerInvalid) as exc:
        _say(f"rlconform ci: {exc}")
        return 2


def _start(http: httpx.Client, server: str, path: str, body: dict[str, Any], target: str) -> dict[str, Any] | None:
    """The queued run the service answers with, or None after saying why it did not queue one."""
    try:
        response = http.post(path, json=body)
    except httpx.HTTPError as exc:
        _say(f"rlconform ci: cannot reach the service at {server}: {exc}")
        return None
    if response.status_code != 202:
        _say(f"rlconform ci: {_refusal(response, target, server)}")
        return None
    run: dict[str, Any] = _json(response, *RUN_FIELDS)
    return run


def _fetch(http: httpx.Client, path: str, what: str) -> httpx.Response | None:
    try:
        response = http.get(path)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        _say(f"rlconform ci: cannot fetch {what}: {exc}")
        return None
    return response


def _start_and_follow(
    args: argparse.Namespace, http: httpx.Client, server: str, body: dict[str, Any], extra_expected: set[str]
) -> int:
    run = _start(http, server, f"/api/v1/targets/{quote(args.target, safe='')}/runs", body, args.target)
    if run is None or (args.version and not give_version(http, run["id"], args.version)):
        return 2
    print(f"{server}/runs/{run['id']}", flush=True)  # first, so a CI log links to the run even if it hangs
    _say(f"run {run['id']} of {args.target} ({run['kind']} {run['url']}) queued")
    ended = _follow(http, run, args.wait_timeout)
    if ended is None:
        return 2
    results_response = _fetch(http, f"/api/v1/runs/{ended['id']}/results", f"the results of run {ended['id']}")
    if results_response is None:
        return 2
    results = _json(results_response)
    if not isinstance(results, list) or not all(isinstance(r, dict) and RESULT_FIELDS <= r.keys() for r in results):
        raise ServiceAnswerInvalid(f"the results of run {ended['id']} are not a list of clause results")
    return _summarise(args, ended, results, extra_expected)


def _summarise(args: argparse.Namespace, run: dict[str, Any], results: list[dict[str, Any]], extra: set[str]) -> int:
    """What failed or errored (every clause with --verbose), with root causes, then the outcome."""
    expected = set(run["expected_failures"]) | extra
    verdicts = rolled_verdicts(rolled_up(results))
    gate = Gate(run["gate"])
    # The service's outcome, computed once from the rolled-up verdicts, the gate and the expected failures.
    finished = run["status"] == "finished" and run["outcome"]
    outcome = Outcome(run["outcome"]) if finished else Outcome.ERROR
    failing = sorted({cid for cid, v in verdicts if v in gate.failing() and cid not in expected})
    errored = sorted({cid for cid, v in verdicts if v is Verdict.ERROR and cid not in expected})
    if failing:
        print(f"failing clauses ({len(failing)}): {', '.join(failing)}")
    if errored:
        print(f"undecided clauses, harness errors ({len(errored)}): {', '.join(errored)}")
    shown = gate.failing() | {Verdict.ERROR}
    hide = set() if args.verbose else {v for v in Verdict if v not in shown}
    title = f"{args.target} ({run['kind']} {run['url']}), run {run['id']}"
    print(render_text(results, outcome, title, hide=hide, expected_failures=expected))
    if run["status"] != "finished":
        print(f"the run ended {run['status']}: {run['message']}")
    elif run["message"] and outcome is Outcome.ERROR:
        print(run["message"])
    if args.junit:
        Path(args.junit).write_text(render_junit(results, run["kind"], expected), encoding="utf-8")
    return EXIT_CODES[outcome]


# ---------------------------------------------------------------- parity runs


def _parity_mode(args: argparse.Namespace) -> Callable[[argparse.Namespace, httpx.Client, str], int] | None:
    """`_start_and_follow_parity` when the arguments ask for a parity run, else None (UsageError when mixed)."""
    if not args.parity:
        if args.golden:
            raise UsageError("--golden needs --parity TARGET_A")
        return None
    if args.target or args.phase or args.expected_failures or args.version:
        raise UsageError("--parity takes no --target, --phase, --expected-failures or --version")
    if len(args.parity) > 2 or (len(args.parity) == 2) == bool(args.golden):
        raise UsageError("give --parity TARGET_A TARGET_B, or --parity TARGET_A --golden NAME")
    return _start_and_follow_parity


def _start_and_follow_parity(args: argparse.Namespace, http: httpx.Client, server: str) -> int:
    """Queue the parity run, follow it, print the first divergence; exit 0 identical, 1 divergent, 2 undecided."""
    first, *rest = args.parity
    body = {
        "first": first,
        "second": rest[0] if rest else None,
        "golden": args.golden,
        "options": parse_option_pairs(args.option or []) or None,
        "trigger": "ci",
    }
    run = _start(http, server, "/api/v1/parity-runs", body, first)
    if run is None:
        return 2
    print(f"{server}/parity/{run['id']}", flush=True)  # first, as for any run
    _say(f"parity run {run['id']}: {first} vs {run.get('second')} ({run['kind']}) queued")
    if run.get("label_warning"):
        _say(f"warning: {run['label_warning']}")
    ended = _follow(http, run, args.wait_timeout)
    result = _parity_result(http, ended)
    print(render_parity_result(result))
    if args.junit:
        Path(args.junit).write_text(render_parity_junit(result, run["kind"]), encoding="utf-8")
    return int(result["exit_code"]) if result["exit_code"] in (0, 1, 2) else 2


def _parity_result(http: httpx.Client, ended: dict[str, Any] | None) -> dict[str, Any]:
    """The comparison of the ended run; an undecided one, saying why, when there is none to fetch."""
    if ended is None:
        return undecided("the parity run did not end in time, or the service was lost")
    if ended["status"] != "finished":
        return undecided(f"the parity run ended {ended['status']}: {ended['message']}")
    response = _fetch(http, f"/api/v1/parity-runs/{ended['id']}/result", f"the comparison of run {ended['id']}")
    if response is None:
        return undecided(f"the comparison could not be fetched: {ended['message']}")
    result: dict[str, Any] = _json(response, "status", "reason", "exit_code")
    return result


def undecided(reason: str) -> dict[str, Any]:
    return {"status": "undecided", "reason": reason, "exit_code": 2, "divergences": [], "divergence_count": 0}


def render_parity_result(result: dict[str, Any]) -> str:
    lines = [f"{result['status']}: {result['reason']}"]
    first = result.get("first")
    if isinstance(first, dict) and result["status"] == "divergent":
        lines.append(f"first divergence: {first.get('path')} ({first.get('reason')})")
        for name, side in (("A", first.get("left") or {}), ("B", first.get("right") or {})):
            lines += [f"  {name}: {side.get('value')}", f"     bytes {side.get('bytes') or '-'}"]
        lines.append(f"{result.get('divergence_count', 0)} divergence(s) in all")
    return "\n".join(lines)


def path_group(path: str) -> str:
    """The top-level part of a compared path: `infer[3].actions[0]` is in `infer`."""
    return re.split(r"[.\[]", path, maxsplit=1)[0] or path


def render_parity_junit(result: dict[str, Any], kind: str) -> str:
    """JUnit XML of a comparison: a failing test case per path group with a divergence, one passing case for
    every other compared path, or one error case when the comparison was undecided."""
    suite_name = f"parity.{kind}"
    root = ET.Element("testsuites", name=suite_name)
    suite = ET.SubElement(root, "testsuite", name=suite_name)
    status = result["status"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for divergence in result.get("divergences") or []:
        groups.setdefault(path_group(str(divergence.get("path", ""))), []).append(divergence)
    if status == "undecided":
        case = ET.SubElement(suite, "testcase", classname=suite_name, name="comparison")
        ET.SubElement(case, "error", message=clean(result["reason"]))
    for group, divergences in groups.items():
        case = ET.SubElement(suite, "testcase", classname=suite_name, name=group)
        first = divergences[0]
        failure = ET.SubElement(case, "failure", message=clean(f"{first.get('path')}: {first.get('reason')}"))
        failure.text = clean("\n".join(f"{d.get('path')}: {d.get('reason')}" for d in divergences))
    if status != "undecided":
        rest = "every other compared path" if groups else "every compared path"
        ET.SubElement(suite, "testcase", classname=suite_name, name=rest)
    failures = len(groups)
    errors = 1 if status == "undecided" else 0
    tests = len(suite)
    for element in (root, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", str(errors))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def clean(text: str) -> str:
    return NOT_XML.sub(visible_escape, text)
