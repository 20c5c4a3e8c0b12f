"""GET /models lists entries without their object "model".

Broken clause: openai.models.list.
"""

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from checks.openai.reference import MODEL_ID
from checks.openai.reference import make_app as reference_app


def make_app():
    app = reference_app()

    async def models(request):
        return JSONResponse({"object": "list", "data": [{"id": MODEL_ID}]})

    return Starlette(routes=[Route("/v1/models", models), *[r for r in app.routes if r.path != "/v1/models"]])
