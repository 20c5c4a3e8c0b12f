"""Parity runs: one deterministic script drives two deployments (or one and a golden
recording), every observable output becomes a canonical value, and one comparator
names the first divergent path bit for bit."""
