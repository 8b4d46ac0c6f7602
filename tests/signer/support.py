"""Helpers for the signer tests: a chain with fork boundaries, a settable clock, a crypto spy,
and signing roots computed independently of validator.consensus.domains (sha256 by hand)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from hashlib import sha256

from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import AttestationData, Checkpoint

GVR = sha256(b"signer tests").digest()
GENESIS_TIME = 1_700_000_000
SLOT_SECONDS = 2
SLOTS_PER_EPOCH = 8
# Deneb at genesis, Electra from epoch 2 (slot 16), Fulu from epoch 4 (slot 32).
FORK_EPOCHS = {ForkName.ELECTRA: 2, ForkName.FULU: 4}
CLOCK_SLOT = 40
"""Where the test clock starts: slot 40, epoch 5 (Fulu)."""


def make_chain(**changes: object) -> ChainSpec:
    settings: dict[str, object] = {
        "genesis_time": GENESIS_TIME,
        "genesis_validators_root": GVR,
        "slot_duration_ms": SLOT_SECONDS * 1000,
        "slots_per_epoch": SLOTS_PER_EPOCH,
        "fork_epochs": FORK_EPOCHS,
    }
    settings.update(changes)
    return SimulatedChainConfig(**settings).chain_spec()  # type: ignore[arg-type]


class Clock:
    """A wall clock the test sets; starts in the middle of CLOCK_SLOT."""

    def __init__(self, slot: int = CLOCK_SLOT) -> None:
        self.now = 0.0
        self.at_slot(slot)

    def at_slot(self, slot: int, into: float = 0.5) -> None:
        self.now = GENESIS_TIME + (slot + into) * SLOT_SECONDS

    def __call__(self) -> float:
        return self.now


@dataclass
class CryptoSpy:
    """Every sign / sign_many call the signer makes: (secret keys, message)."""

    calls: list[tuple[str, list[int], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, name: str, sks: list[int], message: bytes) -> None:
        with self.lock:
            self.calls.append((name, list(sks), message))

    @property
    def signed_secrets(self) -> list[int]:
        return [sk for _, sks, _ in self.calls for sk in sks]

    @property
    def messages(self) -> list[bytes]:
        return [message for _, _, message in self.calls]

    def by_name(self, name: str) -> list[tuple[list[int], bytes]]:
        return [(sks, message) for called, sks, message in self.calls if called == name]


# --- signing roots by hand --------------------------------------------------


def chunk(number: int) -> bytes:
    return number.to_bytes(32, "little")


def merkleize(chunks: list[bytes]) -> bytes:
    width = 1
    while width < len(chunks):
        width *= 2
    layer = chunks + [bytes(32)] * (width - len(chunks))
    while len(layer) > 1:
        layer = [sha256(layer[i] + layer[i + 1]).digest() for i in range(0, len(layer), 2)]
    return layer[0]


def version(fork: ForkName) -> bytes:
    return simulated_fork_version(fork)


def signing_root(object_root: bytes, domain_type: bytes, fork: ForkName, gvr: bytes = GVR) -> bytes:
    """sha256(object_root + domain), domain = type + sha256(version ++ 0*28 ++ gvr)[:28]."""
    domain = domain_type + sha256(version(fork) + bytes(28) + gvr).digest()[:28]
    return sha256(object_root + domain).digest()


def attestation_data(slot: int, source: int, target: int, head: bytes = b"head") -> AttestationData:
    return AttestationData(
        slot=slot,
        index=0,
        beacon_block_root=sha256(head).digest(),
        source=Checkpoint(epoch=source, root=sha256(b"source %d" % source).digest()),
        target=Checkpoint(epoch=target, root=sha256(b"target %d" % target).digest()),
    )


def attestation_data_root(data: AttestationData) -> bytes:
    def checkpoint(epoch: int, root: bytes) -> bytes:
        return merkleize([chunk(epoch), root])

    return merkleize(
        [
            chunk(int(data.slot)),
            chunk(int(data.index)),
            bytes(data.beacon_block_root),
            checkpoint(int(data.source.epoch), bytes(data.source.root)),
            checkpoint(int(data.target.epoch), bytes(data.target.root)),
        ]
    )


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
