"""PlugRL: the wire codec, the plugrl-server check suite and a conforming reference server."""
