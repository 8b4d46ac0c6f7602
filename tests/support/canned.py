"""Canned Beacon API JSON for the test double, built to the v4.0.0 spec.

Every canned answer is checked against the spec (tests/validator/beacon/test_canned.py and
the double's strict middleware), so the double cannot drift from the standard.
Values are deterministic and distinct per field so that a test can tell them apart.
"""

from __future__ import annotations

from typing import Any


def root(tag: int) -> str:
    return "0x" + f"{tag:02x}" * 32


def signature(tag: int) -> str:
    return "0x" + f"{tag:02x}" * 96


def pubkey(index: int) -> str:
    return "0x" + f"{0x80 + index % 0x7F:02x}" * 48


INFINITY_SIGNATURE = "0xc0" + "00" * 95
FEE_RECIPIENT = "0x" + "ab" * 20
GENESIS_VALIDATORS_ROOT = root(0x4B)
GENESIS_FORK_VERSION = "0x10000038"
ELECTRA_FORK_VERSION = "0x50000038"


def syncing(*, is_syncing: bool = False, distance: int = 0, optimistic: bool = False) -> Any:
    return {
        "data": {
            "head_slot": "100",
            "sync_distance": str(distance),
            "is_syncing": is_syncing,
            "is_optimistic": optimistic,
            "el_offline": False,
        }
    }


def version() -> Any:
    return {"data": {"version": "FakeBeacon/v0.0.1 (linux)"}}


def genesis() -> Any:
    return {
        "data": {
            "genesis_time": "1606824023",
            "genesis_validators_root": GENESIS_VALIDATORS_ROOT,
            "genesis_fork_version": GENESIS_FORK_VERSION,
        }
    }


def config_spec() -> Any:
    return {
        "data": {
            "SECONDS_PER_SLOT": "12",
            "SLOTS_PER_EPOCH": "32",
            "DOMAIN_BEACON_ATTESTER": "0x01000000",
            "ELECTRA_FORK_EPOCH": "0",
            "BLOB_SCHEDULE": [{"EPOCH": "0", "MAX_BLOBS_PER_BLOCK": "9"}],
        }
    }


def fork_object(epoch: int = 0) -> Any:
    return {
        "previous_version": GENESIS_FORK_VERSION,
        "current_version": ELECTRA_FORK_VERSION,
        "epoch": str(epoch),
    }


def fork_schedule() -> Any:
    return {
        "data": [
            {
                "previous_version": GENESIS_FORK_VERSION,
                "current_version": GENESIS_FORK_VERSION,
                "epoch": "0",
            },
            fork_object(0),
        ]
    }


def state_fork() -> Any:
    return {"execution_optimistic": False, "finalized": False, "data": fork_object(0)}


def finality_checkpoints() -> Any:
    return {
        "execution_optimistic": False,
        "finalized": False,
        "data": {
            "previous_justified": {"epoch": "2", "root": root(0x21)},
            "current_justified": {"epoch": "3", "root": root(0x22)},
            "finalized": {"epoch": "1", "root": root(0x23)},
        },
    }


def validator_entry(index: int, status: str = "active_ongoing") -> Any:
    far_future = str(2**64 - 1)
    return {
        "index": str(index),
        "balance": "32000000000",
        "status": status,
        "validator": {
            "pubkey": pubkey(index),
            "withdrawal_credentials": "0x01" + "00" * 11 + "ab" * 20,
            "effective_balance": "32000000000",
            "slashed": False,
            "activation_eligibility_epoch": "0",
            "activation_epoch": "0",
            "exit_epoch": far_future,
            "withdrawable_epoch": far_future,
        },
    }


def validators(indices: list[int]) -> Any:
    return {
        "execution_optimistic": False,
        "finalized": False,
        "data": [validator_entry(index) for index in indices],
    }


def block_root() -> Any:
    return {"execution_optimistic": False, "finalized": False, "data": {"root": root(0x31)}}


