"""A server whose /ws reset takes three times the step timeout to answer (an env that loads a level from a slow disk).

Its replies all come, late: a client that reads the next frame as the reply to
its next message is one frame behind from then on. The suite has to give up on
that session at the first missing reply instead of judging shifted frames, and
stop the phase there, so the slow server costs one timeout per phase.
Hand-written. Broken clause: openenv.ws.reply-in-time.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app

OPTIONS: dict = {"timeout": 1.0}
RESET_DELAY = 3 * OPTIONS["timeout"]


def make_app():
    return build_app(Quirks(ws_reset_delay=RESET_DELAY))
