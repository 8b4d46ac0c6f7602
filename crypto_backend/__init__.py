"""BLS12-381 for the consensus ciphersuite BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_.

Bytes in, bytes out, named after the consensus specification. Two libraries sit
behind one set of rules: ``blst`` (the default: a native extension in Rust on the
blst crate, the GIL released in every call, batches on threads) and ``arkworks``
(py-arkworks-bls12381); pick one with ``use(name)`` or ``VALIDATOR_BLS_BACKEND``.
Identity public keys are refused in every verify path before any pairing, and
so is an aggregate key that sums to the identity. No function starts a process;
see docs/crypto.md for what is guaranteed and why.
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
    key_validate_many,
    sign,
    sk_to_pk,
    verify,
    warm_pubkeys,
)
from crypto_backend.constants import CURVE_ORDER, DST, G1_POINT_AT_INFINITY, G2_POINT_AT_INFINITY
from crypto_backend.errors import BlsError
from crypto_backend.selection import BACKEND_NAMES, backend_name, info, use
from crypto_backend.threads import lane_count, set_lane_count

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
    "info",
    "key_validate",
    "key_validate_many",
    "lane_count",
    "set_lane_count",
    "sign",
    "sign_many",
    "sk_to_pk",
    "use",
    "verify",
    "verify_signature_sets",
    "warm_pubkeys",
]
