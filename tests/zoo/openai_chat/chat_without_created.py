"""A chat.completion without its integer created.

Broken clause: openai.chat.shape.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class NoCreated(ReferenceModel):
    def render(self, body, completion):
        rendered = super().render(body, completion)
        del rendered["created"]
        return rendered


def make_app():
    return reference_app(NoCreated())
