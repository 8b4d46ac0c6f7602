"""SSZ object roots and signing roots computed by hand with sha256: the oracle the
signing-root and signer tests hold the product to.

Written from the consensus specification's formulas (merkleization of 32-byte
chunks, ``compute_domain``, ``compute_signing_root``) without touching
``validator.consensus.domains``, ``signing_roots`` or ``ssz``'s hashing, so a
mistake in those shows as a mismatch instead of being copied into the expectation.
"""

from __future__ import annotations

from hashlib import sha256

from validator.consensus.ssz import AttestationData

# Domain types from the consensus specification, written out here rather than imported.
DOMAIN_BEACON_PROPOSER = bytes.fromhex("00000000")
DOMAIN_BEACON_ATTESTER = bytes.fromhex("01000000")
DOMAIN_RANDAO = bytes.fromhex("02000000")
DOMAIN_VOLUNTARY_EXIT = bytes.fromhex("04000000")
DOMAIN_SELECTION_PROOF = bytes.fromhex("05000000")
DOMAIN_AGGREGATE_AND_PROOF = bytes.fromhex("06000000")
DOMAIN_SYNC_COMMITTEE = bytes.fromhex("07000000")
DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF = bytes.fromhex("08000000")
DOMAIN_CONTRIBUTION_AND_PROOF = bytes.fromhex("09000000")
DOMAIN_APPLICATION_BUILDER = bytes.fromhex("00000001")


def chunk(number: int) -> bytes:
    """A uint64 as its 32-byte SSZ chunk (little-endian, zero-padded)."""
    return number.to_bytes(32, "little")


def merkleize(chunks: list[bytes]) -> bytes:
    """The root of ``chunks`` padded with zero chunks to the next power of two."""
    width = 1
    while width < len(chunks):
        width *= 2
    layer = chunks + [bytes(32)] * (width - len(chunks))
    while len(layer) > 1:
        layer = [sha256(layer[i] + layer[i + 1]).digest() for i in range(0, len(layer), 2)]
    return layer[0]


def checkpoint_root(epoch: int, root: bytes) -> bytes:
    return merkleize([chunk(epoch), root])


def attestation_data_root(data: AttestationData) -> bytes:
    return merkleize(
        [
            chunk(int(data.slot)),
            chunk(int(data.index)),
            bytes(data.beacon_block_root),
            checkpoint_root(int(data.source.epoch), bytes(data.source.root)),
            checkpoint_root(int(data.target.epoch), bytes(data.target.root)),
        ]
    )


def signing_root_by_hand(
    object_root: bytes, domain_type: bytes, fork_version: bytes, genesis_validators_root: bytes
) -> bytes:
    """sha256(object_root ++ domain), domain = type ++ sha256(version ++ 0*28 ++ gvr)[:28]."""
    fork_data_root = sha256(fork_version + bytes(28) + genesis_validators_root).digest()
    return sha256(object_root + domain_type + fork_data_root[:28]).digest()
