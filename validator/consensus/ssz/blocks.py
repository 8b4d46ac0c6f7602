"""Blocks by fork: which containers, blinding, headers, and the ``produceBlockV3`` reply.

``produceBlockV3`` answers with a full block (with its blobs and proofs from
Deneb on) or a blinded one, in JSON or SSZ, with the fork named in
``version`` / ``Eth-Consensus-Version``. :func:`parse_produced_block` reads
every such reply into a :class:`ProducedBlock`, whose ``block`` is the object
the proposer signs and whose :meth:`ProducedBlock.signed` builds what the
publish endpoints take back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remerkleable.core import View

from validator.consensus.forks import ForkName
from validator.consensus.ssz import bellatrix, deneb, electra, fulu
from validator.consensus.ssz.codec import SszInputError, from_json, from_ssz
from validator.consensus.ssz.phase0 import BeaconBlockHeader
from validator.consensus.ssz.preset import MAINNET, PRESETS, Preset


class UnsupportedForkError(ValueError):
    """A block of a fork this client has no containers for."""


@dataclass(frozen=True)
class BlockTypes:
    """The block containers of one fork."""

    fork: ForkName
    block: Any
    blinded_block: Any
    signed_block: Any
    signed_blinded_block: Any
    execution_payload: Any
    execution_payload_header: Any
    # Deneb on: produceBlockV3 and publishing wrap full blocks with their blobs.
    block_contents: Any | None
    signed_block_contents: Any | None


_FORKS_WITH_BLOCKS = {
    ForkName.BELLATRIX: bellatrix,
    ForkName.DENEB: deneb,
    ForkName.ELECTRA: electra,
    ForkName.FULU: fulu,
}

_BUILT: dict[Preset, dict[ForkName, BlockTypes]] = {}
"""The block containers of every preset built so far, by fork."""
_HEADER_FOR_PAYLOAD: dict[Any, Any] = {}
_TYPES_OF_BLOCK: dict[Any, BlockTypes] = {}
_TYPES_OF_BLINDED_BLOCK: dict[Any, BlockTypes] = {}


def _block_types_of(preset: Preset) -> dict[ForkName, BlockTypes]:
    built = _BUILT.get(preset)
    if built is not None:
        return built
    built = {}
    for fork, module in _FORKS_WITH_BLOCKS.items():
        kinds = module.containers(preset)
        # Deneb on: produceBlockV3 and publishing wrap full blocks with their blobs.
        with_contents = fork is not ForkName.BELLATRIX
        types = BlockTypes(
            fork,
            kinds.BeaconBlock,
            kinds.BlindedBeaconBlock,
            kinds.SignedBeaconBlock,
            kinds.SignedBlindedBeaconBlock,
            kinds.BeaconBlockBody.fields()["execution_payload"],
            kinds.BlindedBeaconBlockBody.fields()["execution_payload_header"],
            kinds.BlockContents if with_contents else None,
            kinds.SignedBlockContents if with_contents else None,
        )
        built[fork] = types
        _HEADER_FOR_PAYLOAD[types.execution_payload] = types.execution_payload_header
        # Fulu's block is Electra's; the first fork that has it names its types.
        _TYPES_OF_BLOCK.setdefault(types.block, types)
        _TYPES_OF_BLINDED_BLOCK.setdefault(types.blinded_block, types)
    _BUILT[preset] = built
    return built


def block_types(fork: ForkName | str, preset: Preset = MAINNET) -> BlockTypes:
    """The containers for ``fork``'s blocks in ``preset``; UnsupportedForkError for forks
    without them."""
    name = fork if isinstance(fork, ForkName) else ForkName.parse(fork)
    try:
        return _block_types_of(preset)[name]
    except KeyError:
        supported = ", ".join(sorted(_FORKS_WITH_BLOCKS))
        raise UnsupportedForkError(
            f"no block containers for {name.value}; this client signs blocks of {supported}"
        ) from None


def execution_payload_header(payload: View) -> View:
    """The header committing to ``payload``: the same fields, lists replaced by their roots."""
    header_type = _registered(_HEADER_FOR_PAYLOAD, type(payload))
    if header_type is None:
        raise TypeError(f"not an execution payload: {type(payload).__name__}")
    fields = {}
    for name in header_type.fields():
        if name.endswith("_root") and name[: -len("_root")] in type(payload).fields():
            fields[name] = getattr(payload, name[: -len("_root")]).hash_tree_root()
        else:
            fields[name] = getattr(payload, name)
    return header_type(**fields)


def blinded_block(block: View) -> View:
    """The blinded form of a full block: the same root, the payload replaced by its header."""
    types = _types_of_block(block, blinded=False)
    body = block.body
    body_fields = {}
    for name in types.blinded_block.fields()["body"].fields():
        if name == "execution_payload_header":
            body_fields[name] = execution_payload_header(body.execution_payload)
        else:
            body_fields[name] = getattr(body, name)
    return types.blinded_block(
        slot=block.slot,
        proposer_index=block.proposer_index,
        parent_root=block.parent_root,
        state_root=block.state_root,
        body=types.blinded_block.fields()["body"](**body_fields),
    )


def _registered(registry: dict[Any, Any], kind: type) -> Any:
    """``registry[kind]``, registering every known preset's blocks first if needed."""
    if kind not in registry:
        for preset in PRESETS.values():
            _block_types_of(preset)
    return registry.get(kind)


