"""The built-in networks of ``--network``: the values agree with independent data (the
repository's v1.6.1 mainnet replies, the networks' published fork digests), and each
parses as a node's replies would."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from slashing_protection.networks import GENESIS_VALIDATORS_ROOTS, network_of
from tests.support.official_vectors import REPO_ROOT
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.consensus.networks import NETWORKS, network
from validator.consensus.spec import ChainSpec

MAINNET_REPLIES = REPO_ROOT / "vectors" / "beacon_api"


def fork_digest(version: bytes, genesis_validators_root: bytes) -> bytes:
    """compute_fork_digest, by hand: the first 4 bytes of hash_tree_root(ForkData)."""
    return hashlib.sha256(version + bytes(28) + genesis_validators_root).digest()[:4]


def test_mainnet_is_what_the_v1_6_1_replies_in_the_repository_parse_to() -> None:
    replies = [
        orjson.loads((MAINNET_REPLIES / f"mainnet_{name}.json").read_bytes())
        for name in ("genesis", "spec", "fork_schedule")
    ]
    assert NETWORKS["mainnet"].chain_spec() == ChainSpec.from_responses(*replies)


@pytest.mark.parametrize(
    ("name", "published_digest"),
    # eth-clients/mainnet README.md genesis_fork_digest; eth-clients/sepolia README.md and
    # metadata/README.md genesis_fork_digest (Hoodi's repository publishes none).
    [("mainnet", "b5303f2a"), ("sepolia", "a8fee8ee")],
)
def test_the_genesis_fork_digest_is_the_published_one(name: str, published_digest: str) -> None:
    chain = network(name).chain_spec()
    digest = fork_digest(chain.genesis_fork_version, chain.genesis_validators_root)
    assert digest.hex() == published_digest


def test_every_network_parses_with_its_root_its_preset_and_twelve_second_slots() -> None:
    assert set(NETWORKS) == set(GENESIS_VALIDATORS_ROOTS) == {"mainnet", "sepolia", "hoodi"}
    for name, built_in in NETWORKS.items():
        chain = built_in.chain_spec()
        assert chain.genesis_validators_root == GENESIS_VALIDATORS_ROOTS[name]
        assert network_of(chain.genesis_validators_root) == name
        assert chain.preset.name == "mainnet"
        assert chain.slot_duration_ms == 12000 and chain.slots_per_epoch == 32
        assert chain.fork_name_at(chain.fork(ForkName.FULU).epoch) is ForkName.FULU
    hoodi = network("hoodi").chain_spec()
    assert hoodi.fork_name_at(0) is ForkName.DENEB
    assert hoodi.fork(ForkName.ELECTRA).epoch == 2048
    assert network_of(bytes(32)) is None


def test_sepolia_schedules_gloas_at_epoch_353024() -> None:
    chain = network("sepolia").chain_spec()
    if "gloas" in {fork.value for fork in ForkName}:
        assert chain.fork_name_at(353024).value == "gloas"
        assert chain.fork_name_at(353023) is ForkName.FULU
    else:  # a fork this client does not know yet: nothing is signed from its epoch on
        assert chain.unknown_fork_epoch == 353024
    for name in ("mainnet", "hoodi"):
        assert network(name).chain_spec().unknown_fork_epoch == FAR_FUTURE_EPOCH


def test_an_unknown_name_is_refused_naming_the_built_in_ones() -> None:
    with pytest.raises(ValueError, match="built in are mainnet, sepolia, hoodi"):
        network("holesky")
