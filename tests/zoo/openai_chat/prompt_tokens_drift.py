"""The same prompt counted as one more prompt token every time it is sent.

Broken clause: openai.usage.prompt-stable.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Drifting(ReferenceModel):
    def __init__(self):
        self.sent = 0

    def complete(self, body):
        completion = super().complete(body)
        self.sent += 1
        completion.prompt_tokens += self.sent
        return completion


def make_app():
    return reference_app(Drifting())
