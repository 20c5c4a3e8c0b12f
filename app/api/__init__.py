"""REST API under /api/v1, plus the unversioned /healthz, /metrics and /badge routes."""

from fastapi import APIRouter

from app.api import ops, parity, runs, scale, suites, taps, targets

router = APIRouter(prefix="/api/v1")
router.include_router(targets.router)
router.include_router(runs.router)
router.include_router(suites.router)
router.include_router(scale.router)
router.include_router(parity.router)
router.include_router(taps.router)

public_router = ops.router
