"""The episodes phase's rules as pure functions: a step response, a lane's counted episode or a tally in, Decisions out.

The phase steps and counts (`Episode`, `StepLimitWatch`); these judges decide
what each step, each completion and the whole run of steps show.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from checks.core import NoReply, percentile, seconds
from checks.decision import Decision, check, info, missed, passed
from checks.evidence import truncate
from checks.rlmesh import codec
from checks.rlmesh.client import summarize_episode
from checks.rlmesh.judging import describe, kind_of
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.step_limit import StepLimitWatch

WARM_UP_STEPS = 3  # the first step round trips, left out of the latency figure
CONFIGURED = "a configure response"
FINITE = "finite rewards"


@dataclass
class Episode:
    """What the checker counted for one lane's running episode."""

    episode_id: str
    seed: int | None
    steps: int = 0
    total: float = 0.0
    ended_at: int | None = None  # the step it ended on under DISABLED, until it is reset


def configure_edition(edition: str, response: env_pb2.JoinResponse | NoReply) -> Decision:
    """A Join opened with a ConfigureEnvRequest is acknowledged with `configure` (NoReply: the pin went unanswered,
    while a Join opened with a reset is answered)."""
    pinned = f"configure {truncate(edition, 40)!r}"
    if isinstance(response, NoReply):
        actual = f"{pinned}: {response}, while a Join opened with a reset is answered"
        return missed("rlmesh.h2.configure-edition", expected=CONFIGURED, actual=actual)
    return check(
        kind_of(response) == "configure",
        "rlmesh.h2.configure-edition",
        expected=CONFIGURED,
        actual=f"{pinned}: {describe(response)}",
    )


def step_shape(body: env_pb2.StepResponse, lanes: int, where: str) -> Decision:
    """One reward and one 0/1 mask byte per lane, and no env_indices, on a full-width step.

    Judged on every step of the loop, so a pass says only what it confirmed; a miss shows what came.
    """
    terminated, truncated = body.terminated_mask, body.truncated_mask
    expected = f"{lanes} rewards and mask bytes (0/1), no env_indices"
    if (
        len(body.rewards) == lanes
        and len(terminated) == lanes
        and len(truncated) == lanes
        and not (terminated + truncated).translate(None, b"\x00\x01")  # every mask byte is 0 or 1
        and not body.env_indices
    ):
        return passed("rlmesh.s1.step-shape", expected=expected, actual=f"{where}: {lanes} rewards and mask bytes")
    return missed(
        "rlmesh.s1.step-shape",
        expected=expected,
        actual=f"{where}: {len(body.rewards)} rewards, masks {list(terminated[:8])}/{list(truncated[:8])}, "
        f"env_indices {list(body.env_indices[:8])}",
    )


def rewards_finite(body: env_pb2.StepResponse, where: str) -> Decision:
    """Judged on every step of the loop, so a pass names only how many rewards; a miss shows them."""
    if codec.is_finite(body.rewards):
        return passed("rlmesh.s1.reward-finite", expected=FINITE, actual=f"{where}: {len(body.rewards)} finite")
    return missed("rlmesh.s1.reward-finite", expected=FINITE, actual=f"{where}: rewards {list(body.rewards[:8])}")


def flags_of(body: env_pb2.StepResponse, lane: int) -> str:
    return f"terminated {bool(body.terminated_mask[lane])}, truncated {bool(body.truncated_mask[lane])}"


def completions_shown(reported: list[env_pb2.EpisodeMetadata]) -> str:
    return f"completions {[summarize_episode(e) for e in reported]}"


def autoreset_next_step(
    body: env_pb2.StepResponse, lane: int, reported: list[env_pb2.EpisodeMetadata], where: str
) -> Decision:
    """NEXT_STEP: the step after a lane ended starts its new episode, reward 0, both flags clear, nothing completed."""
    reward = body.rewards[lane]
    fresh = reward == 0 and not body.terminated_mask[lane] and not body.truncated_mask[lane] and not reported
    return check(
        fresh,
        "rlmesh.s3.autoreset",
        expected="NEXT_STEP: the step after an end starts the new episode with reward 0, flags clear",
        actual=f"{where} lane {lane}: reward {reward}, {flags_of(body, lane)}, {completions_shown(reported)}",
    )


def autoreset_disabled(
    body: env_pb2.StepResponse, lane: int, reported: list[env_pb2.EpisodeMetadata], where: str
) -> Decision:
    """DISABLED: a lane that ended stays ended, and completes nothing more, until it is reset."""
    still_ended = bool(body.terminated_mask[lane] or body.truncated_mask[lane])
    return check(
        still_ended and not reported,
        "rlmesh.s3.autoreset",
        expected="DISABLED: an ended lane stays ended, with no new episode, until reset",
        actual=f"{where} lane {lane}: {flags_of(body, lane)}, {completions_shown(reported)}",
    )


