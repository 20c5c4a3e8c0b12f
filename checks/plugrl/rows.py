"""Whether each env's rows of an action answer that env's observation, for a deterministic policy (5.3)."""

from __future__ import annotations

import numpy as np

from checks.core import Report, summarize
from checks.plugrl.probe import Probe

ROW_TOLERANCE = {"rtol": 1e-4, "atol": 1e-6}  # batched inference may round differently


def check_rows(
    report: Report,
    probe: Probe,
    first: np.ndarray | None,
    repeat: np.ndarray | None,
    answers: dict[tuple[int, ...], np.ndarray | None],
) -> None:
    """Rows of a deterministic policy follow their envs: the same observation, the same row.

    Observations depend on the env index only; `first` and `repeat` answered
    the same batch [0, 1, ...], so env j's row is column j of `first`, and
    each of `answers` answered a batch of the envs named, in that order.
    """
    if first is None or repeat is None or first.dtype.kind not in "iuf" or first.shape != repeat.shape:
        return
    baseline = list(range(first.shape[1]))
    if not np.allclose(first, repeat, equal_nan=True, **ROW_TOLERANCE):
        report.info(
            "plugrl.5.3.rows-follow-envs",
            actual=f"the policy answered the same observations {baseline} differently: rows not matched",
            evidence=probe.transcript,
        )
        return
    for envs, action in answers.items():
        if (
            action is None
            or action.dtype.kind not in "iuf"
            or action.ndim < 2
            or action.shape[1] != len(envs)
            or action.shape[0] != first.shape[0]
        ):
            continue
        for position, env in enumerate(envs):
            report.check(
                action.shape[2:] == first.shape[2:]
                and np.allclose(action[:, position], first[:, env], equal_nan=True, **ROW_TOLERANCE),
                "plugrl.5.3.rows-follow-envs",
                expected=f"action[:, {position}] of the answer to {list(envs)} equal to env {env}'s row of the answer "
                f"to {baseline}",
                actual=f"{summarize(action[:, position], 100)} vs {summarize(first[:, env], 100)}",
                evidence=probe.transcript,
            )
