"""SSZ object roots and signing roots computed by hand with sha256: the oracle the
signing-root and signer tests hold the product to.

Written from the consensus specification's formulas (merkleization of 32-byte
chunks, ``compute_domain``, ``compute_signing_root``) without touching
``validator.consensus.domains``, ``signing_roots`` or ``ssz``'s hashing, so a
mistake in those shows as a mismatch instead of being copied into the expectation.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

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


# --- whole containers, by hand, for any preset -------------------------------------
#
# A second SSZ merkleization, written from simple-serialize.md and the containers of the
# consensus specs (phase0, altair, capella, deneb, electra beacon-chain.md) without
# remerkleable: a type is a small tuple, ``("uint", bytes)``, ``("bytes", length)``,
# ``("bytelist", limit)``, ``("bitvector", length)``, ``("bitlist", limit)``,
# ``("list", element, limit)``, ``("vector", element, length)`` or
# ``("container", ((name, type), ...))``. Values are the Beacon API / ssz_static YAML
# forms (integers as numbers or decimal strings, bytes and bitfields as 0x-hex).

Shape = tuple[Any, ...]

UINT64: Shape = ("uint", 8)
UINT256: Shape = ("uint", 32)
BYTES4: Shape = ("bytes", 4)
BYTES20: Shape = ("bytes", 20)
BYTES32: Shape = ("bytes", 32)
BYTES48: Shape = ("bytes", 48)
BYTES96: Shape = ("bytes", 96)

# The preset values the containers below use, written out from presets/*/ (v1.6.0).
MAINNET_BY_HAND: dict[str, int] = {
    "MAX_COMMITTEES_PER_SLOT": 64,
    "MAX_VALIDATORS_PER_COMMITTEE": 2048,
    "SYNC_COMMITTEE_SIZE": 512,
    "MAX_WITHDRAWALS_PER_PAYLOAD": 16,
    "MAX_BLOB_COMMITMENTS_PER_BLOCK": 4096,
    "MAX_DEPOSIT_REQUESTS_PER_PAYLOAD": 8192,
    "MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD": 16,
    "MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD": 2,
}
MINIMAL_BY_HAND: dict[str, int] = {
    **MAINNET_BY_HAND,
    "MAX_COMMITTEES_PER_SLOT": 4,
    "SYNC_COMMITTEE_SIZE": 32,
    "MAX_WITHDRAWALS_PER_PAYLOAD": 4,
}


def _container(*fields: tuple[str, Shape]) -> Shape:
    return ("container", fields)


def shapes_by_hand(preset: dict[str, int]) -> dict[str, Shape]:
    """The containers a validator signs (and blocks carry) for ``preset``, by spec name;
    ``electra.*`` and ``deneb.*`` name the forks' own forms."""
    committee = preset["MAX_VALIDATORS_PER_COMMITTEE"]
    committees = preset["MAX_COMMITTEES_PER_SLOT"]
    checkpoint = _container(("epoch", UINT64), ("root", BYTES32))
    data = _container(
        ("slot", UINT64),
        ("index", UINT64),
        ("beacon_block_root", BYTES32),
        ("source", checkpoint),
        ("target", checkpoint),
    )
    header = _container(
        ("slot", UINT64),
        ("proposer_index", UINT64),
        ("parent_root", BYTES32),
        ("state_root", BYTES32),
        ("body_root", BYTES32),
    )
    signed_header = _container(("message", header), ("signature", BYTES96))
    proposer_slashing = _container(
        ("signed_header_1", signed_header), ("signed_header_2", signed_header)
    )

    def attester_slashing(index_limit: int) -> Shape:
        indexed = _container(
            ("attesting_indices", ("list", UINT64, index_limit)),
            ("data", data),
            ("signature", BYTES96),
        )
        return _container(("attestation_1", indexed), ("attestation_2", indexed))

    attestation = _container(
        ("aggregation_bits", ("bitlist", committee)), ("data", data), ("signature", BYTES96)
    )
    electra_attestation = _container(
        ("aggregation_bits", ("bitlist", committee * committees)),
        ("data", data),
        ("signature", BYTES96),
        ("committee_bits", ("bitvector", committees)),
    )
    deposit = _container(
        ("proof", ("vector", BYTES32, 33)),
        (
            "data",
            _container(
                ("pubkey", BYTES48),
                ("withdrawal_credentials", BYTES32),
                ("amount", UINT64),
                ("signature", BYTES96),
            ),
        ),
    )
    signed_exit = _container(
        ("message", _container(("epoch", UINT64), ("validator_index", UINT64))),
        ("signature", BYTES96),
    )
    sync_aggregate = _container(
        ("sync_committee_bits", ("bitvector", preset["SYNC_COMMITTEE_SIZE"])),
        ("sync_committee_signature", BYTES96),
    )
    contribution = _container(
        ("slot", UINT64),
        ("beacon_block_root", BYTES32),
        ("subcommittee_index", UINT64),
        ("aggregation_bits", ("bitvector", preset["SYNC_COMMITTEE_SIZE"] // 4)),
        ("signature", BYTES96),
    )
    withdrawal = _container(
        ("index", UINT64), ("validator_index", UINT64), ("address", BYTES20), ("amount", UINT64)
    )
    payload = _container(
        ("parent_hash", BYTES32),
        ("fee_recipient", BYTES20),
        ("state_root", BYTES32),
        ("receipts_root", BYTES32),
        ("logs_bloom", ("bytes", 256)),
        ("prev_randao", BYTES32),
        ("block_number", UINT64),
        ("gas_limit", UINT64),
        ("gas_used", UINT64),
        ("timestamp", UINT64),
        ("extra_data", ("bytelist", 32)),
        ("base_fee_per_gas", UINT256),
        ("block_hash", BYTES32),
        ("transactions", ("list", ("bytelist", 2**30), 2**20)),
        ("withdrawals", ("list", withdrawal, preset["MAX_WITHDRAWALS_PER_PAYLOAD"])),
        ("blob_gas_used", UINT64),
        ("excess_blob_gas", UINT64),
    )
    bls_change = _container(
        (
            "message",
            _container(
                ("validator_index", UINT64),
                ("from_bls_pubkey", BYTES48),
                ("to_execution_address", BYTES20),
            ),
        ),
        ("signature", BYTES96),
    )
    requests = _container(
        (
            "deposits",
            (
                "list",
                _container(
                    ("pubkey", BYTES48),
                    ("withdrawal_credentials", BYTES32),
                    ("amount", UINT64),
                    ("signature", BYTES96),
                    ("index", UINT64),
                ),
                preset["MAX_DEPOSIT_REQUESTS_PER_PAYLOAD"],
            ),
        ),
        (
            "withdrawals",
            (
                "list",
                _container(
                    ("source_address", BYTES20),
                    ("validator_pubkey", BYTES48),
                    ("amount", UINT64),
                ),
                preset["MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD"],
            ),
        ),
        (
            "consolidations",
            (
                "list",
                _container(
                    ("source_address", BYTES20),
                    ("source_pubkey", BYTES48),
                    ("target_pubkey", BYTES48),
                ),
                preset["MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD"],
            ),
        ),
    )

    def body(electra: bool) -> Shape:
        fields: list[tuple[str, Shape]] = [
            ("randao_reveal", BYTES96),
            (
                "eth1_data",
                _container(
                    ("deposit_root", BYTES32), ("deposit_count", UINT64), ("block_hash", BYTES32)
                ),
            ),
            ("graffiti", BYTES32),
            ("proposer_slashings", ("list", proposer_slashing, 16)),
            (
                "attester_slashings",
                ("list", attester_slashing(committee * committees), 1)
                if electra
                else ("list", attester_slashing(committee), 2),
            ),
            (
                "attestations",
                ("list", electra_attestation, 8) if electra else ("list", attestation, 128),
            ),
            ("deposits", ("list", deposit, 16)),
            ("voluntary_exits", ("list", signed_exit, 16)),
            ("sync_aggregate", sync_aggregate),
            ("execution_payload", payload),
            ("bls_to_execution_changes", ("list", bls_change, 16)),
            ("blob_kzg_commitments", ("list", BYTES48, preset["MAX_BLOB_COMMITMENTS_PER_BLOCK"])),
        ]
        if electra:
            fields.append(("execution_requests", requests))
        return ("container", tuple(fields))

    def block(electra: bool) -> Shape:
        return _container(
            ("slot", UINT64),
            ("proposer_index", UINT64),
            ("parent_root", BYTES32),
            ("state_root", BYTES32),
            ("body", body(electra)),
        )

    return {
        "SyncAggregate": sync_aggregate,
        "SyncCommitteeContribution": contribution,
        "ContributionAndProof": _container(
            ("aggregator_index", UINT64),
            ("contribution", contribution),
            ("selection_proof", BYTES96),
        ),
        "electra.Attestation": electra_attestation,
        "electra.AggregateAndProof": _container(
            ("aggregator_index", UINT64),
            ("aggregate", electra_attestation),
            ("selection_proof", BYTES96),
        ),
        "deneb.ExecutionPayload": payload,
        "deneb.BeaconBlock": block(electra=False),
        "electra.BeaconBlock": block(electra=True),
    }


def _zero_hashes(depth: int) -> list[bytes]:
    hashes = [bytes(32)]
    for _ in range(depth):
        hashes.append(sha256(hashes[-1] + hashes[-1]).digest())
    return hashes


def merkleize_to(chunks: list[bytes], limit: int) -> bytes:
    """merkleize(chunks, limit): a tree of ``next_pow2(limit)`` leaves, the missing ones zero
    (without building the zero subtrees, so a limit of 2**40 costs 40 hashes)."""
    assert len(chunks) <= limit
    depth = max(limit - 1, 0).bit_length()
    zero = _zero_hashes(depth)
    layer = list(chunks)
    for level in range(depth):
        if len(layer) % 2:
            layer.append(zero[level])
        layer = [sha256(layer[i] + layer[i + 1]).digest() for i in range(0, len(layer), 2)]
    return layer[0] if layer else zero[depth]


def _mix_in_length(root: bytes, length: int) -> bytes:
    return sha256(root + length.to_bytes(32, "little")).digest()


def _pack(data: bytes) -> list[bytes]:
    return [data[i : i + 32].ljust(32, b"\0") for i in range(0, len(data), 32)]


def _hex(value: str) -> bytes:
    assert value.startswith("0x"), value
    return bytes.fromhex(value[2:])


def _bits_of(raw: bytes) -> list[bool]:
    return [bool(raw[i // 8] >> (i % 8) & 1) for i in range(len(raw) * 8)]


def bits_to_bytes(bits: list[bool]) -> bytes:
    """Bits packed little-endian into bytes, as SSZ bitfields are."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i // 8] |= 1 << (i % 8)
    return bytes(out)


def root_by_hand(shape: Shape, value: Any) -> bytes:
    """hash_tree_root of ``value`` (Beacon API / YAML form) of the hand-written ``shape``."""
    kind = shape[0]
    if kind == "uint":
        return int(value).to_bytes(shape[1], "little").ljust(32, b"\0")
    if kind == "bytes":
        raw = _hex(value)
        assert len(raw) == shape[1]
        return merkleize_to(_pack(raw), (shape[1] + 31) // 32)
    if kind == "bytelist":
        raw = _hex(value)
        assert len(raw) <= shape[1]
        return _mix_in_length(merkleize_to(_pack(raw), (shape[1] + 31) // 32), len(raw))
    if kind == "bitvector":
        raw = _hex(value)
        assert len(raw) == (shape[1] + 7) // 8
        return merkleize_to(_pack(raw), (shape[1] + 255) // 256)
    if kind == "bitlist":
        bits = _bits_of(_hex(value))
        length = max(i for i, bit in enumerate(bits) if bit)  # the delimiter bit
        assert length <= shape[1]
        packed = _pack(bits_to_bytes(bits[:length]))
        return _mix_in_length(merkleize_to(packed, (shape[1] + 255) // 256), length)
    if kind == "list":
        element, limit = shape[1], shape[2]
        assert len(value) <= limit
        if element[0] == "uint":
            packed = _pack(b"".join(int(item).to_bytes(element[1], "little") for item in value))
            chunk_limit = (limit * element[1] + 31) // 32
            return _mix_in_length(merkleize_to(packed, chunk_limit), len(value))
        roots = [root_by_hand(element, item) for item in value]
        return _mix_in_length(merkleize_to(roots, limit), len(value))
    if kind == "vector":
        assert len(value) == shape[2]
        return merkleize_to([root_by_hand(shape[1], item) for item in value], shape[2])
    if kind == "container":
        assert set(value) == {name for name, _ in shape[1]}, sorted(value)
        roots = [root_by_hand(field, value[name]) for name, field in shape[1]]
        return merkleize_to(roots, len(roots))
    raise ValueError(f"unknown shape {kind}")
