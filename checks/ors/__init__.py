"""The `ors` target kind: Open Reward Standard environment servers (HTTP + server-sent events)."""
