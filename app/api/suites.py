"""The suites a server offers: kinds, phases, clauses and each options JSON schema."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.suites_info import suites_document

router = APIRouter(tags=["suites"])


@router.get("/suites", summary="Target kinds with their phases, clauses and options schema")
def list_suites() -> list[dict[str, Any]]:
    return suites_document()