def block_header(block: View) -> BeaconBlockHeader:
    """The header of a full or blinded block; its root is the block's root."""
    return BeaconBlockHeader(
        slot=block.slot,
        proposer_index=block.proposer_index,
        parent_root=block.parent_root,
        state_root=block.state_root,
        body_root=block.body.hash_tree_root(),
    )


@dataclass(frozen=True)
class ProducedBlock:
    """A block as ``produceBlockV3`` delivered it."""

    fork: ForkName
    blinded: bool
    block: View
    """The (blinded) BeaconBlock: what the proposer signs."""
    kzg_proofs: View | None = None
    blobs: View | None = None
    preset: Preset = MAINNET

    def signed(self, signature: bytes) -> View:
        """What the publish endpoint takes: the signed (blinded) block or signed block contents."""
        types = block_types(self.fork, self.preset)
        if self.blinded:
            return types.signed_blinded_block(message=self.block, signature=signature)
        signed_block = types.signed_block(message=self.block, signature=signature)
        if types.signed_block_contents is None:
            return signed_block
        return types.signed_block_contents(
            signed_block=signed_block, kzg_proofs=self.kzg_proofs, blobs=self.blobs
        )


def parse_produced_block(
    version: str, blinded: bool, data: Any, preset: Preset = MAINNET
) -> ProducedBlock:
    """Read ``produceBlockV3``'s JSON ``data`` for the fork ``version`` in ``preset``."""
    return _produced(version, blinded, data, from_json, preset)


def parse_produced_block_ssz(
    version: str, blinded: bool, data: bytes, preset: Preset = MAINNET
) -> ProducedBlock:
    """Read ``produceBlockV3``'s SSZ body for the fork in ``Eth-Consensus-Version``."""
    return _produced(version, blinded, data, from_ssz, preset)


def _produced(
    version: str, blinded: bool, data: Any, decode: Any, preset: Preset
) -> ProducedBlock:
    try:
        fork = ForkName.parse(version)
    except ValueError as failure:
        raise UnsupportedForkError(str(failure)) from None
    types = block_types(fork, preset)
    if blinded:
        return ProducedBlock(fork, True, decode(types.blinded_block, data), preset=preset)
    if types.block_contents is None:
        return ProducedBlock(fork, False, decode(types.block, data), preset=preset)
    contents = decode(types.block_contents, data)
    return ProducedBlock(
        fork, False, contents.block, contents.kzg_proofs, contents.blobs, preset=preset
    )


def _types_of_block(block: View, *, blinded: bool) -> BlockTypes:
    types = _registered(_TYPES_OF_BLINDED_BLOCK if blinded else _TYPES_OF_BLOCK, type(block))
    if types is not None:
        return types
    raise TypeError(f"not a supported {'blinded ' if blinded else ''}block: {type(block).__name__}")


__all__ = [
    "BlockTypes",
    "ProducedBlock",
    "SszInputError",
    "UnsupportedForkError",
    "block_header",
    "block_types",
    "blinded_block",
    "execution_payload_header",
    "parse_produced_block",
    "parse_produced_block_ssz",
]
