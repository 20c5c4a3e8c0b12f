"""SS-09 and SS-10: the parity test's retry schedule, a deep divergence, and a truncated generation."""

from __future__ import annotations

from checks.decision import record
from checks.session import judging, judging_phases
from checks.session.agent import EXPECTED_LEAVES, EXPECTED_TREE, ScheduleRun, run_schedule
from checks.session.facts import base_request, client, metadata_of, records_of, tree_mode
from checks.session.options import Ctx
from checks.session.witness import Witness, record_witnessed, stop_at_failed_turn


def linear_problems(run: ScheduleRun) -> tuple[list[str], Witness | None]:
    """v1: the problems of the retries (`judging.linear_problems`), and the first retry that went wrong
    beside the records after it."""
    problems, first_wrong = judging_phases.linear_problems(run.steps)
    if first_wrong is None:
        return problems, None
    step = run.steps[first_wrong]
    return problems, Witness(step.reply, records_of(step.snapshot), "records after it")


async def retry_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "retry schedule") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        run = await run_schedule(http, sid, base)
        mode = tree_mode(ctx, run.steps[-1].snapshot)
        bad = run.failed_step()
        if bad is not None:
            decision = judging_phases.turn_failed("session.ss09.retry-topology", bad, every_turn=False)
            stop_at_failed_turn(report, decision, http.transcript, bad, f"{bad.event} failed")
        final = records_of(run.steps[-1].snapshot)
        last = run.steps[-1]
        shown = metadata_of(last.snapshot).get("tree") if mode == "v2" else final
        witness = Witness(last.reply, {"records": final, "tree": shown} if mode == "v2" else final, "session after it")
        problems = judging_phases.record_count_problems(final)
        if mode == "v2":
            problems += judging.tree_problems(run.steps, EXPECTED_TREE, EXPECTED_LEAVES)
        else:
            retried, retry_witness = linear_problems(run)
            problems += retried
            witness = retry_witness or witness
        if mode == "v1":
            deep = [
                *run.steps[-1].request["messages"][:2],
                {"role": "user", "content": "Start over: what about Paris?"},
            ]
            refused = await http.chat(sid, {**base, "messages": deep, "tools": run.steps[-1].request["tools"]})
            unchanged = records_of(await http.get(sid))
            extend = run.steps[-1].request["messages"] + [
                run.steps[-1].reply.body["choices"][0]["message"],
                {"role": "user", "content": "Bye."},
            ]
            extended = await http.chat(sid, {**base, "messages": extend, "tools": run.steps[-1].request["tools"]})
            diverged = judging_phases.deep_divergence_problem(refused, unchanged, final)
            if diverged is not None:
                problems.append(diverged)
                witness = Witness(refused, unchanged, "records after it")
            problems += [p for p in [judging_phases.extension_problem(extended)] if p is not None]
        await http.delete(sid)
    record_witnessed(report, judging_phases.retry_topology(problems, mode), http.transcript, witness)
    await truncation(ctx, mode)


async def truncation(ctx: Ctx, mode: str) -> None:
    async with client(ctx, "a generation cut by max_tokens") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        first = [{"role": "user", "content": "Tell me a long story about the sea."}]
        cut = await http.chat(sid, {**base, "messages": first, "max_tokens": 3})
        not_cut = judging_phases.truncated(cut)
        if not_cut is not None:
            record(ctx.report, not_cut, http.transcript)
            return
        message = cut.body["choices"][0]
        echoed = {"role": "assistant", "content": message.get("message", {}).get("content") or ""}
        # The branch goes first: in v1 extending after it is a one-step rollback, not a deep divergence.
        branch = await http.chat(sid, {**base, "messages": [{"role": "user", "content": "A short story instead."}]})
        extend = await http.chat(sid, {**base, "messages": [*first, echoed, {"role": "user", "content": "Go on."}]})
        after = await http.get(sid)
        await http.delete(sid)
    want = 409 if mode == "v2" else 200
    witness = Witness(
        extend if extend.status != want else branch,
        after.body if after.is_json else after.describe(),
        "session after it",
    )
    record_witnessed(ctx.report, judging_phases.truncation(extend, branch, mode), http.transcript, witness)
