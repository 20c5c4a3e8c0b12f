"""Judges of action rows: each env's rows answer that env's observation (5.3), reused rows its last one (10.1).

The clause infers a fault from content, so it is judged only once the same
run has shown what it relies on: the policy answers a repeated batch
identically, and nudging one env's observation changes one env's share of the
action and no more. A policy that answers by position, ignores observations,
samples or mixes the envs of a batch is conforming; it is recorded as not judged.
The nudge is judged by how many values change, not where: a server that
mislays rows moves the change, and must still be judged.
"""

from __future__ import annotations

import numpy as np

from checks.decision import Decision, check, info
from checks.evidence import summarize

ROW_TOLERANCE = {"rtol": 1e-4, "atol": 1e-6}  # batched inference may round differently


def rows_follow_envs(
    first: np.ndarray | None,
    repeat: np.ndarray | None,
    nudged: dict[int, np.ndarray | None],
    answers: dict[tuple[int, ...], np.ndarray | None],
) -> list[Decision]:
    """Rows follow their envs: env j's row of another batch is column j of `first`.

    `first` and `repeat` answered the batch [0, 1, ...]; `nudged[j]` answered it
    with env j's observation nudged; each of `answers` answered a batch of the
    envs named, in that order. Observations otherwise depend on the env alone.
    """
    why = _why_not_judged(first, repeat, nudged)
    if why is not None:
        return [info("plugrl.5.3.rows-follow-envs", actual=f"not judged, because {why}")]
    assert first is not None
    baseline = list(range(first.shape[1]))
    decisions = []
    for envs, action in answers.items():
        if action is None or not _comparable(action, first[:, list(envs)]):
            continue  # its form is judged by the action's own clauses
        for position, env in enumerate(envs):
            decisions.append(
                check(
                    _close(action[:, position], first[:, env]),
                    "plugrl.5.3.rows-follow-envs",
                    expected=f"action[:, {position}] of the answer to {list(envs)} equal to env {env}'s row of the "
                    f"answer to {baseline}",
                    actual=f"{summarize(action[:, position], 100)} vs {summarize(first[:, env], 100)}",
                )
            )
    return decisions


def reused_rows(
    first: np.ndarray | None,
    repeat: np.ndarray | None,
    pairs: list[tuple[str, np.ndarray | None, np.ndarray | None]],
) -> list[Decision]:
    """A deterministic policy answers a batch that reuses observations as it answered it sent in full.

    `first` and `repeat` answered the same batch sent in full; each pair is (what was reused, its
    answer, the answer to the same envs sent in full). The suite's observations depend on the env
    alone, so a reused row, filled from the env's last feedback, is the observation sent before.
    """
    if first is None or repeat is None or not _comparable(first, repeat):
        return []
    if not _close(first, repeat):
        why = "the policy answered the same observations differently: reused answers not compared"
        return [info("plugrl.10.1.reuse-rows", actual=why)]
    return [
        check(
            _close(reused, full),
            "plugrl.10.1.reuse-rows",
            expected=f"the answer to {what} equal to the answer to the same envs sent in full",
            actual=f"{summarize(reused, 120)} vs {summarize(full, 120)}",
        )
        for what, reused, full in pairs
        if reused is not None and full is not None and _comparable(reused, full)
    ]


def _why_not_judged(
    first: np.ndarray | None, repeat: np.ndarray | None, nudged: dict[int, np.ndarray | None]
) -> str | None:
    """Why the run has not shown that each row follows its env's observation, or None when it has."""
    if first is None or repeat is None or first.ndim < 2 or not _comparable(first, repeat):
        return "the answers to the same batch are not numeric arrays of one shape"
    baseline = list(range(first.shape[1]))
    if not _close(first, repeat):
        return f"the policy answered the same observations {baseline} differently: rows not matched"
    share = first.size // first.shape[1]  # one env's values: H x prod(da)
    for env, answer in nudged.items():
        if answer is None or not _comparable(answer, first):
            return f"the answer to {baseline} with env {env}'s observation nudged is not comparable"
        changed = int(np.count_nonzero(~np.isclose(answer, first, equal_nan=True, **ROW_TOLERANCE)))
        if changed == 0:
            return f"nudging env {env}'s observation changed no value: the policy does not follow observations"
        if changed > share:
            return (
                f"nudging env {env}'s observation changed {changed} values, more than one env's {share}: "
                "the policy mixes the envs of a batch"
            )
    return None


def _comparable(one: np.ndarray, other: np.ndarray) -> bool:
    return one.dtype.kind in "iuf" and other.dtype.kind in "iuf" and one.shape == other.shape


def _close(one: np.ndarray, other: np.ndarray) -> bool:
    return bool(np.allclose(one, other, equal_nan=True, **ROW_TOLERANCE))
