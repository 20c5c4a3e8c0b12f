"""Phase `episodes`: reset and step semantics, episode accounting, autoreset, step RTT."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from functools import partial

from checks.core import NoReply, PhaseStopped, Report, Transcript, percentile, seconds, truncate
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, OverLimit, StrayResponse, summarize_episode
from checks.rlmesh.common import (
    Contract,
    LaterChecks,
    check_infos,
    configure_request,
    describe,
    finish_session,
    kind_of,
    lanes_to_exercise,
    observe,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import fatal_ends
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.sampling import ActionSampler
from checks.rlmesh.session import broken_off, opened
from checks.rlmesh.step_limit import StepLimitWatch, judge_step_limit

WARM_UP_STEPS = 3


@dataclass
class Episode:
    """What the checker counted for one lane's running episode."""

    episode_id: str
    seed: int | None
    steps: int = 0
    total: float = 0.0
    ended_at: int | None = None  # the step it ended on under DISABLED, until it is reset


def answered(report: Report, response: env_pb2.JoinResponse, kind: str, where: str, t: Transcript) -> bool:
    ok = kind_of(response) == kind
    report.check(
        ok, "rlmesh.s1.answered", expected=f"a {kind} response", actual=f"{where}: {describe(response)}", evidence=t
    )
    return ok


async def episodes_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with opened(ctx, "Join: episodes") as (target, t, contract):
        lanes = contract.num_envs
        seeds, ids = seeds_for(ctx, lanes), ctx.state.episode_ids(lanes)
        session, response = await configured_session(ctx, target, contract, reset_request(seeds, ids), t)
        try:
            if not answered(report, response, "reset", "seeded full reset", t):
                return
            observe(report, contract, response.reset.observation, lanes, "reset", t)
            check_infos(report, response.reset.infos, "reset", t)
            episodes = [Episode(ids[i], seeds[i]) for i in range(lanes)]
            await run_episodes(ctx, contract, session, episodes, t)
        except (OverLimit, StrayResponse) as exc:  # our size limit; a broken echo (rlmesh.e5.request-id-echo)
            raise PhaseStopped(broken_off(exc), t) from None
        except (JoinEnded, NoReply) as exc:
            report.failed(
                "rlmesh.s1.answered", expected="a response to every valid request", actual=str(exc), evidence=t
            )
            raise PhaseStopped(f"a valid request went unanswered (see rlmesh.s1.answered): {exc}", t) from None
        finally:
            finish_session(report, session, t)
            await session.close()
            record_latency(ctx, session, t)
            report.info(
                "rlmesh.h5.unknown-fields",
                actual=f"undeclared JoinResponse tags seen: {sorted(session.unknown)}",
                evidence=t,
            )


@dataclass
class Tally:
    """What the episodes phase counts across steps: each lane's episode, ended episodes, pending autoresets."""

    contract: Contract
    episodes: list[Episode]
    step_limit: StepLimitWatch
    finished: list[int] = field(default_factory=list)
    autoreset_next: set[int] = field(default_factory=set)  # lanes that ended on the previous step under NEXT_STEP


async def run_episodes(
    ctx: Ctx, contract: Contract, session: JoinSession, episodes: list[Episode], t: Transcript
) -> None:
    report, options = ctx.report, ctx.options
    lanes = contract.num_envs
    watched = lanes_to_exercise(ctx, contract)
    actions = ActionSampler(contract.act, rng_for(ctx, 1), lanes)
    tally = Tally(contract, episodes, StepLimitWatch.declared_by(contract), [0] * lanes)
    later = LaterChecks(report, contract, t)  # observations and infos are judged off the step path
    try:
        for step_number in range(1, options.step_budget + 1):
            if min(tally.finished[lane] for lane in watched) >= options.episodes:
                break
            pushed = [episode.episode_id for episode in episodes]
            for lane in tally.autoreset_next:
                pushed[lane] = ctx.state.episode_ids(1)[0] + f"-lane{lane}"
            response = await session.request(step_request(actions.next(), ids=pushed))
            where = f"step {step_number}"
            if not answered(report, response, "step", where, t):
                return
            body = response.step
            if not step_shape_ok(report, body, lanes, where, t):
                return
            report.check(
                codec.is_finite(body.rewards),
                "rlmesh.s1.reward-finite",
                expected="finite rewards",
                actual=partial(rewards_shown, where, body),
                evidence=t,
            )
            later.observe(body.observation, lanes, where)
            later.infos(body.infos, where)
            judge_step(report, tally, body, pushed, step_number, t)
            if not contract.next_step:
                await reset_ended(ctx, later, session, episodes, t, step_number)
    finally:
        later.flush()
    if not any(tally.finished):
        report.info(
            "rlmesh.s2.episode-accounting",
            actual=f"no lane ended within the step budget of {options.step_budget}",
            evidence=t,
        )
    judge_step_limit(report, tally.step_limit, options.step_budget, t)


