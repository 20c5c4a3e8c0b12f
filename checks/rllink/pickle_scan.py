"""Reading a target's pickled AlgorithmConfig without executing it.

The msgpack dialect's SET_CONFIG carries `pickle.dumps(AlgorithmConfig)`.
Unpickling runs code of the target's choosing, so this module only walks the
opcode stream with `pickletools.genops`, which decodes operands and never
imports, calls or builds anything. A setting is a string operand (the
attribute name) directly followed by a constant operand (its value).
"""

from __future__ import annotations

import math
import pickletools
from dataclasses import dataclass, field

MAX_OPCODES = 2_000_000
_MEMO_OPS = ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT")
_SETTINGS = (
    "rollout_fragment_length",
    "train_batch_size_per_learner",
    "train_batch_size",
    "num_env_runners",
    "num_envs_per_env_runner",
    "num_learners",
)


@dataclass
class PickleFacts:
    size: int
    opcodes: int = 0
    settings: dict[str, int | str | None] = field(default_factory=dict)
    problem: str = ""
    globals_named: list[str] = field(default_factory=list)

    def fragment_length(self) -> tuple[int | None, str]:
        """The rollout fragment length and how it was found, or (None, why not)."""
        value = self.settings.get("rollout_fragment_length")
        if isinstance(value, int) and value >= 1:
            return value, f"rollout_fragment_length = {value}, read from the pickle's opcodes (not executed)"
        if value == "auto":
            return self._auto()
        return None, self.problem or "the pickle names no integer rollout_fragment_length"

    def _auto(self) -> tuple[int | None, str]:
        # AlgorithmConfig.get_rollout_fragment_length for "auto": the train batch over the sampling envs.
        per_learner = self.settings.get("train_batch_size_per_learner")
        batch = self.settings.get("train_batch_size")
        learners = self.settings.get("num_learners")
        runners = self.settings.get("num_env_runners")
        envs = self.settings.get("num_envs_per_env_runner")
        total = (
            per_learner * max(learners if isinstance(learners, int) else 0, 1)
            if isinstance(per_learner, int)
            else batch
        )
        if not isinstance(total, int) or not isinstance(envs, int) or envs < 1:
            return None, "rollout_fragment_length is 'auto' and the batch settings are not all readable"
        samplers = max(runners if isinstance(runners, int) else 0, 1) * envs
        value = math.ceil(total / samplers)
        return value, (
            f"rollout_fragment_length 'auto' = ceil({total} / {samplers}) = {value}, computed from settings read "
            "in the pickle's opcodes (not executed)"
        )


def scan(data: bytes) -> PickleFacts:
    facts = PickleFacts(size=len(data))
    pending: str | None = None
    try:
        for count, (opcode, arg, _) in enumerate(pickletools.genops(data)):
            facts.opcodes = count + 1
            if count >= MAX_OPCODES:
                facts.problem = f"stopped after {MAX_OPCODES} opcodes"
                break
            if opcode.name in ("GLOBAL", "STACK_GLOBAL") and isinstance(arg, str) and len(facts.globals_named) < 20:
                facts.globals_named.append(arg.replace(" ", "."))
            if pending is not None and opcode.name not in _MEMO_OPS:
                if isinstance(arg, int) and opcode.name in ("BININT", "BININT1", "BININT2", "INT", "LONG1", "LONG"):
                    facts.settings.setdefault(pending, arg)
                elif isinstance(arg, str) and "UNICODE" in opcode.name:
                    facts.settings.setdefault(pending, arg)
                elif opcode.name == "NONE":
                    facts.settings.setdefault(pending, None)
                pending = None
            if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8") and arg in _SETTINGS:
                pending = str(arg)
    except (ValueError, EOFError, IndexError) as exc:
        facts.problem = f"the pickle's opcode stream is malformed: {exc}"
    return facts
