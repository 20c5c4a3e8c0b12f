"""Parallel tool calls merged into one: one get_weather call for "Paris, Tokyo" where two were needed.

Broken clause: openai.tools.parallel.
"""

import json

from checks.openai.reference import ReferenceModel
from checks.openai.reference import make_app as reference_app


class Merges(ReferenceModel):
    def call_tools(self, body, limit, used):
        completion = super().call_tools(body, limit, used)
        if len(completion.calls) > 1:
            cities = [json.loads(c["function"]["arguments"])["city"] for c in completion.calls]
            completion.calls = [self.new_call("get_weather", json.dumps({"city": ", ".join(cities)}))]
        return completion


def make_app():
    return reference_app(Merges())
