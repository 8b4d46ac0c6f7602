"""What each signing path the slashing-protection record judges (blocks, attestations)
is built from: the chain, the record, the held-key signing, and the far-future guard's
margin with the wall clock it reads."""

from __future__ import annotations

from collections.abc import Callable

from slashing_protection import SlashingProtectionRecord
from validator.consensus.spec import ChainSpec
from validator.signing.held_signing import HeldKeySigning


class RecordedSigningPath:
    def __init__(
        self,
        chain: ChainSpec,
        record: SlashingProtectionRecord,
        signing: HeldKeySigning,
        *,
        far_future_margin_epochs: int,
        clock: Callable[[], float],
    ) -> None:
        self._chain = chain
        self._record = record
        self._signing = signing
        self._margin = far_future_margin_epochs
        self._clock = clock
