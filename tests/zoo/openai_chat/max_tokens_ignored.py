"""max_tokens ignored: the whole reply comes back, finish_reason stop, whatever the limit.

Broken clause: openai.limits.max-tokens (usage then exceeds max_tokens too, and a cut tool call is whole).
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Unlimited(ReferenceModel):
    def complete(self, body):
        return super().complete({**body, "max_tokens": None})


def make_app():
    return reference_app(Unlimited())
