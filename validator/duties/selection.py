"""Aggregator selection, as the honest-validator specs define it.

A validator aggregates when the hash of its selection proof (a signature, so
unpredictable to others and verifiable by all) falls in a fraction of the
space sized so that about ``TARGET_AGGREGATORS_PER_COMMITTEE`` members of each
committee (``..._PER_SYNC_SUBCOMMITTEE`` for sync subcommittees) are chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import sha256

from validator.consensus.spec import ChainSpec


def _hash_prefix(signature: bytes) -> int:
    """bytes_to_uint64(hash(signature)[0:8]): little-endian, as the specs' helper reads it."""
    return int.from_bytes(sha256(signature).digest()[:8], "little")


def is_aggregator(committee_length: int, selection_proof: bytes, target_aggregators: int) -> bool:
    """phase0 ``is_aggregator`` from the committee's length and the slot's selection proof."""
    if len(selection_proof) != 96:
        raise ValueError("a selection proof is a 96-byte signature")
    modulo = max(1, committee_length // target_aggregators)
    return _hash_prefix(selection_proof) % modulo == 0


def is_sync_committee_aggregator(chain: ChainSpec, selection_proof: bytes) -> bool:
    """altair ``is_sync_committee_aggregator`` from a sync selection proof."""
    if len(selection_proof) != 96:
        raise ValueError("a selection proof is a 96-byte signature")
    modulo = max(
        1,
        chain.sync_committee_size
        // chain.sync_committee_subnet_count
        // chain.target_aggregators_per_sync_subcommittee,
    )
    return _hash_prefix(selection_proof) % modulo == 0


def sync_subcommittee_indices(chain: ChainSpec, sync_committee_indices: Iterable[int]) -> list[int]:
    """The subcommittees (subnets) a member sits in, from its positions in the sync committee."""
    size = chain.sync_subcommittee_size
    return sorted({index // size for index in sync_committee_indices})
