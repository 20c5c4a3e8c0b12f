"""The plugrl-client suite: rlconform plays a PlugRL training server and grades the env client."""
