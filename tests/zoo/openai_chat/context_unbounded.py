"""A prompt past the context window answered as if it fitted, finish_reason stop.

Broken clause: openai.limits.context-overflow (run with the context_window option).
"""

from checks.openai import reference
from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Unbounded(ReferenceModel):
    def validate(self, body):
        window, reference.CONTEXT_WINDOW = reference.CONTEXT_WINDOW, 10**12
        try:
            super().validate(body)
        finally:
            reference.CONTEXT_WINDOW = window

    def complete(self, body):
        if reference.prompt_tokens(body["messages"]) <= reference.CONTEXT_WINDOW:
            return super().complete(body)
        completion = super().complete({**body, "max_tokens": 8})
        completion.finish = "stop"
        return completion


def make_app():
    return reference_app(Unbounded())
