"""The plugrl-server parity script: the same observation batches give the same action bytes.

First one batch is sent twice: a server that answers it two ways samples its
actions, so no comparison can judge it (`not judged`). Then a fixed sequence
of batches (a pure function of the env indices) is sent, each followed by a
feedback, and every action array is recorded with its dtype, shape and bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pydantic

from checks.core import PhaseContext, Report
from checks.parity.projections import Projection
from checks.parity.script import ExactScript, Observed, ParityOptions
from checks.plugrl.options import PlugRLServerOptions, RunState
from checks.plugrl.probe import Probe

# Env batches sent after the repeat check: full, partial, shuffled and single-env batches.
BATCHES = ([0, 1, 2, 3], [0, 1, 2, 3], [2, 0], [3, 1, 0, 2], [5], [0, 1, 2, 3, 4, 5])
REPEATED = [0, 1, 2]


class PlugrlParityOptions(ParityOptions):
    state_key: str = pydantic.Field("obs", min_length=1, description="Name of the states array sent to the policy.")
    state_dim: int = pydantic.Field(3, ge=1, le=4096, description="Width of the states array.")
    image_key: str | None = pydantic.Field(None, description="Name of a camera image to send too, if needed.")
    image_size: int = pydantic.Field(224, ge=1, le=2048, description="Height and width of that image.")
    rounds: int = pydantic.Field(2, ge=1, le=100, description="Times the batch sequence is sent.")
    api_key: pydantic.SecretStr | None = pydantic.Field(None, description="Sent as 'Authorization: Api-Key <key>'.")


def action_value(action: np.ndarray[Any, Any] | None) -> Any:
    return action if action is not None else {"no_array": True}


class PlugrlScript(ExactScript):
    kind = "plugrl-server"
    version = "1"
    options_model = PlugrlParityOptions
    recorded_inputs = frozenset({"state_key", "state_dim", "image_key", "image_size", "rounds"})
    leading: tuple[str, ...] = ("metadata",)  # the action horizon and shapes the actions follow from
    # Two builds name themselves differently; everything else in the metadata must agree.
    projections = (Projection("metadata.server_version", "drop"), Projection("metadata.server", "drop"))

    async def observe(self, url: str, options: PlugrlParityOptions, report: Report) -> Observed:
        suite_options = PlugRLServerOptions(
            timeout=options.timeout,
            state_key=options.state_key,
            state_dim=options.state_dim,
            image_key=options.image_key,
            image_size=options.image_size,
            api_key=options.api_key,
        )
        probe = Probe(PhaseContext(url, suite_options, report, RunState()), "parity")
        try:
            metadata = await probe.open()
            first = await probe.cycle(REPEATED)
            again = await probe.cycle(REPEATED)
            unjudgeable = None
            if not _same(first, again):
                unjudgeable = "the same observation batch was answered with different actions (a sampling policy)"
            actions = [action_value(await probe.cycle(list(envs))) for _ in range(options.rounds) for envs in BATCHES]
        finally:
            await probe.close()
        values = {"metadata": metadata, "repeated": action_value(first), "actions": actions}
        return Observed(values, unjudgeable, summary=f"{len(actions)} action batches")


def _same(one: np.ndarray[Any, Any] | None, two: np.ndarray[Any, Any] | None) -> bool:
    if one is None or two is None:
        return one is two
    return one.dtype == two.dtype and one.shape == two.shape and one.tobytes() == two.tobytes()


SCRIPT = PlugrlScript()