def judge_step(
    report: Report, tally: Tally, body: env_pb2.StepResponse, pushed: list[str], step_number: int, t: Transcript
) -> None:
    """Each lane's reward, flags and completions after one step: accounting and autoreset."""
    contract, episodes, where = tally.contract, tally.episodes, f"step {step_number}"
    lanes = contract.num_envs
    completions: dict[int, list[env_pb2.EpisodeMetadata]] = {}
    for completed in body.completed_episodes:
        completions.setdefault(completed.env_index, []).append(completed)
    for lane in range(lanes):
        reward, terminated, truncated = (
            body.rewards[lane],
            bool(body.terminated_mask[lane]),
            bool(body.truncated_mask[lane]),
        )
        reported = completions.pop(lane, [])
        if lane in tally.autoreset_next:
            report.check(
                reward == 0 and not terminated and not truncated and not reported,
                "rlmesh.s3.autoreset",
                expected="NEXT_STEP: the step after an end starts the new episode with reward 0, flags clear",
                actual=f"{where} lane {lane}: reward {reward}, terminated {terminated}, truncated {truncated}, "
                f"completions {[summarize_episode(e) for e in reported]}",
                evidence=t,
            )
            episodes[lane] = Episode(pushed[lane], None)
            continue
        episode = episodes[lane]
        if episode.ended_at is not None:
            report.check(
                (terminated or truncated) and not reported,
                "rlmesh.s3.autoreset",
                expected="DISABLED: an ended lane stays ended, with no new episode, until reset",
                actual=f"{where} lane {lane}: terminated {terminated}, truncated {truncated}, "
                f"completions {[summarize_episode(e) for e in reported]}",
                evidence=t,
            )
            continue
        episode.steps += 1
        episode.total += reward
        tally.step_limit.stepped(lane, episode.episode_id, episode.steps, terminated or truncated, where)
        if terminated or truncated:
            check_completion(report, episode, reported, lane, terminated, truncated, where, t)
            tally.finished[lane] += 1
            episode.ended_at = None if contract.next_step else step_number
        elif reported:
            report.failed(
                "rlmesh.s2.episode-accounting",
                expected="no completion for a lane that did not end",
                actual=f"{where} lane {lane}: {[summarize_episode(e) for e in reported]}",
                evidence=t,
            )
    for lane, reported in completions.items():
        report.failed(
            "rlmesh.s2.episode-accounting",
            expected="completions only for lanes of this endpoint",
            actual=f"{where}: completion for lane {lane}: {[summarize_episode(e) for e in reported]}",
            evidence=t,
        )
    tally.autoreset_next = {
        lane
        for lane in range(lanes)
        if contract.next_step
        and (body.terminated_mask[lane] or body.truncated_mask[lane])
        and lane not in tally.autoreset_next
    }


