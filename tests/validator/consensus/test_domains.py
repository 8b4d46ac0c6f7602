"""Domains: the consensus-spec functions against plain sha256, and each kind's fork rule."""

from __future__ import annotations

import json
from hashlib import sha256

import pytest

from tests.support.official_vectors import REPO_ROOT, official_vectors
from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.domains import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_APPLICATION_BUILDER,
    DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF,
    DOMAIN_RANDAO,
    DOMAIN_SELECTION_PROOF,
    DOMAIN_SYNC_COMMITTEE,
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
    DOMAIN_VOLUNTARY_EXIT,
    aggregate_and_proof_domain,
    application_builder_domain,
    beacon_attester_domain,
    beacon_proposer_domain,
    compute_domain,
    compute_fork_data_root,
    compute_signing_root,
    compute_signing_root_from_object_root,
    contribution_and_proof_domain,
    get_domain,
    randao_domain,
    selection_proof_domain,
    sync_committee_domain,
    sync_committee_selection_proof_domain,
    voluntary_exit_domain,
)
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec, UnsupportedForkError
from validator.consensus.ssz import Checkpoint

ROOT = sha256(b"simulated genesis validators root").digest()
V = simulated_fork_version


def _plain_domain(domain_type: bytes, version: bytes, genesis_validators_root: bytes) -> bytes:
    # ForkData is two chunks: the version right-padded to 32 bytes, then the root.
    fork_data_root = sha256(version + bytes(28) + genesis_validators_root).digest()
    return domain_type + fork_data_root[:28]


@pytest.fixture(scope="module")
def chain() -> ChainSpec:
    """8 slots per epoch; Deneb from genesis, Electra from epoch 2, Fulu from epoch 4."""
    return SimulatedChainConfig(
        genesis_time=0,
        genesis_validators_root=ROOT,
        slots_per_epoch=8,
        fork_epochs={ForkName.DENEB: 0, ForkName.ELECTRA: 2, ForkName.FULU: 4},
    ).chain_spec()


@pytest.fixture(scope="module")
def pre_deneb_chain() -> ChainSpec:
    """Bellatrix from genesis, Capella from epoch 5, Deneb from epoch 10."""
    return SimulatedChainConfig(
        genesis_time=0,
        genesis_validators_root=ROOT,
        slots_per_epoch=8,
        fork_epochs={ForkName.CAPELLA: 5, ForkName.DENEB: 10},
    ).chain_spec()


def test_compute_domain_matches_plain_sha256() -> None:
    for domain_type in (DOMAIN_BEACON_PROPOSER, DOMAIN_SYNC_COMMITTEE, DOMAIN_APPLICATION_BUILDER):
        for version in (bytes(4), bytes.fromhex("0500de7e")):
            assert compute_domain(domain_type, version, ROOT) == _plain_domain(
                domain_type, version, ROOT
            )
    assert compute_fork_data_root(bytes(4), ROOT) == sha256(bytes(32) + ROOT).digest()
    # The genesis validators root defaults to zero, as for the builder and deposit domains.
    assert compute_domain(DOMAIN_RANDAO, bytes(4)) == compute_domain(
        DOMAIN_RANDAO, bytes(4), bytes(32)
    )


def test_signing_root_matches_plain_sha256() -> None:
    checkpoint = Checkpoint(epoch=7, root=ROOT)
    object_root = sha256((7).to_bytes(32, "little") + ROOT).digest()
    domain = bytes(range(32))
    assert compute_signing_root(checkpoint, domain) == sha256(object_root + domain).digest()
    assert (
        compute_signing_root_from_object_root(object_root, domain)
        == sha256(object_root + domain).digest()
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: compute_domain(b"\x00\x00\x00", bytes(4), ROOT),
        lambda: compute_domain(DOMAIN_RANDAO, bytes(5), ROOT),
        lambda: compute_domain(DOMAIN_RANDAO, bytes(4), bytes(31)),
        lambda: compute_signing_root_from_object_root(bytes(32), bytes(31)),
        lambda: compute_signing_root_from_object_root("00" * 32, bytes(32)),  # type: ignore[arg-type]
    ],
)
def test_wrong_lengths_are_refused(call: object) -> None:
    with pytest.raises(ValueError, match="must be"):
        call()  # type: ignore[operator]


def test_get_domain_follows_the_fork_at_the_epoch(chain: ChainSpec) -> None:
    assert get_domain(chain, DOMAIN_RANDAO, 1) == _plain_domain(
        DOMAIN_RANDAO, V(ForkName.DENEB), ROOT
    )
    assert get_domain(chain, DOMAIN_RANDAO, 2) == _plain_domain(
        DOMAIN_RANDAO, V(ForkName.ELECTRA), ROOT
    )
    assert get_domain(chain, DOMAIN_RANDAO, 4) == _plain_domain(
        DOMAIN_RANDAO, V(ForkName.FULU), ROOT
    )


# (helper, domain type, argument just before the Electra boundary, just at it)
SLOT_KINDS = [
    (beacon_proposer_domain, DOMAIN_BEACON_PROPOSER),
    (selection_proof_domain, DOMAIN_SELECTION_PROOF),
    (aggregate_and_proof_domain, DOMAIN_AGGREGATE_AND_PROOF),
    (sync_committee_domain, DOMAIN_SYNC_COMMITTEE),
    (sync_committee_selection_proof_domain, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF),
    (contribution_and_proof_domain, DOMAIN_CONTRIBUTION_AND_PROOF),
]


