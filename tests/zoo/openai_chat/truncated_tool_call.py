"""A tool call cut by max_tokens, reported as finish_reason tool_calls with broken arguments (llama-cpp-python, 8c.14).

Broken clause: openai.tools.truncated-call.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class CompleteLooking(ReferenceModel):
    def call_tools(self, body, limit, used):
        completion = super().call_tools(body, limit, used)
        if completion.finish == "length":
            completion.finish = "tool_calls"
        return completion


def make_app():
    return reference_app(CompleteLooking())
