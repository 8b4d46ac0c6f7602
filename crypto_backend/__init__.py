"""BLS12-381 for the consensus ciphersuite BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_.

Bytes in, bytes out, named after the consensus specification. Two libraries sit
behind one set of rules: ``blst`` (pyblst, the default) and ``arkworks``
(py-arkworks-bls12381); pick one with ``use(name)`` or ``VALIDATOR_BLS_BACKEND``.
Identity public keys are refused in every verify path before any pairing, and
so is an aggregate key that sums to the identity. Large batches run on lanes
(worker processes); see docs/crypto.md for what is guaranteed and why.
"""

from __future__ import annotations

from crypto_backend.batch import SignatureSet, sign_many, verify_signature_sets
from crypto_backend.ciphersuite import (
    aggregate,
    aggregate_verify,
    eth_aggregate_pubkeys,
    eth_fast_aggregate_verify,
    fast_aggregate_verify,
    key_validate,
    sign,
    sk_to_pk,
    verify,
)
from crypto_backend.constants import CURVE_ORDER, DST, G1_POINT_AT_INFINITY, G2_POINT_AT_INFINITY
from crypto_backend.errors import BlsError
from crypto_backend.lanes import lane_count, set_lane_count, shutdown_lanes, start_lanes
from crypto_backend.selection import BACKEND_NAMES, backend_name, use

__all__ = [
    "BACKEND_NAMES",
    "CURVE_ORDER",
    "DST",
    "G1_POINT_AT_INFINITY",
    "G2_POINT_AT_INFINITY",
    "BlsError",
    "SignatureSet",
    "aggregate",
    "aggregate_verify",
    "backend_name",
    "eth_aggregate_pubkeys",
    "eth_fast_aggregate_verify",
    "fast_aggregate_verify",
    "key_validate",
    "lane_count",
    "set_lane_count",
    "shutdown_lanes",
    "sign",
    "sign_many",
    "sk_to_pk",
    "start_lanes",
    "use",
    "verify",
    "verify_signature_sets",
]
