"""Parallel tool calls streamed with one id for both, while the JSON reply gives each its own.

Broken clause: openai.tools.call-shape.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class StreamSameIds(ReferenceModel):
    def chunks(self, body, completion):
        out = super().chunks(body, completion)
        for chunk in out:
            for choice in chunk.get("choices") or []:
                for fragment in choice["delta"].get("tool_calls") or []:
                    if "id" in fragment:
                        fragment["id"] = "call_0"
        return out


def make_app():
    return reference_app(StreamSameIds())