@pytest.mark.parametrize(("helper", "domain_type"), SLOT_KINDS)
def test_slot_kinds_use_the_fork_of_the_slots_epoch(
    chain: ChainSpec, helper: object, domain_type: bytes
) -> None:
    def domain_at(slot: int) -> bytes:
        return helper(chain, slot)  # type: ignore[operator, no-any-return]

    assert domain_at(15) == _plain_domain(domain_type, V(ForkName.DENEB), ROOT)  # epoch 1
    assert domain_at(16) == _plain_domain(domain_type, V(ForkName.ELECTRA), ROOT)  # epoch 2
    assert domain_at(31) == _plain_domain(domain_type, V(ForkName.ELECTRA), ROOT)  # epoch 3
    assert domain_at(32) == _plain_domain(domain_type, V(ForkName.FULU), ROOT)  # epoch 4


@pytest.mark.parametrize(
    ("helper", "domain_type"),
    [
        (beacon_attester_domain, DOMAIN_BEACON_ATTESTER),
        (randao_domain, DOMAIN_RANDAO),
    ],
)
def test_epoch_kinds_use_the_fork_of_the_epoch(
    chain: ChainSpec, helper: object, domain_type: bytes
) -> None:
    for epoch, fork in [
        (1, ForkName.DENEB),
        (2, ForkName.ELECTRA),
        (3, ForkName.ELECTRA),
        (4, ForkName.FULU),
    ]:
        assert helper(chain, epoch) == _plain_domain(domain_type, V(fork), ROOT)  # type: ignore[operator]


def test_domain_types_are_distinct() -> None:
    types = [
        DOMAIN_BEACON_PROPOSER,
        DOMAIN_BEACON_ATTESTER,
        DOMAIN_RANDAO,
        DOMAIN_VOLUNTARY_EXIT,
        DOMAIN_SELECTION_PROOF,
        DOMAIN_AGGREGATE_AND_PROOF,
        DOMAIN_SYNC_COMMITTEE,
        DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
        DOMAIN_CONTRIBUTION_AND_PROOF,
        DOMAIN_APPLICATION_BUILDER,
    ]
    assert len(set(types)) == len(types)


def test_voluntary_exit_uses_capella_from_deneb_on(chain: ChainSpec) -> None:
    capella = _plain_domain(DOMAIN_VOLUNTARY_EXIT, V(ForkName.CAPELLA), ROOT)
    for exit_epoch in (0, 1, 2, 4, 1000):
        assert voluntary_exit_domain(chain, exit_epoch) == capella
        assert voluntary_exit_domain(chain, exit_epoch, current_epoch=exit_epoch + 3) == capella
    # Not the version of the fork in force (the pre-EIP-7044 rule would give these).
    assert capella != _plain_domain(DOMAIN_VOLUNTARY_EXIT, V(ForkName.FULU), ROOT)
    assert capella != get_domain(chain, DOMAIN_VOLUNTARY_EXIT, 4)


def test_voluntary_exit_before_deneb_uses_the_exit_epochs_fork(pre_deneb_chain: ChainSpec) -> None:
    def expected(fork: ForkName) -> bytes:
        return _plain_domain(DOMAIN_VOLUNTARY_EXIT, V(fork), ROOT)

    assert voluntary_exit_domain(pre_deneb_chain, 3) == expected(ForkName.BELLATRIX)
    assert voluntary_exit_domain(pre_deneb_chain, 3, current_epoch=4) == expected(
        ForkName.BELLATRIX
    )
    assert voluntary_exit_domain(pre_deneb_chain, 7) == expected(ForkName.CAPELLA)
    # Included from Deneb on, whatever the exit's own epoch: Capella (EIP-7044).
    assert voluntary_exit_domain(pre_deneb_chain, 3, current_epoch=10) == expected(ForkName.CAPELLA)
    assert voluntary_exit_domain(pre_deneb_chain, 12) == expected(ForkName.CAPELLA)


def test_builder_domain_ignores_fork_and_chain(chain: ChainSpec) -> None:
    domain = application_builder_domain(chain)
    assert domain == _plain_domain(DOMAIN_APPLICATION_BUILDER, V(ForkName.PHASE0), bytes(32))
    assert domain[:4] == bytes.fromhex("00000001")


def test_builder_domain_on_mainnet_is_the_flashbots_known_answer() -> None:
    beacon_api = REPO_ROOT / "vectors" / "beacon_api"
    mainnet = ChainSpec.from_responses(
        json.loads((beacon_api / "mainnet_genesis.json").read_text()),
        json.loads((beacon_api / "mainnet_spec.json").read_text()),
    )
    answers = json.loads(
        (official_vectors("ssz", "flashbots_go-boost-utils") / "known_answers.json").read_text()
    )
    vector = next(
        v for v in answers["compute_domain"] if v["label"] == "DOMAIN_APPLICATION_BUILDER mainnet"
    )
    assert "0x" + application_builder_domain(mainnet).hex() == vector["domain"]


def test_no_domain_past_a_fork_the_client_does_not_know(chain: ChainSpec) -> None:
    schedule = SimulatedChainConfig(
        genesis_time=0, genesis_validators_root=ROOT
    ).fork_schedule_response()
    schedule["data"].append(
        {"previous_version": "0x0600de7e", "current_version": "0x0800de7e", "epoch": "6"}
    )
    config = SimulatedChainConfig(genesis_time=0, genesis_validators_root=ROOT)
    guarded = ChainSpec.from_responses(config.genesis_response(), config.spec_response(), schedule)
    assert beacon_attester_domain(guarded, 5)
    with pytest.raises(UnsupportedForkError):
        beacon_attester_domain(guarded, 6)
    with pytest.raises(UnsupportedForkError):
        beacon_proposer_domain(guarded, 6 * 8)
