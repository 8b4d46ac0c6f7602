"""Aggregator selection: the hash of the proof read little-endian, and sync subcommittees."""

from __future__ import annotations

from hashlib import sha256

import pytest

from validator.consensus.chain_preset import SimulatedChainConfig
from validator.duties.selection import (
    is_aggregator,
    is_sync_committee_aggregator,
    sync_subcommittee_indices,
)

CHAIN = SimulatedChainConfig(genesis_time=0, genesis_validators_root=b"\x01" * 32).chain_spec()


def test_aggregator_selection_reads_the_hash_little_endian() -> None:
    proof = bytes(range(96))
    prefix = int.from_bytes(sha256(proof).digest()[:8], "little")
    # A committee of 128 with 16 target aggregators: one in 8 is chosen.
    assert is_aggregator(128, proof, 16) == (prefix % 8 == 0)
    assert is_aggregator(16, proof, 16)  # committees up to the target: everyone aggregates
    chosen = [is_aggregator(128, sha256(bytes([i])).digest() * 3, 16) for i in range(256)]
    assert 16 <= sum(chosen) <= 48  # about 1 in 8
    with pytest.raises(ValueError):
        is_aggregator(128, proof[:95], 16)


def test_sync_aggregator_selection_and_subcommittees() -> None:
    # 512 seats, 4 subnets, 16 target aggregators: one in 8.
    proof = bytes(range(1, 97))
    prefix = int.from_bytes(sha256(proof).digest()[:8], "little")
    assert is_sync_committee_aggregator(CHAIN, proof) == (prefix % 8 == 0)
    assert sync_subcommittee_indices(CHAIN, [5, 130, 127, 511]) == [0, 1, 3]
