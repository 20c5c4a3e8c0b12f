"""Phase `episodes`: reset and step semantics, episode accounting, autoreset, step RTT."""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.core import NoReply, PhaseStopped, Report, Transcript
from checks.decision import record
from checks.rlmesh import judging, judging_episodes
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, OverLimit, StrayResponse
from checks.rlmesh.common import (
    Contract,
    LaterChecks,
    check_infos,
    configure_request,
    finish_session,
    lanes_to_exercise,
    observe,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.judging_episodes import Episode
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import fatal_ends
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.sampling import ActionSampler
from checks.rlmesh.session import opened
from checks.rlmesh.step_limit import StepLimitWatch


def answered(report: Report, response: env_pb2.JoinResponse, kind: str, where: str, t: Transcript) -> bool:
    """Record `judging.answered`: whether a valid request got its own kind of response."""
    return record(report, judging.answered(response, kind, where), t)


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
            raise PhaseStopped(judging.broken_off(exc), t) from None
        except (JoinEnded, NoReply) as exc:
            record(report, judging.unanswered(str(exc), expected="a response to every valid request"), t)
            raise PhaseStopped(f"a valid request went unanswered (see rlmesh.s1.answered): {exc}", t) from None
        finally:
            finish_session(report, session, t)
            await session.close()
            step_round_trips = [rtt for kind, rtt in session.timings if kind == "step"]
            record(report, judging_episodes.step_latency(step_round_trips, ctx.options.latency_bound_ms), t)
            record(report, judging.unknown_join_tags(session.unknown), t)


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
            if not record(report, judging_episodes.step_shape(body, lanes, where), t):
                return
            record(report, judging_episodes.rewards_finite(body, where), t)
            later.observe(body.observation, lanes, where)
            later.infos(body.infos, where)
            record_step(report, tally, body, pushed, step_number, t)
            if not contract.next_step:
                await reset_ended(ctx, later, session, episodes, t, step_number)
    finally:
        later.flush()
    record(report, judging_episodes.none_ended(tally.finished, options.step_budget), t)
    record(report, judging_episodes.step_limit(tally.step_limit, options.step_budget), t)


def record_step(
    report: Report, tally: Tally, body: env_pb2.StepResponse, pushed: list[str], step_number: int, t: Transcript
) -> None:
    """Count each lane's reward, flags and completions after one step; `judging_episodes` decides accounting and
    autoreset."""
    contract, episodes, where = tally.contract, tally.episodes, f"step {step_number}"
    lanes = contract.num_envs
    completions: dict[int, list[env_pb2.EpisodeMetadata]] = {}
    for completed in body.completed_episodes:
        completions.setdefault(completed.env_index, []).append(completed)
    decisions = []
    for lane in range(lanes):
        terminated, truncated = bool(body.terminated_mask[lane]), bool(body.truncated_mask[lane])
        reported = completions.pop(lane, [])
        if lane in tally.autoreset_next:
            decisions.append(judging_episodes.autoreset_next_step(body, lane, reported, where))
            episodes[lane] = Episode(pushed[lane], None)
            continue
        episode = episodes[lane]
        if episode.ended_at is not None:
            decisions.append(judging_episodes.autoreset_disabled(body, lane, reported, where))
            continue
        episode.steps += 1
        episode.total += body.rewards[lane]
        tally.step_limit.stepped(lane, episode.episode_id, episode.steps, terminated or truncated, where)
        if terminated or truncated:
            decisions.append(judging_episodes.completion(episode, reported, lane, terminated, truncated, where))
            tally.finished[lane] += 1
            episode.ended_at = None if contract.next_step else step_number
        elif reported:
            decisions.append(judging_episodes.completion_without_end(reported, lane, where))
    decisions += [
        judging_episodes.completion_of_no_lane(reported, lane, where) for lane, reported in completions.items()
    ]
    record(report, decisions, t)
    tally.autoreset_next = {
        lane
        for lane in range(lanes)
        if contract.next_step
        and (body.terminated_mask[lane] or body.truncated_mask[lane])
        and lane not in tally.autoreset_next
    }


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
        record(report, judging_episodes.configure_edition(edition, exc), t)
        return unpinned
    record(report, judging_episodes.configure_edition(edition, response), t)
    if await fatal_ends(report, session, response, t):
        finish_session(report, session, t)
        return await target.join(t, first)
    return session, await session.request(first)
