"""A stream that ends without data: [DONE].

Broken clause: openai.stream.format.
"""

import json

from starlette.responses import StreamingResponse

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class NoDone(ReferenceModel):
    async def answer(self, body):
        if not body.get("stream"):
            return await super().answer(body)
        events = [f"data: {json.dumps(c)}\n\n" for c in self.chunks(body, self.complete(body))]
        return StreamingResponse(iter(events), media_type="text/event-stream")


def make_app():
    return reference_app(NoDone())
