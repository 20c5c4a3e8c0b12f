"""An echoing endpoint that turns every non-ASCII character of its reply into U+FFFD.

Broken clause: openai.unicode.round-trip.
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


def mangled(text):
    return "".join(c if ord(c) < 128 else "\ufffd" for c in text)


class Mangling(ReferenceModel):
    def complete(self, body):
        completion = super().complete(body)
        if completion.text is not None:
            completion.text = mangled(completion.text)
            completion.tokens = [mangled(t) for t in completion.tokens]
        return completion


def make_app():
    return reference_app(Mangling())
