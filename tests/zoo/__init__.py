"""Deliberately broken servers: each breaks one clause so the suites can be shown to catch it."""
