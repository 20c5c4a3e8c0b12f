"""Temperature 0 with a seed still varies: a counter leaks into the reply (batch-dependent kernels, 8c.9).

Broken clause: openai.determinism.declared (the SHOULD repeat clause warns too).
"""

import itertools

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Drifts(ReferenceModel):
    def __init__(self):
        self.counter = itertools.count()

    def complete(self, body):
        completion = super().complete(body)
        if completion.text is not None and "haiku" in str(body["messages"][-1].get("content")):
            completion.text += f" ({next(self.counter)})"
            completion.tokens.append("x")
        return completion


def make_app():
    return reference_app(Drifts())
