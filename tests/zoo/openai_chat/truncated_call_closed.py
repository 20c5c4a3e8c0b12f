"""A tool call cut by max_tokens whose arguments are closed into valid JSON, reported as tool_calls.

Broken clause: openai.tools.truncated-call.
"""

import json

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class ClosedCut(ReferenceModel):
    def call_tools(self, body, limit, used):
        completion = super().call_tools(body, limit, used)
        if completion.finish == "length":
            full = super().call_tools({**body, "max_tokens": None}, 1_000_000, used)
            for cut, whole in zip(completion.calls, full.calls, strict=False):
                ((key, value),) = json.loads(whole["function"]["arguments"]).items()
                cut["function"]["arguments"] = json.dumps({key: value[: max(1, len(value) // 2)]})
            completion.finish = "tool_calls"
        return completion


def make_app():
    return reference_app(ClosedCut())
