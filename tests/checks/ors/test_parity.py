"""The ors parity script: two reference deployments are identical; one reward bit off is a divergence."""

import struct

from checks.ors.reference import OrsServer, serve_app, start_reference_server
from checks.parity.script import Status, run_parity, scratch_report
from checks.parity.scripts import get_script


async def parity(url_a, url_b, **options):
    script = get_script("ors")
    return await run_parity(script, script.options_model(**options), url_a, url_b, None)


class RewardOneBitOff(OrsServer):
    """The reference with the final reward one ulp above 1.0."""

    def output(self, text, reward, finished):
        result = super().output(text, reward, finished)
        if reward == 1.0:
            bits = struct.unpack(">Q", struct.pack(">d", reward))[0] ^ 1
            result["output"]["reward"] = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        return result


async def test_two_reference_servers_are_identical():
    left, right = await start_reference_server(), await start_reference_server()
    try:
        result = await parity(left.url, right.url, tasks=3, timeout=5)
    finally:
        await left.close()
        await right.close()
    assert result.status is Status.IDENTICAL, result.reason
    assert result.left.summary == "3 tasks, 9 tool calls in all"


async def test_one_reward_bit_is_a_divergence_at_that_call():
    left, off = await start_reference_server(), await serve_app(RewardOneBitOff())
    try:
        result = await parity(left.url, off.url, tasks=1, timeout=5)
    finally:
        await left.close()
        await off.close()
    assert result.status is Status.DIVERGENT
    paths = [d.path for d in result.comparison.divergences]
    assert paths == ["episodes[0].calls[2].output.reward"], paths


async def test_named_calls_record_whole_blocks_error_events_and_refusals():
    running = await start_reference_server()
    calls = [{"name": "dump", "input": {"size": 9000}}, {"name": "fail", "input": {}}, {"name": "nope", "input": {}}]
    script = get_script("ors")
    try:
        observed = await script.observe(
            running.url, script.options_model(tasks=1, calls=calls, timeout=5), scratch_report("ors")
        )
    finally:
        await running.close()
    dump, fail, nope = observed.values["episodes"][0]["calls"]
    assert dump["output"]["blocks"][0]["text"] == "x" * 9000  # reassembled from its chunks
    assert fail == {"no_result": "the fail tool raised, as it always does"}
    assert nope["ok"] is False
