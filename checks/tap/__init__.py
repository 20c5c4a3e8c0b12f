"""Tap mode: a transparent proxy that forwards a real client's traffic to a real server unchanged and judges a copy."""
