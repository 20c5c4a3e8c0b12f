"""rlconform's check engine and one check suite per target kind (no web imports)."""
