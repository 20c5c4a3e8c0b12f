"""The task API lists tasks, but a /ws reset naming one (split and index) is refused.

Hand-written. Clause: openenv.tasks.reset (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="unresettable"))
