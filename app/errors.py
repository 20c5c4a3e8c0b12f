"""The root of the service's own errors, as `checks.errors.CheckError` is of the checks'.

Every exception `app/` raises on purpose derives from `ServiceError`, so a caller that must
tell the service's refusals (a target invalid, a lease lost, a network refused, a usage
mistake) from a bug catches one class; each leaf keeps the built-in base its callers rely on.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error `app/` raises on purpose."""
