"""How a person at this installation's shell runs `rlconform`, for the commands pages offer to copy."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

# Where the README's quick start installs the command; what a page says when the running one is not found.
QUICK_START_COMMAND = ".venv/bin/rlconform"


@functools.cache
def rlconform_command() -> str:
    """`rlconform` when the one on PATH is this installation's, else the script's path (relative when under the
    working directory, as `.venv/bin/rlconform` after the quick start), else the quick start's."""
    script = Path(sys.executable).parent / "rlconform"
    if not script.exists():
        return QUICK_START_COMMAND
    on_path = shutil.which("rlconform")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "rlconform"
    absolute = Path(os.path.abspath(script))  # not resolved: a venv's python is a link out of the venv
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
