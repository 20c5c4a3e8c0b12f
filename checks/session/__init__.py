"""The `session-server` target kind: a miles-style session server that records every chat call for training."""
