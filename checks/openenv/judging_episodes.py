"""Pure judgements of played episodes: determinism, isolation, seeds, the expected reward, termination.

Comparing two episodes says something only when the env is meant to repeat itself: the
target declares it deterministic, or the reset data sends a seed the run shows applied (two
fresh sessions reset with it gave the same first observation). The seed is optional in
OpenEnv, so without either an env drawing a random side per episode would fail by chance;
then the clause is `info` "not judged". An "identical" verdict also needs actions that
reached the env: when no step's observation differs from its reset's, identical runs show
nothing, and the clause says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checks.core import summarize
from checks.decision import Decision, check, info, missed, passed, unsupported
from checks.openenv.episodes import EpisodeRun, difference
from checks.openenv.judging import reward_of, signature
from checks.openenv.options import OpenEnvOptions
from checks.openenv.session import Reply

SEQUENTIAL = "openenv.determinism.sequential"
GROUP = "openenv.determinism.group"
ISOLATION = "openenv.isolation.sessions"
SEED_REPLAY = "openenv.reset.seed-replay"


def sent_seed(reset: dict[str, Any]) -> int | None:
    seed = reset.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def seed_shown(firsts: Sequence[Reply]) -> bool:
    """Whether resets with one seed, each in a fresh session, all gave the same first observation frame."""
    return len(firsts) >= 2 and firsts[0].kind == "observation" and len({signature(r) for r in firsts}) == 1


def why_unrepeatable(options: OpenEnvOptions, shown: bool | None) -> str | None:
    """Why episodes of this env need not repeat (None: they must, so comparing them judges something)."""
    if options.deterministic:
        return None
    seed = sent_seed(options.reset)
    if seed is None:
        return (
            "the reset data sends no seed (it is optional) and the target does not declare the env "
            "deterministic, so episodes may differ by design"
        )
    if shown is False:
        return (
            f"seed {seed} gave two fresh sessions different first observations, so the env does not apply it, "
            "and the target does not declare the env deterministic"
        )
    return None if shown else f"nothing in this run showed seed {seed} applied"


def unreached(runs: Sequence[EpisodeRun]) -> str | None:
    """Why identical runs show nothing: no step's observation differed from its reset's (None: some did)."""
    for run in runs:
        start = _observation(run.reset)
        if any(step.kind == "observation" and _observation(step) != start for step in run.steps):
            return None
    return "the actions did not reach the env: no step's observation differed from its reset's"


def _observation(reply: Reply) -> Any:
    data = reply.data if isinstance(reply.data, dict) else {}
    return data.get("observation")


def _identical(
    clause_id: str, runs: Sequence[EpisodeRun], odd_one: EpisodeRun | None, why_not: str | None, expected: str
) -> Decision:
    """An "identical runs" clause: not judged where episodes need not repeat, passed only where actions reached."""
    seen = difference(runs[0], odd_one) if odd_one is not None else f"{len(runs[0].frames())} frames identical"
    if why_not is not None:
        return info(clause_id, actual=f"not judged: {why_not} ({seen})", expected=expected)
    if odd_one is not None:
        return missed(clause_id, expected=expected, actual=seen)
    blind = unreached(runs)
    if blind is not None:
        return info(clause_id, actual=f"not judged: {blind} ({seen})", expected=expected)
    return passed(clause_id, expected=expected, actual=seen)


def sequential(first: EpisodeRun, second: EpisodeRun, why_not: str | None) -> Decision:
    """openenv.determinism.sequential on the scripted episode played alone twice."""
    odd_one = None if first.frames() == second.frames() else second
    return _identical(SEQUENTIAL, [first, second], odd_one, why_not, "identical frames in both runs")


def group(runs: Sequence[EpisodeRun], why_not: str | None) -> Decision:
    """openenv.determinism.group on an identical parallel group."""
    odd_one = next((run for run in runs if run.frames() != runs[0].frames()), None)
    decision = _identical(GROUP, runs, odd_one, why_not, f"{len(runs)} identical sessions give identical frames")
    rewards = f"; final rewards {[run.final_reward for run in runs]}"
    return Decision(decision.clause_id, decision.outcome, decision.expected, decision.actual + rewards)


def group_unsupported() -> list[Decision]:
    return [unsupported(clause_id, "the group size is 1") for clause_id in (GROUP, ISOLATION)]


def isolation(
    alone: Sequence[EpisodeRun],
    together: Sequence[EpisodeRun],
    frames_why_not: str | None,
    sent_ids: Sequence[Any] | None = None,
) -> Decision:
    """openenv.isolation.sessions: each parallel session sees what it sees alone.

    Frames are compared only where episodes must repeat (`frames_why_not` None). Otherwise the state
    is, as far as the run fixes it: the episode id where the solo run adopted the id it sent
    (`sent_ids`; an env may make its own), the step count where both runs took as many steps."""
    mismatches = []
    for index, (solo, shared) in enumerate(zip(alone, together, strict=True)):
        if frames_why_not is None:
            if solo.frames() != shared.frames() or solo.state_summary() != shared.state_summary():
                mismatches.append(f"session {index + 1}: {difference(solo, shared, with_state=True)}")
        elif not _states_agree(solo, shared, sent_ids[index] if sent_ids is not None else None):
            mismatches.append(
                f"session {index + 1}: state (episode_id, step_count) {solo.state_summary()} alone "
                f"vs {shared.state_summary()} together"
            )
    expected = "each parallel session sees what it sees alone"
    if mismatches:
        return missed(ISOLATION, expected=expected, actual="; ".join(mismatches[:2]))
    agree = f"{len(alone)} sessions agree with their solo runs"
    if frames_why_not is not None:
        return info(
            ISOLATION,
            expected=expected,
            actual=f"not judged: frames not compared, because {frames_why_not}; "
            f"the episode ids and step counts the run fixes agree in {len(alone)} sessions",
        )
    blind = unreached(alone)
    if blind is not None:
        return info(ISOLATION, expected=expected, actual=f"not judged: {blind} ({agree})")
    return passed(ISOLATION, expected=expected, actual=agree)


def _states_agree(solo: EpisodeRun, shared: EpisodeRun, sent_id: Any) -> bool:
    """What two runs that need not repeat must still share: an adopted episode id, a count of as many steps."""
    (solo_id, solo_count), (shared_id, shared_count) = solo.state_summary(), shared.state_summary()
    ids_fixed = sent_id is None or solo_id == sent_id
    counts_fixed = len(solo.steps) == len(shared.steps)
    return (not ids_fixed or solo_id == shared_id) and (not counts_fixed or solo_count == shared_count)


def seed_replay(seed: int, first: EpisodeRun, again: EpisodeRun, why_not: str | None) -> Decision:
    """openenv.reset.seed-replay: the seed played twice in one session gives the same frames."""
    odd_one = None if again.frames() == first.frames() else again
    expected = f"seed {seed} played twice in one session gives the same frames"
    return _identical(SEED_REPLAY, [first, again], odd_one, why_not, expected)


def expected_reward(options: OpenEnvOptions, run: EpisodeRun) -> Decision:
    """openenv.replay.expected-reward on one run of the scripted episode."""
    expected = options.expected_reward
    if expected is None:
        return unsupported("openenv.replay.expected-reward", "the target declares no expected_reward")
    return check(
        run.done and run.final_reward == expected,
        "openenv.replay.expected-reward",
        expected=f"done with reward {expected}",
        actual=run.describe(),
    )


def task_id(base: str, contrast: str, first: Any, second: Any) -> Decision:
    """openenv.reset.task-id on the first observations of the two tasks."""
    return check(
        first is not None and second is not None and first != second,
        "openenv.reset.task-id",
        expected=f"different first observations for task {base!r} and {contrast!r}",
        actual=f"{summarize(first, 120)} vs {summarize(second, 120)}",
    )


def seed_effect(seed: int, tried: list[int], differs: bool, seed_dependent: bool, unseeded_same: bool) -> Decision:
    """openenv.reset.seed: some other seed changes the episode, where the env is shown to depend on a seed."""
    if not differs and not seed_dependent and unseeded_same:
        return info(
            "openenv.reset.seed",
            actual=f"not judged: seeds {[seed, *tried]} and no seed all play the same episode, so "
            "nothing shows the env depends on a seed (a target declares seed_dependent to judge it)",
        )
    return check(
        differs,
        "openenv.reset.seed",
        expected=f"some seed other than {seed} changes the frames",
        actual=f"seed {tried[-1]} changed the frames" if differs else f"seeds {tried} changed no frame",
    )


def termination(options: OpenEnvOptions, run: EpisodeRun) -> Decision:
    """openenv.termination.within-budget on the scripted episode played to its end."""
    clause_id = "openenv.termination.within-budget"
    if options.endless:
        return info(clause_id, actual=f"not judged: the target declares endless episodes; {run.describe()}")
    if options.max_steps is None and not run.done:
        return info(
            clause_id,
            actual="not judged: the target declares no max_steps and nothing on the wire promises an end; "
            + run.describe(),
        )
    return check(run.done, clause_id, expected=f"done within {options.step_budget} steps", actual=run.describe())


def after_done(after: Reply) -> Decision:
    """openenv.termination.after-done: what a step sent after done got, recorded."""
    return info(
        "openenv.termination.after-done",
        actual=f"{after.kind or 'no'} frame, reward {reward_of(after)!r}: {after.describe()}",
    )