def same_float(a: float, b: float) -> bool:
    """Equal within rounding; NaN equals NaN here, since finiteness is rlmesh.s1.reward-finite's business."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def completion(
    episode: Episode,
    reported: list[env_pb2.EpisodeMetadata],
    lane: int,
    terminated: bool,
    truncated: bool,
    where: str,
) -> Decision:
    """A lane that ended is reported once, with the episode the checker counted: id, seed, steps, return, flags."""
    expected = (
        f"one completion: lane {lane}, id {episode.episode_id!r}, seed {episode.seed}, "
        f"{episode.steps} steps, return {episode.total:.6g}, terminated {terminated}, truncated {truncated}"
    )
    if len(reported) != 1:
        actual = f"{where}: {len(reported)} completions for lane {lane}"
        return missed("rlmesh.s2.episode-accounting", expected=expected, actual=actual)
    got = reported[0]
    seed = got.seed if got.HasField("seed") else None
    problems = [
        name
        for name, ok in (
            ("episode_id", got.episode_id == episode.episode_id),
            ("seed", seed == episode.seed),
            ("step_count", got.step_count == episode.steps),
            ("cumulative_reward", same_float(got.cumulative_reward, episode.total)),
            ("terminated/truncated", got.terminated == terminated and got.truncated == truncated),
            ("timestamps", got.start_timestamp_ns <= got.end_timestamp_ns),
        )
        if not ok
    ]
    return check(
        not problems,
        "rlmesh.s2.episode-accounting",
        expected=expected,
        actual=f"{where}: {summarize_episode(got)}" + (f" (wrong {', '.join(problems)})" if problems else ""),
    )


def completion_without_end(reported: list[env_pb2.EpisodeMetadata], lane: int, where: str) -> Decision:
    """A completion reported for a lane whose masks say it did not end."""
    return missed(
        "rlmesh.s2.episode-accounting",
        expected="no completion for a lane that did not end",
        actual=f"{where} lane {lane}: {[summarize_episode(e) for e in reported]}",
    )


def completion_of_no_lane(reported: list[env_pb2.EpisodeMetadata], lane: int, where: str) -> Decision:
    """A completion naming a lane the endpoint does not have."""
    return missed(
        "rlmesh.s2.episode-accounting",
        expected="completions only for lanes of this endpoint",
        actual=f"{where}: completion for lane {lane}: {[summarize_episode(e) for e in reported]}",
    )


def none_ended(finished: list[int], step_budget: int) -> list[Decision]:
    """When no lane ended within the budget, accounting is left as information (nothing to account for)."""
    if any(finished):
        return []
    return [info("rlmesh.s2.episode-accounting", actual=f"no lane ended within the step budget of {step_budget}")]


def step_limit(watch: StepLimitWatch, step_budget: int) -> Decision:
    """An episode stepped past the limit the contract declares has ended; not judged without a limit or a run to it."""
    limit = watch.limit
    if limit is None:
        why = f"its {watch.source} is not a positive whole number" if watch.source else "the contract declares none"
        return info("rlmesh.s2.step-limit", actual=f"not judged, because no step limit is declared: {why}")
    expected = f"every episode ended by its step {limit + 1} ({watch.source})"
    if watch.overrun is not None:
        return missed("rlmesh.s2.step-limit", expected=expected, actual=watch.overrun)
    if watch.reached is not None:
        return passed("rlmesh.s2.step-limit", expected=expected, actual=watch.reached)
    if step_budget <= limit:
        return info(
            "rlmesh.s2.step-limit",
            actual=f"not judged, because the step budget of {step_budget} cannot take an episode past the "
            f"declared limit of {limit}",
        )
    longest = f"the longest took {watch.longest} steps" if watch.longest else "none ended"
    return info(
        "rlmesh.s2.step-limit",
        actual=f"not judged, because no episode reached the declared limit of {limit} steps ({longest})",
    )


def step_latency(step_round_trips: list[float], bound_ms: float | None) -> list[Decision]:
    """The median step round trip (after the warm-up) within the bound, or as information without one."""
    rtts = step_round_trips[WARM_UP_STEPS:]
    if len(rtts) < 3:
        return []
    median, p99 = statistics.median(rtts), percentile(rtts, 0.99)
    text = f"step round trip over {len(rtts)} steps: median {seconds(median)}, p99 {seconds(p99)}"
    if bound_ms is None:
        return [info("rlmesh.o1.step-latency", actual=text)]
    return [
        check(median * 1000 <= bound_ms, "rlmesh.o1.step-latency", expected=f"median <= {bound_ms:g} ms", actual=text)
    ]
