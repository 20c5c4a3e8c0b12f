"""`rlconform parity KIND URL_A (URL_B | --golden FILE)`: one deterministic script, two deployments, bit for bit.

Exit 0 identical, 1 divergent, 2 could not decide (a side not recorded, a
sampling target, a golden of other inputs).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import UsageError, kind_record, lazy, parse_option_pairs
from checks.registry import kinds_with, spelled

if TYPE_CHECKING:
    from checks.parity.recording import Recording
    from checks.parity.script import ParityResult, ParityScript


def add_parser(commands: Any) -> None:
    parity = commands.add_parser(
        "parity", help="drive two targets (or one and a golden recording) with one script and compare bit for bit"
    )
    parity.add_argument("kind", help=f"one of: {', '.join(spelled(kind) for kind in kinds_with('parity_script'))}")
    parity.add_argument("url_a", help="the first target")
    parity.add_argument("url_b", nargs="?", help="the second target (or use --golden)")
    parity.add_argument("--golden", metavar="FILE", help="compare URL_A with this golden recording")
    parity.add_argument("--save-golden", metavar="FILE", help="save URL_A's recording as a golden file")
    parity.add_argument("--option", action="append", metavar="KEY=VALUE", help="set a script option (repeatable)")
    parity.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    parity.set_defaults(handler=lazy("app.cli.parity:cmd_parity"))


def script_options(script: ParityScript, pairs: list[str]) -> Any:
    import pydantic

    try:
        return script.options_model.model_validate(parse_option_pairs(pairs))
    except pydantic.ValidationError as exc:
        known = ", ".join(script.options_model.model_fields)
        raise UsageError(f"invalid options for the {script.kind} parity script ({known}): {exc}") from None


def cmd_parity(args: argparse.Namespace) -> int:
    import asyncio

    from checks.parity.encoding import BadEncoding  # the parity machinery (numpy) loads for this command only
    from checks.parity.recording import load_golden, save_golden
    from checks.parity.script import run_parity
    from checks.parity.scripts import find_script

    kind = kind_record(args.kind, "parity_script").name
    script = find_script(kind)
    if script is None:
        raise UsageError(f"the {kind} parity script is unavailable on this machine (its dependencies are missing)")
    if (args.url_b is None) == (args.golden is None):
        raise UsageError("give either URL_B or --golden FILE")
    options = script_options(script, args.option or [])
    golden: Recording | None = None
    if args.golden:
        try:
            golden = load_golden(args.golden)
        except (OSError, BadEncoding) as exc:
            raise UsageError(f"cannot read the golden recording {args.golden}: {exc}") from None
    result = asyncio.run(run_parity(script, options, args.url_a, args.url_b, golden))
    if args.save_golden and result.left is not None:
        save_golden(result.left, args.save_golden)
    print(render(result, args.url_a, args.url_b or f"golden {args.golden}"))
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1))
    return result.exit_code


def render(result: ParityResult, left: str, right: str) -> str:
    lines = [f"parity {result.kind}: {left} vs {right}", f"{result.status}: {result.reason}"]
    for recording in (result.left, result.right):
        if recording is not None and recording.summary:
            lines.append(f"  {recording.target}: {recording.summary}")
    first = result.first
    if first is not None and result.status != "undecided":
        lines += [
            f"first divergence: {first.path} ({first.reason})",
            f"  A: {first.left.value}",
            f"     bytes {first.left.bytes_hex or '-'}",
            f"  B: {first.right.value}",
            f"     bytes {first.right.bytes_hex or '-'}",
        ]
        for other in result.comparison.divergences[1:6]:
            lines.append(f"  also: {other.path} ({other.reason})")
        if result.comparison.count > 6:
            lines.append(f"  … {result.comparison.count} divergences in all")
    return "\n".join(lines)
