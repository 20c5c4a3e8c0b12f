"""An endpoint that ignores logprobs: true (llmock, stubllm, the litellm mock): no behaviour logprobs for RL.

Broken clause: openai.logprobs.content.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class NoLogprobs(ReferenceModel):
    def render(self, body, completion):
        return super().render({**body, "logprobs": False}, completion)


def make_app():
    return reference_app(NoLogprobs())
