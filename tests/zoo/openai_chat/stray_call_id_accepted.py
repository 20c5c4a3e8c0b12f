"""A tool message whose tool_call_id matches no call is answered as if it did.

Broken clause: openai.tools.unknown-call-id.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class AnyCallId(ReferenceModel):
    def validate_tool_ids(self, messages):
        return None


def make_app():
    return reference_app(AnyCallId())
