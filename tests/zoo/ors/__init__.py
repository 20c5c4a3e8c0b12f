"""Broken ORS servers: the reference server with one fault each."""
