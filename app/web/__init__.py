"""Server-rendered pages."""

from fastapi import APIRouter

router = APIRouter()
