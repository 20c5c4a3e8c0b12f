"""completion_tokens two above max_tokens (llama-cpp-python reported 202 for max_tokens 200).

Broken clause: openai.usage.within-max-tokens.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Overcounts(ReferenceModel):
    def usage(self, completion):
        usage = super().usage(completion)
        if completion.finish == "length":
            usage["completion_tokens"] += 2
            usage["total_tokens"] += 2
        return usage


def make_app():
    return reference_app(Overcounts())
