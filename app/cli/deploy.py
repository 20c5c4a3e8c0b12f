"""`rlconform record-deployment` and `rlconform can-i-deploy`: HTTP clients of a service's deploy API.

`can-i-deploy TARGET --version V --to ENV` prints the answer and its matrix and exits 0 yes, 1 no, 2 unknown
(or when the service cannot answer). `--retry-while-unknown SECONDS` asks again every `--retry-interval`
while the answer is unknown (a run of the version still going, say), as Pact's broker client does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import httpx

from app.cli.common import UsageError
from app.cli.deploy_parser import SERVER_ENV

UNKNOWN_EXIT = 2


def _client(args: argparse.Namespace) -> httpx.Client:
    server = (args.server or os.environ.get(SERVER_ENV) or "").rstrip("/")
    if not server:
        raise UsageError(f"give --server URL (or set {SERVER_ENV})")
    token = args.token or os.environ.get("RLCONFORM_API_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        return httpx.Client(base_url=server, headers=headers, timeout=30.0)
    except httpx.InvalidURL as exc:
        raise UsageError(f"--server {server!r} is not a usable URL: {exc}") from None


def refusal(response: httpx.Response) -> str:
    """What the service's error answer says, in one line."""
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = response.text[:300]
    if isinstance(detail, list):
        detail = "; ".join(f"{'.'.join(map(str, d.get('loc', [])[1:]))}: {d.get('msg')}" for d in detail)
    return f"HTTP {response.status_code}: {detail}"


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def give_version(http: httpx.Client, run_id: int, version: str) -> bool:
    """Name the version run `run_id` checks (`rlconform ci --version`); when that fails, say why and cancel
    the run (a run of no known version answers no "can I deploy?"), and answer False."""
    try:
        response = http.put(f"/api/v1/runs/{run_id}/version", json={"version": version})
        if response.status_code == 200:
            return True
        _say(f"rlconform: the service refused version {version!r} for run {run_id}: {refusal(response)}")
        http.post(f"/api/v1/runs/{run_id}/cancel")
    except httpx.HTTPError as exc:
        _say(f"rlconform: cannot name the version of run {run_id}: {exc}")
    return False


def _request(
    http: httpx.Client, command: str, method: str, path: str, expected: int, **sent: Any
) -> httpx.Response | None:
    """The service's answer when its status is `expected`; else None, after saying why on stderr."""
    try:
        response = http.request(method, path, **sent)
    except httpx.HTTPError as exc:
        _say(f"rlconform {command}: cannot reach the service: {exc}")
        return None
    if response.status_code != expected:
        _say(f"rlconform {command}: {refusal(response)}")
        return None
    return response


def cmd_record_deployment(args: argparse.Namespace) -> int:
    body = {"target": args.target, "version": args.version, "environment": args.env, "released": args.released}
    with _client(args) as http:
        if _request(http, "record-deployment", "POST", "/api/v1/deployments", 201, json=body) is None:
            return 2
    what = "released" if args.released else "deployed"
    print(f"{args.target} {args.version} recorded as {what} in {args.env}")
    return 0


def cmd_record_undeployment(args: argparse.Namespace) -> int:
    query = {"target": args.target, "environment": args.env} | ({"version": args.version} if args.version else {})
    with _client(args) as http:
        if _request(http, "record-undeployment", "DELETE", "/api/v1/deployments", 204, params=query) is None:
            return 2
    print(f"{args.target}{' ' + args.version if args.version else ''} recorded as gone from {args.env}")
    return 0


def _ask(http: httpx.Client, args: argparse.Namespace) -> dict[str, Any] | None:
    query = {"target": args.target, "version": args.version, "to": args.to}
    response = _request(http, "can-i-deploy", "GET", "/api/v1/can-i-deploy", 200, params=query)
    if response is None:
        return None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not (isinstance(answer, dict) and {"answer", "rows", "exit_code"} <= answer.keys()):
        said = response.text[:200]
        _say(f"rlconform can-i-deploy: {response.url} answered {said!r}, not an rlconform service's answer")
        return None
    return answer


def cmd_can_i_deploy(args: argparse.Namespace) -> int:
    deadline = time.monotonic() + max(args.retry_while_unknown, 0.0)
    with _client(args) as http:
        while True:
            answer = _ask(http, args)
            if answer is None:
                return UNKNOWN_EXIT
            if answer.get("answer") != "unknown" or time.monotonic() + args.retry_interval > deadline:
                break
            _say(f"unknown; asking again in {args.retry_interval:g}s")
            time.sleep(args.retry_interval)
    if args.json:
        import json

        print(json.dumps(answer, indent=1))
    else:
        print(render(answer))
    code = answer.get("exit_code")
    return code if code in (0, 1, 2) else UNKNOWN_EXIT


def render(answer: dict[str, Any]) -> str:
    """The answer, then a matrix: a line per party with its version, answer, reason and deciding run."""
    lines = [f"can I deploy {answer['target']} {answer['version']} to {answer['environment']}? {answer['answer']}"]
    header = ("TARGET", "KIND", "VERSION", "ANSWER", "REASON", "RUN")
    table = [header]
    for row in answer.get("rows", []):
        version = f"{row['version']} (released)" if row.get("released") else row["version"]
        run = f"#{row['run_id']}" if row.get("run_id") else "-"
        table.append((row["target"], row["kind"], version, row["answer"], row["reason"], run))
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    lines += [
        "  " + "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    for row in answer.get("rows", []):
        if row["reason"] != "passed":
            lines.append(f"  {row['target']} {row['version']}: {row['detail']}")
    lines += [f"note: {note}" for note in answer.get("notes", [])]
    return "\n".join(lines)
