"""A message with a role outside the protocol's roles is answered as if it were a user message.

Broken clause: openai.messages.unknown-role.
"""

from checks.openai.reference import ROLES, ReferenceModel
from checks.openai.reference import make_app as reference_app


class AnyRole(ReferenceModel):
    def validate(self, body):
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            for message in body["messages"]:
                if isinstance(message, dict) and message.get("role") not in ROLES:
                    message["role"] = "user"
        super().validate(body)


def make_app():
    return reference_app(AnyRole())
