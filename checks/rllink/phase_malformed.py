"""The malformed phase: one malformed frame per connection; after each the server must close and serve a
fresh connection after its back-off (or keep answering), never hang or die. The weights sequence must
survive the reconnects."""

from __future__ import annotations

import json

import msgpack

from checks.core import PhaseStopped
from checks.decision import record
from checks.rllink import judging
from checks.rllink.codec import Dialect, encode, frame
from checks.rllink.options import Ctx
from checks.rllink.replies import expect_reply
from checks.rllink.session import after_bad_input, shared_link
from checks.rllink.state_reply import judge_state


def malformed_frames(dialect: Dialect) -> list[tuple[str, bytes]]:
    def body(value: object) -> bytes:
        return frame(
            json.dumps(value).encode() if dialect == "json" else bytes(msgpack.packb(value, use_bin_type=True))
        )

    other: Dialect = "json" if dialect == "msgpack" else "msgpack"
    return [
        ("header GARBAGE!", b"GARBAGE!"),
        ("header -0000001", b"-0000001"),
        ("an empty body", b"00000000"),
        ("an undecodable body", frame(b"\xc1\xc1\xc1" if dialect == "msgpack" else b"{not json")),
        ("a list body", body(["PING"])),
        ("a map without type", body({"kind": "PING"})),
        ("type FOO", body({"type": "FOO"})),
        ("type ping (lower case)", body({"type": "ping"})),
        ("type as a number", body({"type": 7})),
        (f"a {other} PING", encode({"type": "PING"}, other)),
    ]


async def malformed_phase(ctx: Ctx) -> None:
    report, state = ctx.report, ctx.state
    dialect = state.dialect
    assert dialect is not None
    reconnected = False
    for what, data in malformed_frames(dialect):
        link = await shared_link(ctx, f"malformed: {what}")
        await link.send_raw(data, what)
        state.link = None
        outcome, link_after, detail = await after_bad_input(ctx, link, f"after {what}")
        decision = judging.recovery("rllink.malformed.recovery", what, outcome, detail, link_after is not None)
        if link_after is None:
            record(report, decision, link.transcript)
            raise PhaseStopped(f"the server is {outcome} after {what}", link.transcript)
        state.link = link_after
        record(report, decision, link_after.transcript)
        if outcome == "closed and recovered" and not reconnected:
            reconnected = True
            await link_after.send({"type": "GET_STATE"}, dialect)
            judge_state(
                ctx, await expect_reply(ctx, link_after, "SET_STATE", "rllink.state.shape"), link_after, "a reconnect"
            )
