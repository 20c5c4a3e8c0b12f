"""n 2 answered with a single choice: the parameter silently ignored.

Broken clause: openai.chat.n-choices.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class OneChoice(ReferenceModel):
    def validate(self, body):
        super().validate(body)
        body.pop("n", None)


def make_app():
    return reference_app(OneChoice())
