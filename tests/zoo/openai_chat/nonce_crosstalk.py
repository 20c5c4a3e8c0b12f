"""Replies swapped under load: a shared "current prompt" slot is read after an await, so concurrent
requests answer each other (only shows with requests in flight together).

Broken clause: openai.concurrency.parallel.
"""

import asyncio

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class SharedSlot(ReferenceModel):
    def __init__(self):
        self.current = None

    async def answer(self, body):
        self.current = body
        await asyncio.sleep(0.02)
        return await super().answer(self.current)


def make_app():
    return reference_app(SharedSlot())
