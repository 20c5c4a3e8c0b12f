"""Parity scripts against live servers: identical pairs, and pairs that diverge in one bit, one lane or one shape."""

import struct
from typing import Any

import numpy as np
import pytest

from checks.parity.compare import compare
from checks.parity.recording import load_golden, save_golden
from checks.parity.script import Status, record, run_parity
from checks.parity.scripts import get_script
from checks.parity.values import Map, Seq, canonical
from checks.plugrl.reference import start_reference_server as start_plugrl
from checks.session.backend import Backend
from checks.session.reference import SessionServer, serve_app
from checks.session.reference import start_reference_server as start_session


def flip_last_bit(value: float) -> float:
    bits = struct.unpack(">Q", struct.pack(">d", value))[0] ^ 1
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


async def parity(kind, url_a, url_b=None, golden=None, **options):
    script = get_script(kind)
    return await run_parity(script, script.options_model(**options), url_a, url_b, golden)


# ---------------------------------------------------------------- plugrl-server


class NudgedPolicy:
    """The reference policy with one action value one float32 ulp off."""

    def __init__(self, policy):
        self.policy, self.horizon, self.action_dim = policy, policy.horizon, policy.action_dim

    async def act(self, features):
        action = await self.policy.act(features)
        action = action.copy()
        action[0, 0, 0] = np.nextafter(action[0, 0, 0], np.float32(np.inf), dtype=np.float32)
        return action


def nudged(policy):
    """A NudgedPolicy named as the policy it wraps, so the server's metadata is the same, as a rebuild's would be
    (the metadata leads the comparison: a policy of another name would be the first divergence)."""
    return type(type(policy).__name__, (NudgedPolicy,), {})(policy)


class SamplingPolicy(NudgedPolicy):
    async def act(self, features):
        action = await self.policy.act(features)
        return action + np.random.default_rng().normal(size=action.shape).astype(np.float32)


@pytest.fixture
async def plugrl_pair():
    servers = [await start_plugrl(), await start_plugrl()]
    yield servers
    for server in servers:
        await server.close()


async def test_two_plugrl_reference_servers_are_identical(plugrl_pair, tmp_path):
    a, b = plugrl_pair
    result = await parity("plugrl-server", a.url, b.url, timeout=5)
    assert result.status is Status.IDENTICAL, result.reason
    save_golden(result.left, tmp_path / "golden.json")
    again = await parity("plugrl-server", b.url, golden=load_golden(tmp_path / "golden.json"), timeout=5)
    assert again.status is Status.IDENTICAL, again.reason


async def test_one_float32_ulp_in_an_action_is_a_divergence(plugrl_pair):
    a, b = plugrl_pair
    b.policy = nudged(b.policy)
    result = await parity("plugrl-server", a.url, b.url, timeout=5)
    assert result.status is Status.DIVERGENT and result.exit_code == 1
    assert result.first.path == "actions[0][0,0,0]"
    assert result.first.left.bytes_hex != result.first.right.bytes_hex


async def test_a_sampling_policy_is_not_judged(plugrl_pair):
    a, b = plugrl_pair
    b.policy = SamplingPolicy(b.policy)
    result = await parity("plugrl-server", a.url, b.url, timeout=5)
    assert result.status is Status.UNDECIDED and result.exit_code == 2
    assert "not judged" in result.reason


# ---------------------------------------------------------------- session-server


class OneBitOffBackend(Backend):
    """The reference backend with the first logprob of every generation one bit off."""

    async def chat(self, body):
        reply = await super().chat(body)
        if reply.status == 200:
            pairs = reply.body["choices"][0]["meta_info"]["output_token_logprobs"]
            pairs[0][0] = flip_last_bit(pairs[0][0])
        return reply


async def test_reference_session_server_v1_and_v2_are_identical():
    v1, v2 = await start_session(tree="v1", backend_delay=0), await start_session(tree="v2", backend_delay=0)
    try:
        result = await parity("session-server", v1.url, v2.url, trajectories=3, timeout=10)
    finally:
        await v1.close()
        await v2.close()
    assert result.status is Status.IDENTICAL, result.reason
    assert "3 trajectories, 27 calls" in result.left.summary


class IdMintingBackend(Backend):
    """The reference backend minting a fresh random id wherever sglang's shapes carry one: the response id,
    `choices[0].meta_info.id`, every tool-call id, and `meta_info.rid`, so two runs share no id at any level."""

    async def chat(self, body):
        reply = await super().chat(body)
        if reply.status == 200:
            import uuid

            reply.body["id"] = f"chatcmpl-{uuid.uuid4().hex}"
            for choice in reply.body["choices"]:
                meta = choice.setdefault("meta_info", {})
                meta["id"], meta["rid"] = uuid.uuid4().hex, uuid.uuid4().hex
                for call in choice["message"].get("tool_calls") or []:
                    call["id"] = f"call_{uuid.uuid4().hex[:24]}"
        return reply


