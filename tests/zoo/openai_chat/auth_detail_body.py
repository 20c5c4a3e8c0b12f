"""A missing or wrong key refused 401 with FastAPI's `{"detail": "..."}` body, while every other
refusal has the OpenAI error object.

Broken clause: openai.errors.shape.
"""

from starlette.responses import JSONResponse

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class DetailOn401(ReferenceModel):
    api_key = "sk-zoo"

    def error(self, refusal):
        if refusal.status == 401:
            return JSONResponse({"detail": refusal.message}, status_code=401)
        return super().error(refusal)


def make_app():
    return reference_app(DetailOn401())
