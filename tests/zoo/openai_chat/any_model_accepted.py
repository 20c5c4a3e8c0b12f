"""A model id the endpoint does not serve is answered by the one it does.

Broken clause: openai.errors.unknown-model.
"""

from checks.openai.reference import MODEL_ID, ReferenceModel
from checks.openai.reference import make_app as reference_app


class AnyModel(ReferenceModel):
    def validate(self, body):
        if isinstance(body, dict) and "model" in body:
            body["model"] = MODEL_ID
        super().validate(body)


def make_app():
    return reference_app(AnyModel())
