"""A stream whose text is not the JSON reply's: the last word is never streamed.

Broken clause: openai.stream.equivalent (the streamed UTF-8 echo loses its last word too).
"""

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class DropsLastWord(ReferenceModel):
    def chunks(self, body, completion):
        out = super().chunks(body, completion)
        content = [n for n, c in enumerate(out) if c.get("choices") and c["choices"][0]["delta"].get("content")]
        return [c for n, c in enumerate(out) if not content or n != content[-1]]


def make_app():
    return reference_app(DropsLastWord())
