"""`rlconform check`: a suite run locally, without the service, its report printed (and written as JSON or JUnit)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pydantic

from app.cli.common import UsageError, kind_record, parse_option_pairs
from checks.core import EXIT_CODES, NullSink, Suite, SuiteOptions, Verdict, run_suite
from checks.formats import render_junit, render_text, to_json
from checks.registry import find_suite


def load_options(suite: Suite, options_file: str | None, pairs: list[str], timeout: float | None) -> SuiteOptions:
    """The suite's validated options from a file, --option pairs and --timeout, in that order."""
    values: dict[str, Any] = {}
    if options_file:
        try:
            loaded = json.loads(Path(options_file).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read --options-file {options_file}: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"--options-file {options_file} must hold a JSON object")
        values.update(loaded)
    values.update(parse_option_pairs(pairs))
    if timeout is not None:
        values["timeout"] = timeout
    try:
        return suite.parse_options(values)
    except pydantic.ValidationError as exc:
        raise UsageError(describe_validation_error(exc, suite)) from None


def describe_validation_error(exc: pydantic.ValidationError, suite: Suite) -> str:
    known = ", ".join(suite.options_model.model_fields)
    lines = [f"invalid options for {suite.kind}:"]
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(options)"
        if error["type"] == "extra_forbidden":
            lines.append(f"  {where}: unknown option; {suite.kind} takes {known}")
        else:
            lines.append(f"  {where}: {error['msg']}")
    return "\n".join(lines)


def suite_of(name: str) -> Suite:
    kind = kind_record(name).name
    suite = find_suite(kind)
    if suite is None:
        raise UsageError(f"{kind} is unavailable on this machine")
    return suite


class Progress(NullSink):
    """Prints each phase as it starts, unless quiet, and every announcement (listen mode: where to connect)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def phase(self, name: str, state: str) -> None:
        if state == "running" and not self.quiet:
            print(f"phase: {name}", file=sys.stderr, flush=True)

    def announce(self, url: str, message: str) -> None:
        print(message, flush=True)


def check_writable(path: str | None, flag: str) -> None:
    """Refuse, before a run, an output path the run could not be written to."""
    if not path:
        return
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise UsageError(f"{flag} {path} is a directory; give a file name")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: the folder {folder} does not exist")
    if not os.access(target if target.exists() else folder, os.W_OK):
        raise UsageError(f"{flag} {path} is not writable")


def cmd_check(args: argparse.Namespace) -> int:
    suite = suite_of(args.kind)
    pairs = list(args.option or [])
    if args.listen:
        if not suite.listen:
            raise UsageError(f"--listen is for client kinds; {suite.kind} connects to its target")
        pairs.append(f"listen={args.listen}")
    if not suite.listen and not args.url:
        raise UsageError(f"{suite.kind} needs a target URL, e.g. {suite.url_example or 'ws://127.0.0.1:8000'}")
    options = load_options(suite, args.options_file, pairs, args.timeout)
    try:
        suite.validate_url(args.url)
        suite.select(args.phase)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_writable(args.json, "--json")
    check_writable(args.junit, "--junit")

    phases = list(args.phase or [])
    if args.until_stop and phases and "stop" not in phases:
        phases.append("stop")

    report = asyncio.run(
        run_suite(suite, args.url, options, phases or None, Progress(args.quiet), include_optional=args.until_stop)
    )
    results = [r.to_dict() for r in report.results.values()]
    outcome = report.outcome()
    hide = {Verdict.SKIP} if args.quiet else set()
    where = report.announcements[0][0] if report.announcements else args.url
    print(render_text(results, outcome, f"{suite.kind} {where}", hide=hide))
    if args.json:
        Path(args.json).write_text(
            to_json(
                results,
                outcome,
                kind=suite.kind,
                url=args.url,
                transcripts=[t.to_dict() for t in report.transcripts.values()],
            )
        )
    if args.junit:
        Path(args.junit).write_text(render_junit(results, suite.kind))
    return EXIT_CODES[outcome]
