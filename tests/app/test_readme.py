"""The README's commands work after its quick start, which installs into `.venv` without activating it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from app.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    joined = "\n".join(block.replace("\\\n", " ") for block in blocks)
    return [line.split(" # ")[0].strip().rstrip("&").strip() for line in joined.splitlines() if line.strip()]


def test_every_rlconform_command_names_the_venv_it_was_installed_in() -> None:
    found = [command for command in commands() if re.search(r"(^|[\s/])(rlconform|pip|python)\s", command)]
    assert found
    for command in found:
        for word in shlex.split(command):
            if word.endswith(("rlconform", "pip", "python")) and not word.startswith("python3"):
                assert word.startswith(".venv/bin/"), command


@pytest.mark.parametrize("command", [c for c in commands() if c.startswith(".venv/bin/rlconform ")])
def test_rlconform_examples_parse(command: str) -> None:
    args, _rest = build_parser().parse_known_args(shlex.split(command)[1:])
    assert args.command
