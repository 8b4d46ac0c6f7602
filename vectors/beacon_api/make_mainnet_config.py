"""Write the mainnet replies of /eth/v1/beacon/genesis, /eth/v1/config/spec and
/eth/v1/config/fork_schedule that the chain-spec tests parse.

Run from the repository root: python vectors/beacon_api/make_mainnet_config.py

No beacon node was queried: the replies are assembled by hand, in the shape the
Beacon API v4.0.0 specifies (apis/config/spec.yaml: every value a string,
0x-hex for anything the specs write in hex, arrays as arrays), from:
  - the example of apis/config/spec.yaml (DEPOSIT_CONTRACT_ADDRESS,
    DEPOSIT_NETWORK_ID, DOMAIN_AGGREGATE_AND_PROOF, INACTIVITY_PENALTY_QUOTIENT*,
    and the BLOB_SCHEDULE entry format);
  - consensus-specs v1.6.1 configs/mainnet.yaml (fork versions and epochs, time,
    churn, networking, BLOB_SCHEDULE values) and presets/mainnet/*.yaml;
  - the domain types and validator constants of consensus-specs v1.6.1
    specs/phase0 and specs/altair (beacon-chain.md, validator.md), and
    DOMAIN_APPLICATION_MASK, which beacon nodes serve alongside them;
  - mainnet's genesis (time 1606824023, root 0x4b363db9...bfe95), the values
    of /eth/v1/beacon/genesis on every mainnet node.
A few keys real nodes serve that no test here reads are left out.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAR_FUTURE_EPOCH = str(2**64 - 1)

GENESIS = {
    "genesis_time": "1606824023",
    "genesis_validators_root": "0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95",
    "genesis_fork_version": "0x00000000",
}

FORKS = [  # (name, version, epoch) from configs/mainnet.yaml, v1.6.1
    ("GENESIS", "0x00000000", "0"),
    ("ALTAIR", "0x01000000", "74240"),
    ("BELLATRIX", "0x02000000", "144896"),
    ("CAPELLA", "0x03000000", "194048"),
    ("DENEB", "0x04000000", "269568"),
    ("ELECTRA", "0x05000000", "364032"),
    ("FULU", "0x06000000", "411392"),
    ("GLOAS", "0x07000000", FAR_FUTURE_EPOCH),
]

CONFIG = {  # configs/mainnet.yaml, v1.6.1
    "PRESET_BASE": "mainnet",
    "CONFIG_NAME": "mainnet",
    "TERMINAL_TOTAL_DIFFICULTY": "58750000000000000000000",
    "TERMINAL_BLOCK_HASH": "0x" + "00" * 32,
    "TERMINAL_BLOCK_HASH_ACTIVATION_EPOCH": FAR_FUTURE_EPOCH,
    "MIN_GENESIS_ACTIVE_VALIDATOR_COUNT": "16384",
    "MIN_GENESIS_TIME": "1606824000",
    "GENESIS_DELAY": "604800",
    "SECONDS_PER_SLOT": "12",
    "SLOT_DURATION_MS": "12000",
    "SECONDS_PER_ETH1_BLOCK": "14",
    "MIN_VALIDATOR_WITHDRAWABILITY_DELAY": "256",
    "SHARD_COMMITTEE_PERIOD": "256",
    "ETH1_FOLLOW_DISTANCE": "2048",
    "ATTESTATION_DUE_BPS": "3333",
    "AGGREGATE_DUE_BPS": "6667",
    "SYNC_MESSAGE_DUE_BPS": "3333",
    "CONTRIBUTION_DUE_BPS": "6667",
    "INACTIVITY_SCORE_BIAS": "4",
    "INACTIVITY_SCORE_RECOVERY_RATE": "16",
    "EJECTION_BALANCE": "16000000000",
    "MIN_PER_EPOCH_CHURN_LIMIT": "4",
    "CHURN_LIMIT_QUOTIENT": "65536",
    "MAX_PER_EPOCH_ACTIVATION_CHURN_LIMIT": "8",
    "MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA": "128000000000",
    "MAX_PER_EPOCH_ACTIVATION_EXIT_CHURN_LIMIT": "256000000000",
    "PROPOSER_SCORE_BOOST": "40",
    "DEPOSIT_CHAIN_ID": "1",
    "DEPOSIT_NETWORK_ID": "1",
    "DEPOSIT_CONTRACT_ADDRESS": "0x00000000219ab540356cBB839Cbe05303d7705Fa",
    "MAX_PAYLOAD_SIZE": "10485760",
    "ATTESTATION_SUBNET_COUNT": "64",
    "MAX_BLOBS_PER_BLOCK": "6",
    "MAX_BLOBS_PER_BLOCK_ELECTRA": "9",
    "NUMBER_OF_CUSTODY_GROUPS": "128",
    "BLOB_SCHEDULE": [
        {"EPOCH": "412672", "MAX_BLOBS_PER_BLOCK": "15"},
        {"EPOCH": "419072", "MAX_BLOBS_PER_BLOCK": "21"},
    ],
}

PRESET = {  # presets/mainnet/{phase0,altair,bellatrix,capella,deneb,electra,fulu}.yaml, v1.6.1
    "MAX_COMMITTEES_PER_SLOT": "64",
    "TARGET_COMMITTEE_SIZE": "128",
    "MAX_VALIDATORS_PER_COMMITTEE": "2048",
    "SHUFFLE_ROUND_COUNT": "90",
    "MAX_EFFECTIVE_BALANCE": "32000000000",
    "SLOTS_PER_EPOCH": "32",
    "MIN_SEED_LOOKAHEAD": "1",
    "MAX_SEED_LOOKAHEAD": "4",
    "EPOCHS_PER_ETH1_VOTING_PERIOD": "64",
    "SLOTS_PER_HISTORICAL_ROOT": "8192",
    "INACTIVITY_PENALTY_QUOTIENT": "67108864",
    "INACTIVITY_PENALTY_QUOTIENT_ALTAIR": "50331648",
    "MAX_PROPOSER_SLASHINGS": "16",
    "MAX_ATTESTER_SLASHINGS": "2",
    "MAX_ATTESTATIONS": "128",
    "MAX_DEPOSITS": "16",
    "MAX_VOLUNTARY_EXITS": "16",
    "SYNC_COMMITTEE_SIZE": "512",
    "EPOCHS_PER_SYNC_COMMITTEE_PERIOD": "256",
    "MIN_SYNC_COMMITTEE_PARTICIPANTS": "1",
    "MAX_BYTES_PER_TRANSACTION": "1073741824",
    "MAX_TRANSACTIONS_PER_PAYLOAD": "1048576",
    "BYTES_PER_LOGS_BLOOM": "256",
    "MAX_EXTRA_DATA_BYTES": "32",
    "MAX_BLS_TO_EXECUTION_CHANGES": "16",
    "MAX_WITHDRAWALS_PER_PAYLOAD": "16",
    "MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP": "16384",
    "FIELD_ELEMENTS_PER_BLOB": "4096",
    "MAX_BLOB_COMMITMENTS_PER_BLOCK": "4096",
    "MAX_ATTESTER_SLASHINGS_ELECTRA": "1",
    "MAX_ATTESTATIONS_ELECTRA": "8",
    "MAX_DEPOSIT_REQUESTS_PER_PAYLOAD": "8192",
    "MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD": "16",
    "MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD": "2",
    "FIELD_ELEMENTS_PER_CELL": "64",
    "FIELD_ELEMENTS_PER_EXT_BLOB": "8192",
    "CELLS_PER_EXT_BLOB": "128",
}

CONSTANTS = {  # specs/phase0 and specs/altair, v1.6.1; DOMAIN_APPLICATION_MASK likewise
    "BLS_WITHDRAWAL_PREFIX": "0x00",
    "DOMAIN_BEACON_PROPOSER": "0x00000000",
    "DOMAIN_BEACON_ATTESTER": "0x01000000",
    "DOMAIN_RANDAO": "0x02000000",
    "DOMAIN_DEPOSIT": "0x03000000",
    "DOMAIN_VOLUNTARY_EXIT": "0x04000000",
    "DOMAIN_SELECTION_PROOF": "0x05000000",
    "DOMAIN_AGGREGATE_AND_PROOF": "0x06000000",
    "DOMAIN_SYNC_COMMITTEE": "0x07000000",
    "DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF": "0x08000000",
    "DOMAIN_CONTRIBUTION_AND_PROOF": "0x09000000",
    "DOMAIN_BLS_TO_EXECUTION_CHANGE": "0x0a000000",
    "DOMAIN_APPLICATION_MASK": "0x00000001",
    "TARGET_AGGREGATORS_PER_COMMITTEE": "16",
    "TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE": "16",
    "SYNC_COMMITTEE_SUBNET_COUNT": "4",
}


def spec_data() -> dict[str, object]:
    data: dict[str, object] = {}
    for name, version, epoch in FORKS:
        data[f"{name}_FORK_VERSION"] = version
        if name != "GENESIS":
            data[f"{name}_FORK_EPOCH"] = epoch
    data.update(CONFIG)
    data.update(PRESET)
    data.update(CONSTANTS)
    return data


def fork_schedule_data() -> list[dict[str, str]]:
    entries = []
    previous = FORKS[0][1]
    for _, version, epoch in FORKS:
        if epoch == FAR_FUTURE_EPOCH:
            continue  # not scheduled
        entries.append({"previous_version": previous, "current_version": version, "epoch": epoch})
        previous = version
    return entries


def replies() -> dict[str, object]:
    return {
        "mainnet_genesis.json": {"data": GENESIS},
        "mainnet_spec.json": {"data": spec_data()},
        "mainnet_fork_schedule.json": {"data": fork_schedule_data()},
    }


def main() -> None:
    for name, body in replies().items():
        (HERE / name).write_text(json.dumps(body, indent=2) + "\n")


if __name__ == "__main__":
    main()
