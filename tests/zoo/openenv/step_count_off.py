"""step_count starts at 1 after a reset.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.state.step-count.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(first_step_count=1))
