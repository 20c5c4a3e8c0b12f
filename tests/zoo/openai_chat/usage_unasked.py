"""A stream that carries a usage chunk whether or not stream_options.include_usage asked for it.

Broken clause: openai.stream.usage-chunk.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class UsageAlways(ReferenceModel):
    def chunks(self, body, completion):
        return super().chunks({**body, "stream_options": {"include_usage": True}}, completion)


def make_app():
    return reference_app(UsageAlways())
