"""Limits that keep one client of the Keymanager (or metrics) server from hurting the rest.

* Request bodies: JSON text is checked by `slashing_protection.json_guard` before orjson
  parses it (no number token over 20 characters, no string over 1 MiB, nesting at most
  `MAX_BODY_DEPTH`), so no body reaches a JSON library with a token it cannot handle.
* Connections and time: see `keymanager.api.server_limits`.
"""

from __future__ import annotations

from slashing_protection.json_guard import JsonLimitError, check_document

MAX_BODY_DEPTH = 32
"""The deepest nesting a request body may have; the spec's bodies need 3."""


def body_limit_problem(body: bytes) -> str | None:
    """Why a request body is refused before parsing, or None when it is within the limits."""
    try:
        check_document(body, "the request body", max_depth=MAX_BODY_DEPTH)
    except JsonLimitError as error:
        return str(error)
    return None
