"""REST API under /api/v1."""

from fastapi import APIRouter

router = APIRouter(prefix="/api/v1")
