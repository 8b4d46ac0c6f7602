"""The genesis validators roots of the public networks ``--network`` names.

The record names its chain by this root; ``slashing-protection import --network NAME``
refuses an interchange (or a record) of another chain. ``validator.consensus.networks``
holds the rest of each network (genesis time, forks) and takes the roots from here.
"""

from __future__ import annotations

GENESIS_VALIDATORS_ROOTS: dict[str, bytes] = {
    # eth-clients/mainnet README.md "Genesis information" (genesis_validators_root), the
    # value every mainnet beacon node serves at /eth/v1/beacon/genesis.
    "mainnet": bytes.fromhex("4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95"),
    # eth-clients/sepolia README.md ("Genesis Validators Root") and metadata/README.md
    # (genesis_validators_root, computed from metadata/genesis.ssz).
    "sepolia": bytes.fromhex("d8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078"),
    # eth-clients/hoodi metadata/genesis_validators_root.txt and README.md ("Genesis
    # validator root"), after the genesis update of 2025-03-15.
    "hoodi": bytes.fromhex("212f13fc4df078b6cb7db228f1c8307566dcecf900867401a92023d7ba99cb5f"),
}

NETWORK_NAMES: tuple[str, ...] = tuple(GENESIS_VALIDATORS_ROOTS)


def network_of(genesis_validators_root: bytes) -> str | None:
    """The name of the public network with this root, or None."""
    for name, root in GENESIS_VALIDATORS_ROOTS.items():
        if root == genesis_validators_root:
            return name
    return None
