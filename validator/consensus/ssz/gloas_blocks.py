"""Gloas blocks as ``produceBlockV4`` delivers them, and what publishing takes back.

From Gloas on a block commits to an execution payload bid and carries no payload, so
there are no blinded blocks. A self-built block comes with its ``ExecutionPayloadEnvelope``
(``include_payload=true``: ``BlockContents`` with the envelope, blobs and proofs); the
proposer signs the block (a slashable message, through the record) and the envelope (not
slashable) and publishes them to two routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remerkleable.core import View

from validator.consensus.forks import ForkName
from validator.consensus.ssz import gloas
from validator.consensus.ssz.blocks import ProducedBlock, UnsupportedForkError
from validator.consensus.ssz.codec import SszInputError, from_json, from_ssz
from validator.consensus.ssz.preset import MAINNET, Preset


@dataclass(frozen=True)
class ProducedGloasBlock(ProducedBlock):
    """A Gloas block; ``envelope``: the self-built payload's envelope, when the node included it."""

    envelope: View | None = None

    @property
    def self_built(self) -> bool:
        """Whether the bid is the proposer's own (so the proposer signs the envelope too)."""
        bid = self.block.body.signed_execution_payload_bid.message
        return int(bid.builder_index) == gloas.BUILDER_INDEX_SELF_BUILD

    def signed(self, signature: bytes) -> View:
        """The SignedBeaconBlock that ``POST /eth/v2/beacon/blocks`` takes."""
        kinds = gloas.containers(self.preset)
        return kinds.SignedBeaconBlock(message=self.block, signature=signature)

    def envelope_contents(self, signed_envelope: View) -> View:
        """The signed envelope with its blobs and proofs (``Eth-Blob-Data-Included: true``)."""
        kinds = gloas.containers(self.preset)
        return kinds.SignedExecutionPayloadEnvelopeContents(
            signed_execution_payload_envelope=signed_envelope,
            kzg_proofs=self.kzg_proofs if self.kzg_proofs is not None else [],
            blobs=self.blobs if self.blobs is not None else [],
        )


def parse_produced_block_v4(
    version: str, payload_included: bool, data: Any, preset: Preset = MAINNET
) -> ProducedGloasBlock:
    """Read ``produceBlockV4``'s JSON ``data`` (a BeaconBlock, or BlockContents when included)."""
    return _produced(version, payload_included, data, from_json, preset)


def parse_produced_block_v4_ssz(
    version: str, payload_included: bool, data: bytes, preset: Preset = MAINNET
) -> ProducedGloasBlock:
    """Read ``produceBlockV4``'s SSZ body (``Eth-Execution-Payload-Included`` says which)."""
    return _produced(version, payload_included, data, from_ssz, preset)


def _produced(
    version: str, payload_included: bool, data: Any, decode: Any, preset: Preset
) -> ProducedGloasBlock:
    try:
        fork = ForkName.parse(version)
    except ValueError as failure:
        raise UnsupportedForkError(str(failure)) from None
    if fork is not ForkName.GLOAS:
        raise UnsupportedForkError(
            f"produceBlockV4 answered a {fork.value} block; the route serves gloas blocks only"
        )
    kinds = gloas.containers(preset)
    if not payload_included:
        return ProducedGloasBlock(fork, False, decode(kinds.BeaconBlock, data), preset=preset)
    contents = decode(kinds.BlockContents, data)
    envelope = contents.execution_payload_envelope
    block = contents.block
    if bytes(envelope.beacon_block_root) != bytes(block.hash_tree_root()):
        raise SszInputError(
            "BlockContents.execution_payload_envelope.beacon_block_root is not the block's root"
        )
    return ProducedGloasBlock(
        fork,
        False,
        block,
        contents.kzg_proofs,
        contents.blobs,
        preset=preset,
        envelope=envelope,
    )


__all__ = [
    "ProducedGloasBlock",
    "parse_produced_block_v4",
    "parse_produced_block_v4_ssz",
]