def attester_duties(epoch: int, indices: list[int]) -> Any:
    return {
        "dependent_root": root(0x41),
        "execution_optimistic": False,
        "data": [
            {
                "pubkey": pubkey(index),
                "validator_index": str(index),
                "committee_index": str(index % 4),
                "committee_length": "128",
                "committees_at_slot": "4",
                "validator_committee_index": str(index % 128),
                "slot": str(epoch * 32 + index % 32),
            }
            for index in indices
        ],
    }


def proposer_duties(epoch: int) -> Any:
    return {
        "dependent_root": root(0x42),
        "execution_optimistic": False,
        "data": [
            {"pubkey": pubkey(slot % 7), "validator_index": str(slot % 7), "slot": str(slot)}
            for slot in range(epoch * 32, epoch * 32 + 2)
        ],
    }


def sync_duties(indices: list[int]) -> Any:
    return {
        "execution_optimistic": False,
        "data": [
            {
                "pubkey": pubkey(index),
                "validator_index": str(index),
                "validator_sync_committee_indices": [str(index), str(index + 100)],
            }
            for index in indices
        ],
    }


def attestation_data(slot: int, committee_index: int = 0) -> Any:
    epoch = slot // 32
    return {
        "slot": str(slot),
        "index": str(committee_index),
        "beacon_block_root": root(0x51),
        "source": {"epoch": str(max(epoch - 1, 0)), "root": root(0x52)},
        "target": {"epoch": str(epoch), "root": root(0x53)},
    }


def single_attestation(slot: int, attester_index: int) -> Any:
    return {
        "committee_index": "0",
        "attester_index": str(attester_index),
        "data": attestation_data(slot),
        "signature": signature(0x61),
    }


def electra_attestation(slot: int) -> Any:
    return {
        "aggregation_bits": "0x0f",
        "data": attestation_data(slot),
        "signature": signature(0x62),
        "committee_bits": "0x0100000000000000",
    }


def signed_aggregate_and_proof(slot: int, aggregator_index: int) -> Any:
    return {
        "message": {
            "aggregator_index": str(aggregator_index),
            "aggregate": electra_attestation(slot),
            "selection_proof": signature(0x63),
        },
        "signature": signature(0x64),
    }


def sync_committee_message(slot: int, validator_index: int) -> Any:
    return {
        "slot": str(slot),
        "beacon_block_root": root(0x31),
        "validator_index": str(validator_index),
        "signature": signature(0x65),
    }


def sync_contribution(slot: int, subcommittee_index: int, block_root_hex: str) -> Any:
    return {
        "slot": str(slot),
        "beacon_block_root": block_root_hex,
        "subcommittee_index": str(subcommittee_index),
        "aggregation_bits": "0x" + "ff" * 16,
        "signature": signature(0x66),
    }


def signed_contribution_and_proof(slot: int, aggregator_index: int) -> Any:
    return {
        "message": {
            "aggregator_index": str(aggregator_index),
            "selection_proof": signature(0x67),
            "contribution": sync_contribution(slot, 1, root(0x31)),
        },
        "signature": signature(0x68),
    }


def signed_registration(index: int) -> Any:
    return {
        "message": {
            "fee_recipient": FEE_RECIPIENT,
            "gas_limit": "36000000",
            "timestamp": "1700000000",
            "pubkey": pubkey(index),
        },
        "signature": signature(0x69),
    }


def signed_voluntary_exit(index: int) -> Any:
    return {"message": {"epoch": "10", "validator_index": str(index)}, "signature": signature(0x6A)}


def _execution_payload_common(slot: int) -> dict[str, Any]:
    return {
        "parent_hash": root(0x71),
        "fee_recipient": FEE_RECIPIENT,
        "state_root": root(0x72),
        "receipts_root": root(0x73),
        "logs_bloom": "0x" + "00" * 256,
        "prev_randao": root(0x74),
        "block_number": str(slot),
        "gas_limit": "36000000",
        "gas_used": "0",
        "timestamp": str(1606824023 + 12 * slot),
        "extra_data": "0x",
        "base_fee_per_gas": "7",
        "blob_gas_used": "0",
        "excess_blob_gas": "0",
        "block_hash": root(0x75),
    }


