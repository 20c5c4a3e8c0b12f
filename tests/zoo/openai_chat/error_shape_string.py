"""Errors as {"error": "<string>"} (miles' own shape) from a target profiled as an OpenAI endpoint.

Broken clause: openai.errors.shape.
"""

from starlette.responses import JSONResponse

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class StringErrors(ReferenceModel):
    def error(self, refusal):
        return JSONResponse({"error": refusal.message}, status_code=refusal.status)


def make_app():
    return reference_app(StringErrors())
