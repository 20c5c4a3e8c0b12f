"""Parallel tool calls that share one id, so their results cannot be told apart by tool_call_id.

Broken clause: openai.tools.call-shape.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class SameIds(ReferenceModel):
    def call_tools(self, body, limit, used):
        completion = super().call_tools(body, limit, used)
        for call in completion.calls:
            call["id"] = "call_0"
        return completion


def make_app():
    return reference_app(SameIds())
