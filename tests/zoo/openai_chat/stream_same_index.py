"""Parallel tool calls streamed all at index 0, so a client merging fragments by index glues them together.

Broken clause: openai.stream.equivalent.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class OneIndex(ReferenceModel):
    def chunks(self, body, completion):
        out = super().chunks(body, completion)
        for chunk in out:
            for choice in chunk.get("choices") or []:
                for call in choice["delta"].get("tool_calls") or []:
                    call["index"] = 0
        return out


def make_app():
    return reference_app(OneIndex())
