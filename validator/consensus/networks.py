"""The public networks ``--network mainnet|sepolia|hoodi`` names, built in.

Each network's genesis (time, validators root, fork version), fork schedule and preset,
as a beacon node of that network serves them (``/eth/v1/beacon/genesis``,
``/eth/v1/config/spec``, ``/eth/v1/config/fork_schedule``); ``chain_spec()`` parses
those replies exactly as it would a node's. Every value cites where it was read:
consensus-specs v1.6.1 ``configs/mainnet.yaml`` (the version this client pins, see
``vectors/beacon_api/make_mainnet_config.py``) and the networks' own published data
(github.com/eth-clients/<network>).

Every fork of a network's config is listed, known to this client or not, as a node
lists it: a fork the client does not know makes the chain spec refuse to sign from its
epoch on, and once the client knows it the same entry schedules it (Sepolia's Gloas at
epoch 353024 was such an entry until the client learnt Gloas).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slashing_protection.networks import GENESIS_VALIDATORS_ROOTS, NETWORK_NAMES
from validator.consensus.chain_preset import (
    TARGET_AGGREGATORS_PER_COMMITTEE,
    TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE,
)
from validator.consensus.encoding import to_hex
from validator.consensus.forks import FAR_FUTURE_EPOCH
from validator.consensus.spec import PROTOCOL_DOMAIN_TYPES, ChainSpec
from validator.consensus.ssz.preset import MAINNET, Preset

#: consensus-specs v1.6.1 configs/mainnet.yaml: SLOT_DURATION_MS (every network here).
SLOT_DURATION_MS = 12000


@dataclass(frozen=True)
class Network:
    name: str
    genesis_time: int
    genesis_fork_version: bytes
    #: (fork name as the config spells it, version, epoch), in activation order.
    forks: tuple[tuple[str, bytes, int], ...]
    deposit_chain_id: int
    preset: Preset = MAINNET

    @property
    def genesis_validators_root(self) -> bytes:
        return GENESIS_VALIDATORS_ROOTS[self.name]

    def genesis_response(self) -> dict[str, Any]:
        return {
            "data": {
                "genesis_time": str(self.genesis_time),
                "genesis_validators_root": to_hex(self.genesis_validators_root),
                "genesis_fork_version": to_hex(self.genesis_fork_version),
            }
        }

    def spec_response(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "PRESET_BASE": self.preset.name,
            "CONFIG_NAME": self.name,
            "SECONDS_PER_SLOT": str(SLOT_DURATION_MS // 1000),
            "SLOT_DURATION_MS": str(SLOT_DURATION_MS),
            "SLOTS_PER_EPOCH": str(self.preset.SLOTS_PER_EPOCH),
            "EPOCHS_PER_SYNC_COMMITTEE_PERIOD": str(self.preset.EPOCHS_PER_SYNC_COMMITTEE_PERIOD),
            "TARGET_COMMITTEE_SIZE": str(self.preset.TARGET_COMMITTEE_SIZE),
            "TARGET_AGGREGATORS_PER_COMMITTEE": str(TARGET_AGGREGATORS_PER_COMMITTEE),
            "TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE": str(
                TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE
            ),
            "DEPOSIT_CHAIN_ID": str(self.deposit_chain_id),
            "DEPOSIT_NETWORK_ID": str(self.deposit_chain_id),
            "GENESIS_FORK_VERSION": to_hex(self.genesis_fork_version),
        }
        for fork, version, epoch in self.forks:
            data[f"{fork}_FORK_VERSION"] = to_hex(version)
            data[f"{fork}_FORK_EPOCH"] = str(epoch)
        for name, domain_type in PROTOCOL_DOMAIN_TYPES.items():
            data[name] = to_hex(domain_type)
        for name, value in self.preset.shape_values().items():
            data[name] = str(value)
        return {"data": data}

    def fork_schedule_response(self) -> dict[str, Any]:
        entries = []
        previous = self.genesis_fork_version
        for version, epoch in [(self.genesis_fork_version, 0)] + [
            (version, epoch) for _, version, epoch in self.forks
        ]:
            entries.append(
                {
                    "previous_version": to_hex(previous),
                    "current_version": to_hex(version),
                    "epoch": str(epoch),
                }
            )
            previous = version
        return {"data": entries}

    def chain_spec(self) -> ChainSpec:
        return ChainSpec.from_responses(
            self.genesis_response(), self.spec_response(), self.fork_schedule_response()
        )


def _version(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


NETWORKS: dict[str, Network] = {
    "mainnet": Network(
        name="mainnet",
        # eth-clients/mainnet README.md "Genesis information": genesis_time.
        genesis_time=1606824023,
        # consensus-specs v1.6.1 configs/mainnet.yaml: GENESIS_FORK_VERSION, *_FORK_VERSION,
        # *_FORK_EPOCH (Gloas not scheduled).
        genesis_fork_version=_version("0x00000000"),
        forks=(
            ("ALTAIR", _version("0x01000000"), 74240),
            ("BELLATRIX", _version("0x02000000"), 144896),
            ("CAPELLA", _version("0x03000000"), 194048),
            ("DENEB", _version("0x04000000"), 269568),
            ("ELECTRA", _version("0x05000000"), 364032),
            ("FULU", _version("0x06000000"), 411392),
            ("GLOAS", _version("0x07000000"), FAR_FUTURE_EPOCH),
        ),
        # configs/mainnet.yaml: DEPOSIT_CHAIN_ID.
        deposit_chain_id=1,
    ),
    "sepolia": Network(
        name="sepolia",
        # eth-clients/sepolia README.md ("Genesis Time: 1655733600") and metadata/README.md
        # (genesis_time of metadata/genesis.ssz).
        genesis_time=1655733600,
        # eth-clients/sepolia metadata/config.yaml: GENESIS_FORK_VERSION, *_FORK_VERSION,
        # *_FORK_EPOCH, Gloas at epoch 353024 included.
        genesis_fork_version=_version("0x90000069"),
        forks=(
            ("ALTAIR", _version("0x90000070"), 50),
            ("BELLATRIX", _version("0x90000071"), 100),
            ("CAPELLA", _version("0x90000072"), 56832),
            ("DENEB", _version("0x90000073"), 132608),
            ("ELECTRA", _version("0x90000074"), 222464),
            ("FULU", _version("0x90000075"), 272640),
            ("GLOAS", _version("0x90000076"), 353024),
        ),
        # metadata/config.yaml: DEPOSIT_CHAIN_ID.
        deposit_chain_id=11155111,
    ),
    "hoodi": Network(
        name="hoodi",
        # eth-clients/hoodi README.md ("Linux Epoch time: 1742213400"): MIN_GENESIS_TIME
        # 1742212800 plus GENESIS_DELAY 600 of metadata/config.yaml.
        genesis_time=1742213400,
        # eth-clients/hoodi metadata/config.yaml: GENESIS_FORK_VERSION, Altair to Electra
        # (Electra at 2048); Fulu's epoch 50688 and Gloas's version (not scheduled) as the
        # network's config carries them in sigp/lighthouse common/eth2_network_config/
        # built_in_network_configs/hoodi/config.yaml.
        genesis_fork_version=_version("0x10000910"),
        forks=(
            ("ALTAIR", _version("0x20000910"), 0),
            ("BELLATRIX", _version("0x30000910"), 0),
            ("CAPELLA", _version("0x40000910"), 0),
            ("DENEB", _version("0x50000910"), 0),
            ("ELECTRA", _version("0x60000910"), 2048),
            ("FULU", _version("0x70000910"), 50688),
            ("GLOAS", _version("0x80000910"), FAR_FUTURE_EPOCH),
        ),
        # metadata/config.yaml: DEPOSIT_CHAIN_ID.
        deposit_chain_id=560048,
    ),
}


def network(name: str) -> Network:
    """The built-in network ``name``; ValueError naming the known ones otherwise."""
    try:
        return NETWORKS[name]
    except KeyError:
        raise ValueError(
            f"unknown network {name!r}; built in are {', '.join(NETWORK_NAMES)}"
        ) from None
