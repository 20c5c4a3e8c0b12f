"""RLlink: RLlib's external-env TCP protocol (both dialects), checked from the simulator side."""
