"""A finish_reason outside the OpenAI set ("eos" from an engine's own vocabulary).

Broken clause: openai.chat.finish-reason.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Eos(ReferenceModel):
    def complete(self, body):
        completion = super().complete(body)
        if completion.finish == "stop":
            completion.finish = "eos"
        return completion


def make_app():
    return reference_app(Eos())