def same_float(a: float, b: float) -> bool:
    """Equal within rounding; NaN equals NaN here, since finiteness is rlmesh.s1.reward-finite's business."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def rewards_shown(where: str, body: env_pb2.StepResponse) -> str:
    return f"{where}: rewards {list(body.rewards)[:8]}"


def step_shape_ok(report: Report, body: env_pb2.StepResponse, lanes: int, where: str, t: Transcript) -> bool:
    terminated, truncated = body.terminated_mask, body.truncated_mask
    ok = (
        len(body.rewards) == lanes
        and len(terminated) == lanes
        and len(truncated) == lanes
        and not (terminated + truncated).translate(None, b"\x00\x01")  # every mask byte is 0 or 1
        and not body.env_indices
    )
    report.check(
        ok,
        "rlmesh.s1.step-shape",
        expected=f"{lanes} rewards and mask bytes (0/1), no env_indices",
        actual=partial(step_shape_shown, where, body),  # built only when the report keeps it
        evidence=t,
    )
    return ok


def step_shape_shown(where: str, body: env_pb2.StepResponse) -> str:
    return (
        f"{where}: {len(body.rewards)} rewards, masks {list(body.terminated_mask[:8])}/"
        f"{list(body.truncated_mask[:8])}, env_indices {list(body.env_indices)[:8]}"
    )


def check_completion(
    report: Report,
    episode: Episode,
    reported: list[env_pb2.EpisodeMetadata],
    lane: int,
    terminated: bool,
    truncated: bool,
    where: str,
    t: Transcript,
) -> None:
    expected = (
        f"one completion: lane {lane}, id {episode.episode_id!r}, seed {episode.seed}, "
        f"{episode.steps} steps, return {episode.total:.6g}, terminated {terminated}, truncated {truncated}"
    )
    if len(reported) != 1:
        report.failed(
            "rlmesh.s2.episode-accounting",
            expected=expected,
            actual=f"{where}: {len(reported)} completions for lane {lane}",
            evidence=t,
        )
        return
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
    report.check(
        not problems,
        "rlmesh.s2.episode-accounting",
        expected=expected,
        actual=f"{where}: {summarize_episode(got)}" + (f" (wrong {', '.join(problems)})" if problems else ""),
        evidence=t,
    )


async def reset_ended(
    ctx: Ctx,
    later: LaterChecks,
    session: JoinSession,
    episodes: list[Episode],
    t: Transcript,
    step_number: int,
) -> None:
    """Under DISABLED, reset lanes that ended before this step (each had one more step to prove it stays ended)."""
    contract = later.contract
    lanes = contract.num_envs
    stale = [lane for lane, e in enumerate(episodes) if e.ended_at is not None and e.ended_at < step_number]
    if not stale:
        return
    offset = 100 * step_number
    if lanes > 1 and contract.subset_step:
        for lane in stale:
            seed, new_id = ctx.options.seed + offset + lane, ctx.state.episode_ids(1)[0]
            where = f"partial reset of lane {lane}"
            response = await session.request(reset_request([seed], [new_id], [lane]))
            if not answered(ctx.report, response, "reset", where, t):
                raise PhaseStopped(f"{where} was refused (see rlmesh.s1.answered)", t)
            later.observe(response.reset.observation, 1, where)
            episodes[lane] = Episode(new_id, seed)
        return
    if len(stale) < lanes:
        return  # no partial reset here: wait until every lane has ended
    seeds, ids = seeds_for(ctx, lanes, offset), ctx.state.episode_ids(lanes)
    response = await session.request(reset_request(seeds, ids))
    if not answered(ctx.report, response, "reset", "full reset after every lane ended", t):
        raise PhaseStopped("the full reset after every lane ended was refused (see rlmesh.s1.answered)", t)
    later.observe(response.reset.observation, lanes, "reset")
    episodes[:] = [Episode(ids[i], seeds[i]) for i in range(lanes)]


async def configured_session(
    ctx: Ctx, target: Endpoint, contract: Contract, first: env_pb2.JoinRequest, t: Transcript
) -> tuple[JoinSession, env_pb2.JoinResponse]:
    """Open a Join as the runtime does, pinning the workflow edition first, then exchange `first`.

    When the pin ends the session (or goes unanswered), `first` opens a new one without it.
    """
    report = ctx.report
    edition, configure = configure_request(contract)
    try:
        session, response = await target.join(t, configure)
    except NoReply as exc:
        unpinned = await target.join(t, first)  # if this goes unanswered too, nothing is answered: not the pin's fault
        report.failed(
            "rlmesh.h2.configure-edition",
            expected="a configure response",
            actual=f"configure {truncate(edition, 40)!r}: {exc}, while a Join opened with a reset is answered",
            evidence=t,
        )
        return unpinned
    report.check(
        kind_of(response) == "configure",
        "rlmesh.h2.configure-edition",
        expected="a configure response",
        actual=f"configure {truncate(edition, 40)!r}: {describe(response)}",
        evidence=t,
    )
    if await fatal_ends(report, session, response, t):
        finish_session(report, session, t)
        return await target.join(t, first)
    return session, await session.request(first)


def record_latency(ctx: Ctx, session: JoinSession, t: Transcript) -> None:
    rtts = [rtt for kind, rtt in session.timings if kind == "step"][WARM_UP_STEPS:]
    if len(rtts) < 3:
        return
    median, p99 = statistics.median(rtts), percentile(rtts, 0.99)
    text = f"step round trip over {len(rtts)} steps: median {seconds(median)}, p99 {seconds(p99)}"
    bound = ctx.options.latency_bound_ms
    if bound is None:
        ctx.report.info("rlmesh.o1.step-latency", actual=text, evidence=t)
    else:
        ctx.report.check(
            median * 1000 <= bound,
            "rlmesh.o1.step-latency",
            expected=f"median <= {bound:g} ms",
            actual=text,
            evidence=t,
        )
