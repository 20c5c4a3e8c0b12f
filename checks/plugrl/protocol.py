"""Fixed values of the PlugRL wire protocol that both the suite and the reference server use."""

from __future__ import annotations

GOING_AWAY = 1001  # the close code of every protocol-level close (SPEC 7)
RESYNC_REASON = "plugrl-server-resync"
STOP_REASON = "plugrl-server-stop"
FEEDBACK_TIMEOUT_REASON = "Feedback timeout"
FEEDBACK_TIMEOUT = 60.0  # seconds, SPEC 4.2 and 7.3
REUSE_FEATURE = "reuse-feedback-obs"