async def session_parity(first: Any, second: Any) -> Any:
    """Parity of two running session servers over two trajectories; both are closed after."""
    try:
        return await parity("session-server", first.url, second.url, trajectories=2, timeout=10)
    finally:
        await first.close()
        await second.close()


async def test_servers_minting_different_ids_at_every_level_are_identical():
    """Issue 19 item 11: v1 and v2 with bitwise-equal samples, every id random, are not judged divergent."""
    v1 = await serve_app(SessionServer("v1", IdMintingBackend(delay=0)))
    result = await session_parity(v1, await serve_app(SessionServer("v2", IdMintingBackend(delay=0))))
    assert result.status is Status.IDENTICAL, [d.path for d in result.comparison.divergences][:8]


async def test_one_logprob_bit_in_the_samples_is_named_with_both_byte_strings():
    v1 = await start_session(tree="v1", backend_delay=0)
    result = await session_parity(v1, await serve_app(SessionServer("v1", OneBitOffBackend(delay=0))))
    assert result.status is Status.DIVERGENT
    paths = [d.path for d in result.comparison.divergences]
    assert any(".samples.samples[0].tensors.rollout_log_probs[" in p for p in paths), paths
    sample = next(d for d in result.comparison.divergences if "rollout_log_probs" in d.path)
    assert len(sample.left.bytes_hex) == len(sample.right.bytes_hex) == 16
    assert sample.left.bytes_hex != sample.right.bytes_hex


async def test_a_different_tree_shape_diverges():
    """A v2 recording against the same recording with node 8 hung under node 6 instead of 7."""
    v2 = await start_session(tree="v2", backend_delay=0)
    try:
        recorded = await record(get_script("session-server"), v2.url, get_script("session-server").options_model())
    finally:
        await v2.close()
    trajectory = recorded.values.get("trajectories").items[0]
    tree = trajectory.get("tree")
    nodes = tree.get("nodes")
    assert nodes.items[8] == canonical([8, 7])
    moved = replace(tree, "nodes", Seq((*nodes.items[:8], canonical([8, 6]))))
    comparison = compare(trajectory, replace(trajectory, "tree", moved), get_script("session-server").projections)
    assert comparison.first.path == "tree.nodes[8][1]"
    assert comparison.first.left.bytes_hex == b"7".hex() and comparison.first.right.bytes_hex == b"6".hex()


def replace(node: Map, key: str, value) -> Map:
    return Map(tuple((k, value if k == key else v) for k, v in node.items))


# ---------------------------------------------------------------- openai-chat


async def test_two_openai_reference_endpoints_are_identical():
    from checks.openai.reference import make_app
    from tests.checks.openai.helpers import serving

    with serving(make_app()) as a, serving(make_app()) as b:
        result = await parity("openai-chat", a, b, requests=6, timeout=5)
    assert result.status is Status.IDENTICAL, result.reason
    assert result.units_total == 6 and result.divergent_units == 0


def test_a_script_without_units_counts_no_divergent_units():
    """Divergences in a top-level list of a unit-less script are not "units": the result must not
    say 0 units in all beside a positive count of divergent ones."""
    from checks.parity.recording import Recording
    from checks.parity.script import judge

    script = get_script("session-server")
    assert script.unit is None
    left = Recording("session-server", "a", script.version, {}, canonical({"trajectories": [1, 2, 3]}))
    right = Recording("session-server", "b", script.version, {}, canonical({"trajectories": [1, 5, 6]}))
    result = judge(script, script.options_model(), left, right)
    assert result.status is Status.DIVERGENT
    shown = result.to_dict()
    assert shown["units_total"] == 0 and shown["divergent_units"] == 0 and shown["unit"] is None


async def test_a_server_declaring_another_policy_is_named_by_its_metadata_first(plugrl_pair):
    """Issue 32 item 8: the root (what the server declares) is named before its consequences (the actions)."""
    a, b = plugrl_pair
    b.policy = NudgedPolicy(b.policy)  # another class name in the metadata, and an action one ulp off
    result = await parity("plugrl-server", a.url, b.url, timeout=5)
    assert result.status is Status.DIVERGENT
    assert result.first.path == "metadata.policy"
    assert any(d.path == "actions[0][0,0,0]" for d in result.comparison.divergences)