def _electra_body_common() -> dict[str, Any]:
    return {
        "randao_reveal": signature(0x76),
        "eth1_data": {"deposit_root": root(0x77), "deposit_count": "64", "block_hash": root(0x78)},
        "graffiti": root(0x00),
        "proposer_slashings": [],
        "attester_slashings": [],
        "attestations": [],
        "deposits": [],
        "voluntary_exits": [],
        "sync_aggregate": {
            "sync_committee_bits": "0x" + "00" * 64,
            "sync_committee_signature": INFINITY_SIGNATURE,
        },
        "bls_to_execution_changes": [],
        "blob_kzg_commitments": [],
        "execution_requests": {"deposits": [], "withdrawals": [], "consolidations": []},
    }


def electra_block(slot: int, proposer_index: int = 3) -> Any:
    body = _electra_body_common()
    body["execution_payload"] = {
        **_execution_payload_common(slot),
        "transactions": [],
        "withdrawals": [],
    }
    return {
        "slot": str(slot),
        "proposer_index": str(proposer_index),
        "parent_root": root(0x79),
        "state_root": root(0x7A),
        "body": body,
    }


def electra_blinded_block(slot: int, proposer_index: int = 3) -> Any:
    body = _electra_body_common()
    body["execution_payload_header"] = {
        **_execution_payload_common(slot),
        "transactions_root": root(0x7B),
        "withdrawals_root": root(0x7C),
    }
    return {
        "slot": str(slot),
        "proposer_index": str(proposer_index),
        "parent_root": root(0x79),
        "state_root": root(0x7A),
        "body": body,
    }


PAYLOAD_VALUE = "123456789"
BLOCK_VALUE = "987654321"


def produced_block(slot: int, *, blinded: bool = False) -> tuple[Any, dict[str, str]]:
    """Body and headers of GET /eth/v3/validator/blocks/{slot}."""
    data = (
        electra_blinded_block(slot)
        if blinded
        else {"block": electra_block(slot), "kzg_proofs": [], "blobs": []}
    )
    body = {
        "version": "electra",
        "execution_payload_blinded": blinded,
        "execution_payload_value": PAYLOAD_VALUE,
        "consensus_block_value": BLOCK_VALUE,
        "data": data,
    }
    headers = {
        "Eth-Consensus-Version": "electra",
        "Eth-Execution-Payload-Blinded": "true" if blinded else "false",
        "Eth-Execution-Payload-Value": PAYLOAD_VALUE,
        "Eth-Consensus-Block-Value": BLOCK_VALUE,
    }
    return body, headers


def signed_block_contents(slot: int) -> Any:
    return {
        "signed_block": {"message": electra_block(slot), "signature": signature(0x7D)},
        "kzg_proofs": [],
        "blobs": [],
    }


def signed_blinded_block(slot: int) -> Any:
    return {"message": electra_blinded_block(slot), "signature": signature(0x7E)}


def aggregate_attestation(slot: int) -> tuple[Any, dict[str, str]]:
    return (
        {"version": "electra", "data": electra_attestation(slot)},
        {"Eth-Consensus-Version": "electra"},
    )


def contribution(slot: int, subcommittee_index: int, block_root_hex: str) -> Any:
    return {"data": sync_contribution(slot, subcommittee_index, block_root_hex)}


def error(status: int, message: str) -> Any:
    return {"code": status, "message": message}


def indexed_error(failures: list[tuple[int, str]]) -> Any:
    return {
        "code": 400,
        "message": "some items failed",
        "failures": [{"index": index, "message": message} for index, message in failures],
    }


def head_event_data(slot: int) -> Any:
    return {
        "slot": str(slot),
        "block": root(0x81),
        "state": root(0x82),
        "epoch_transition": slot % 32 == 0,
        "previous_duty_dependent_root": root(0x83),
        "current_duty_dependent_root": root(0x84),
        "execution_optimistic": False,
    }


def block_event_data(slot: int) -> Any:
    return {"slot": str(slot), "block": root(0x85), "execution_optimistic": False}
