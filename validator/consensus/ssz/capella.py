"""Capella operations that later blocks still carry."""

from remerkleable.complex import Container

from validator.consensus.ssz.primitives import (
    BLSPubkey,
    BLSSignature,
    ExecutionAddress,
    Gwei,
    ValidatorIndex,
    WithdrawalIndex,
)


class Withdrawal(Container):
    index: WithdrawalIndex
    validator_index: ValidatorIndex
    address: ExecutionAddress
    amount: Gwei


class BLSToExecutionChange(Container):
    validator_index: ValidatorIndex
    from_bls_pubkey: BLSPubkey
    to_execution_address: ExecutionAddress


class SignedBLSToExecutionChange(Container):
    message: BLSToExecutionChange
    signature: BLSSignature
