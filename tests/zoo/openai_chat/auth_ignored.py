"""An endpoint given an API key that serves requests without it, or with a wrong one.

Broken clause: openai.auth.required (run with the api_key option).
"""

from checks.openai.reference import make_app as reference_app


def make_app():
    return reference_app()
