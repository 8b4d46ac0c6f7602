"""Error replies in the Beacon API's shapes (``ErrorMessage``, ``IndexedErrorMessage``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# One error type for every HTTP API of the project: the Beacon API's ErrorMessage
# and the Keymanager API's error share the shape {code, message}.
from keymanager.api.http import ApiError

__all__ = ["ApiError", "error_body", "indexed_error_body"]


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"code": status, "message": message}


def indexed_error_body(failures: Sequence[tuple[int, str]], what: str) -> dict[str, Any]:
    """400 with one entry per failed item, as the pool endpoints answer."""
    return {
        "code": 400,
        "message": f"some {what} failed validation ({len(failures)} of them)",
        "failures": [{"index": index, "message": message} for index, message in failures],
    }
