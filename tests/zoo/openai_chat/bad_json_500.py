"""Malformed JSON answered 500 text/plain (stubllm, llama-cpp-python).

Broken clause: openai.errors.rejects-invalid.
"""

from starlette.responses import PlainTextResponse

from checks.openai.reference import ReferenceModel, Refusal
from checks.openai.reference import make_app as reference_app


class Crashes(ReferenceModel):
    def error(self, refusal: Refusal):
        if refusal.message == "the body is not valid JSON":
            return PlainTextResponse("Internal Server Error", status_code=500)
        return super().error(refusal)


def make_app():
    return reference_app(Crashes())
