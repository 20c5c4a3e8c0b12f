"""Envs and launchers for third-party peers, run in their own venvs."""
