"""SSZ containers of the beacon state that only the simulated chain needs."""

# No ``from __future__ import annotations``: remerkleable reads the field types at class creation.
from remerkleable.basic import boolean
from remerkleable.complex import Container, List

from validator.consensus.ssz.primitives import BLSPubkey, Epoch, Gwei, Root

VALIDATOR_REGISTRY_LIMIT = 2**40


class Validator(Container):
    """The phase0 ``Validator`` record of the beacon state (unchanged up to Fulu)."""

    pubkey: BLSPubkey
    withdrawal_credentials: Root
    effective_balance: Gwei
    slashed: boolean
    activation_eligibility_epoch: Epoch
    activation_epoch: Epoch
    exit_epoch: Epoch
    withdrawable_epoch: Epoch


ValidatorList = List[Validator, VALIDATOR_REGISTRY_LIMIT]
