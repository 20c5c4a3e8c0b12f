"""What a name of the service's own may be: targets, goldens and worker labels, matched whole."""

from __future__ import annotations

import re

LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"  # \Z: `$` would also match before a final newline


def label_problem(label: str) -> str | None:
    """Why `label` is no worker label (matched whole: "gpu\n" is refused), or None."""
    if re.fullmatch(LABEL_PATTERN, label):
        return None
    return f"{label!r} is not a worker label (a letter or digit, then letters, digits, '.', '_', '-'; at most 64)"
