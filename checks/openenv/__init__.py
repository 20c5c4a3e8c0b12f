"""The OpenEnv env-server check suite (`openenv` target kind)."""
