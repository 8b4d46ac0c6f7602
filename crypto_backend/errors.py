"""The one exception type of the package."""

from __future__ import annotations


class BlsError(ValueError):
    """Malformed input to a BLS function that returns bytes (bad key, signature or secret)."""
