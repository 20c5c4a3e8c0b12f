"""Tool results paired with the calls by their position, not by tool_call_id.

Broken clause: openai.tools.result-by-id.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class ByPosition(ReferenceModel):
    def tool_results(self, messages):
        return [str(m.get("content")) for m in messages if m["role"] == "tool"]


def make_app():
    return reference_app(ByPosition())
