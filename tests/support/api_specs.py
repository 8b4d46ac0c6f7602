"""The official OpenAPI documents of the APIs only the tests hold to a spec.

Located by the rule of every official suite (``official_vectors``: skip with the
standard message, fail under ``CI=true``), and loaded with strict mode's loader.
"""

from __future__ import annotations

from tests.support.official_vectors import official_vectors
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec, load_openapi_spec

KEYMANAGER_SPEC_FILE = "keymanager-oapi.yaml"


def keymanager_api_spec() -> BeaconApiSpec:
    """ethereum/keymanager-APIs v1.1.0, from ``<vectors>/keymanager-api``."""
    return load_openapi_spec(
        official_vectors("keymanager-api"),
        KEYMANAGER_SPEC_FILE,
        "Keymanager API",
        "put ethereum/keymanager-APIs v1.1.0 in ../shared/vectors/keymanager-api",
    )
