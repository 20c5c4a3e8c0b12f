"""Error objects whose type is a null written as text ("None"), as a serializer makes of a missing type.

Broken clause: openai.errors.shape.
"""

from starlette.responses import JSONResponse

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class NoneType(ReferenceModel):
    def error(self, refusal):
        body = {"message": refusal.message, "type": "None", "param": "None", "code": str(refusal.status)}
        return JSONResponse({"error": body}, status_code=refusal.status)


def make_app():
    return reference_app(NoneType())
