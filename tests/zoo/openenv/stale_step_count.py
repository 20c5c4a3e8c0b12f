"""A reset that starts a new episode but leaves step_count where the last one stopped.

The first episode of a session looks right; the second one starts counting at 1.
Hand-written. Broken clause: openenv.state.step-count.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(keep_step_count=True))
