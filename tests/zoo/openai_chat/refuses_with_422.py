"""Invalid requests refused with 422 (a validation framework's default) instead of 400.

Broken clause: openai.errors.status-400.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Status422(ReferenceModel):
    def error(self, refusal):
        if refusal.status == 400:
            refusal.status = 422
        return super().error(refusal)


def make_app():
    return reference_app(Status422())
