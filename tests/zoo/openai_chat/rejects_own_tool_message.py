"""The server refuses its own assistant tool-call message (content null) on the next turn with a 500
(llama-cpp-python, 8c.15): an agent loop dies on turn two.

Broken clause: openai.tools.round-trip.
"""

from checks.openai.reference import ReferenceModel, Refusal
from checks.openai.reference import make_app as reference_app


class NullContentCrash(ReferenceModel):
    def validate(self, body):
        super().validate(body)
        if any(m.get("role") == "assistant" and m.get("content") is None for m in body["messages"]):
            raise Refusal(500, "content: none is not a valid string")


def make_app():
    return reference_app(NullContentCrash())
