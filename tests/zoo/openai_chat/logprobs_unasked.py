"""choices[0].logprobs filled in whether or not the request asked for them.

Broken clause: openai.logprobs.absent-unless-asked.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class AlwaysLogprobs(ReferenceModel):
    def render(self, body, completion):
        return super().render({**body, "logprobs": True}, completion)


def make_app():
    return reference_app(AlwaysLogprobs())
