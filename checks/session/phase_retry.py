"""SS-09 and SS-10: the parity test's retry schedule, a deep divergence, and a truncated generation."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.session.agent import EXPECTED_LEAVES, EXPECTED_RECORDS, EXPECTED_TREE, ScheduleRun, run_schedule
from checks.session.facts import base_request, client, metadata_of, records_of, tree_mode
from checks.session.judging import tree_problems
from checks.session.options import Ctx
from checks.session.witness import Witness, check_witnessed


def linear_problems(run: ScheduleRun) -> tuple[list[str], Witness | None]:
    """v1: each retry keeps the record count and replaces the last record with the retry's.

    Also the first retry that went wrong, beside the records after it.
    """
    problems: list[str] = []
    witness = None
    for before, step in zip(run.steps, run.steps[1:], strict=False):
        records = records_of(step.snapshot)
        if step.event == "rollback":
            if len(records) != len(records_of(before.snapshot)):
                problems.append(f"{step.event}: {len(records)} records, was {len(records_of(before.snapshot))}")
            last = (records[-1].get("response") or {}).get("id") if records else None
            if last != (step.reply.body or {}).get("id"):
                problems.append(f"{step.event}: the last record is not the retry's reply {last!r}")
            if problems and witness is None:
                witness = Witness(step.reply, records, "records after it")
    return problems, witness


async def retry_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "retry schedule") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        run = await run_schedule(http, sid, base)
        mode = tree_mode(ctx, run.steps[-1].snapshot)
        bad = run.failed_step()
        if bad is not None:
            check_witnessed(
                report,
                False,
                "session.ss09.retry-topology",
                expected=f"200 for {bad.event}",
                actual=bad.reply.describe(),
                evidence=http.transcript,
                witness=Witness(bad.reply, records_of(bad.snapshot), "records after it"),
            )
            raise PhaseStopped(f"{bad.event} failed", http.transcript)
        final = records_of(run.steps[-1].snapshot)
        last = run.steps[-1]
        shown = metadata_of(last.snapshot).get("tree") if mode == "v2" else final
        witness = Witness(last.reply, {"records": final, "tree": shown} if mode == "v2" else final, "session after it")
        problems = [] if len(final) == EXPECTED_RECORDS else [f"{len(final)} records, expected {EXPECTED_RECORDS}"]
        if mode == "v2":
            problems += tree_problems(run.steps, EXPECTED_TREE, EXPECTED_LEAVES)
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
            if refused.status != 400 or [r.get("response", {}).get("id") for r in unchanged] != [
                r.get("response", {}).get("id") for r in final
            ]:
                problems.append(
                    f"a divergence 7 generations deep: {refused.describe(160)}, then {len(unchanged)} records"
                )
                witness = Witness(refused, unchanged, "records after it")
            if extended.status != 200:
                problems.append(f"extending the stored history afterwards: {extended.describe(120)}")
        await http.delete(sid)
    check_witnessed(
        report,
        not problems,
        "session.ss09.retry-topology",
        expected=f"{mode}: {EXPECTED_RECORDS} records on the active path"
        + (
            f", tree {EXPECTED_TREE}, leaves {EXPECTED_LEAVES}"
            if mode == "v2"
            else ", retries replace the last record, deep divergence 400"
        ),
        actual="; ".join(problems) or "as expected",
        evidence=http.transcript,
        witness=witness,
    )
    await truncation(ctx, mode)


async def truncation(ctx: Ctx, mode: str) -> None:
    async with client(ctx, "a generation cut by max_tokens") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        first = [{"role": "user", "content": "Tell me a long story about the sea."}]
        cut = await http.chat(sid, {**base, "messages": first, "max_tokens": 3})
        message = (cut.body or {}).get("choices", [{}])[0] if isinstance(cut.body, dict) else {}
        if cut.status != 200 or message.get("finish_reason") != "length":
            ctx.report.info(
                "session.ss10.truncation",
                actual=f"not judged: max_tokens 3 gave {cut.describe(160)}",
                evidence=http.transcript,
            )
            return
        echoed = {"role": "assistant", "content": message.get("message", {}).get("content") or ""}
        # The branch goes first: in v1 extending after it is a one-step rollback, not a deep divergence.
        branch = await http.chat(sid, {**base, "messages": [{"role": "user", "content": "A short story instead."}]})
        extend = await http.chat(sid, {**base, "messages": [*first, echoed, {"role": "user", "content": "Go on."}]})
        after = await http.get(sid)
        await http.delete(sid)
    want = 409 if mode == "v2" else 200
    check_witnessed(
        ctx.report,
        extend.status == want and branch.status == 200,
        "session.ss10.truncation",
        expected=f"{mode}: extending the truncated generation {want}, a branch before it 200",
        actual=f"extend: {extend.describe(160)}; branch: {branch.describe(80)}",
        evidence=http.transcript,
        witness=Witness(
            extend if extend.status != want else branch,
            after.body if after.is_json else after.describe(),
            "session after it",
        ),
    )
