"""Builder-API registration (builder-specs ``ValidatorRegistrationV1``)."""

from remerkleable.complex import Container

from validator.consensus.ssz.primitives import BLSPubkey, BLSSignature, ExecutionAddress, uint64


class ValidatorRegistrationV1(Container):
    fee_recipient: ExecutionAddress
    gas_limit: uint64
    timestamp: uint64
    pubkey: BLSPubkey


class SignedValidatorRegistrationV1(Container):
    message: ValidatorRegistrationV1
    signature: BLSSignature
