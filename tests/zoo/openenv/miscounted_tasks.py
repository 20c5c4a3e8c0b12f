"""The task API's num_tasks counts one task more than tasks lists.

Hand-written. Clause: openenv.tasks.consistent (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="miscounted"))
