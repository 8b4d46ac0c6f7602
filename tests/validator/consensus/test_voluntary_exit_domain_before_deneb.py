"""Voluntary exits before Deneb take the spec's get_domain in the including state: the
state's previous fork version when the exit's epoch is before that fork, else its current
one, never an older fork's. The known answer is the consensus specs' pyspec result for
an exit at mainnet's Bellatrix epoch 150000."""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path

import crypto_backend
from slashing_protection import SlashingProtection
from validator.consensus.domains import DOMAIN_VOLUNTARY_EXIT, voluntary_exit_domain
from validator.consensus.forks import FAR_FUTURE_EPOCH, FORK_ORDER, ForkName
from validator.consensus.interop import interop_keypair
from validator.consensus.signing_roots import voluntary_exit_signing_root
from validator.consensus.spec import ChainSpec, ScheduledFork
from validator.consensus.ssz import VoluntaryExit
from validator.signing.signer import Signer

MAINNET_GVR = bytes.fromhex("4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95")
MAINNET_GENESIS_TIME = 1606824023
MAINNET_FORK_EPOCHS = {
    ForkName.PHASE0: 0,
    ForkName.ALTAIR: 74240,
    ForkName.BELLATRIX: 144896,
    ForkName.CAPELLA: 194048,
    ForkName.DENEB: 269568,
    ForkName.ELECTRA: 364032,
    ForkName.FULU: FAR_FUTURE_EPOCH,
    ForkName.GLOAS: FAR_FUTURE_EPOCH,
}
MAINNET = ChainSpec(
    genesis_time=MAINNET_GENESIS_TIME,
    genesis_validators_root=MAINNET_GVR,
    genesis_fork_version=bytes(4),
    slot_duration_ms=12000,
    slots_per_epoch=32,
    forks=tuple(
        ScheduledFork(fork, bytes([fork.order, 0, 0, 0]), MAINNET_FORK_EPOCHS[fork])
        for fork in FORK_ORDER
    ),
    epochs_per_sync_committee_period=256,
    sync_committee_size=512,
    sync_committee_subnet_count=4,
    target_aggregators_per_committee=16,
    target_aggregators_per_sync_subcommittee=16,
    max_committees_per_slot=64,
)
PYSPEC_SIGNING_ROOT = bytes.fromhex(
    "a8f5e0f13284c46c0f9135c490c4ec62e9df2f2ab99ee64e63af72608cbe13e0"
)
"""The pyspec's signing root of VoluntaryExit(epoch=0, validator_index=0) at epoch 150000."""


def plain_domain(version: bytes) -> bytes:
    fork_data_root = sha256(version + bytes(28) + MAINNET_GVR).digest()
    return DOMAIN_VOLUNTARY_EXIT + fork_data_root[:28]


def test_the_pyspec_known_answer_at_bellatrix() -> None:
    exit_message = VoluntaryExit(epoch=0, validator_index=0)
    root = voluntary_exit_signing_root(MAINNET, exit_message, current_epoch=150000)
    assert root == PYSPEC_SIGNING_ROOT


def test_previous_version_before_the_including_fork_current_version_from_it() -> None:
    altair, bellatrix = bytes.fromhex("01000000"), bytes.fromhex("02000000")
    # Included at Bellatrix: an exit of any epoch before Bellatrix takes Altair's version,
    # even one from phase0 (the state knows no older fork); from Bellatrix on, Bellatrix's.
    for exit_epoch in (0, 10, 74239, 74240, 144895):
        assert voluntary_exit_domain(MAINNET, exit_epoch, current_epoch=150000) == plain_domain(
            altair
        )
    for exit_epoch in (144896, 150000):
        assert voluntary_exit_domain(MAINNET, exit_epoch, current_epoch=150000) == plain_domain(
            bellatrix
        )
    # Included in phase0 the previous and current versions are both the genesis version.
    assert voluntary_exit_domain(MAINNET, 0, current_epoch=10) == plain_domain(bytes(4))


def test_from_deneb_on_it_stays_capellas() -> None:
    capella = plain_domain(bytes.fromhex("03000000"))
    assert voluntary_exit_domain(MAINNET, 0, current_epoch=300000) == capella


async def test_the_signer_signs_the_known_root(tmp_path: Path) -> None:
    secret, pubkey = interop_keypair(0)
    epoch_150000 = MAINNET_GENESIS_TIME + 150000 * 32 * 12 + 5.0
    with SlashingProtection.open(tmp_path, MAINNET_GVR, register=[pubkey]) as record:
        signer = Signer(MAINNET, record, clock=lambda: epoch_150000)
        await signer.add_keys({pubkey: secret})
        signed = await signer.sign_voluntary_exit(pubkey, VoluntaryExit(epoch=0, validator_index=0))
    assert crypto_backend.verify(pubkey, PYSPEC_SIGNING_ROOT, bytes(signed.signature))
