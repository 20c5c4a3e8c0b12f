"""JSON replies that carry two date headers (a proxy adding its own beside the app's).

Broken clause: openai.http.hygiene.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class TwoDates(ReferenceModel):
    async def answer(self, body):
        response = await super().answer(body)
        if not body.get("stream"):
            response.raw_headers += [(b"date", b"Mon, 01 Jan 2024 00:00:00 GMT")] * 2
        return response


def make_app():
    return reference_app(TwoDates())
