"""usage.total_tokens that is not prompt + completion (a padded total, as fake usage tends to be).

Broken clause: openai.usage.consistent.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class FixedUsage(ReferenceModel):
    def usage(self, completion):
        usage = super().usage(completion)
        usage["total_tokens"] += 5
        return usage


def make_app():
    return reference_app(FixedUsage())
