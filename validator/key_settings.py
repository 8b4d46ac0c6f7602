"""Per-key proposer settings: fee recipient, gas limit, graffiti and the builder flow.

Each setting is taken from the first layer that has it:

1. the key's own setting, set through the Keymanager API and kept by
   ``keymanager.store`` (so a live change survives a restart);
2. the key's entry in ``--proposer-config`` (``validator.proposer_config``);
3. that file's ``default_config``;
4. the flags: ``--suggested-fee-recipient``, ``--graffiti``, ``--builder``
   (the gas limit's last layer is the client's default, 36,000,000).

A key with no fee recipient anywhere is left out of ``prepare_beacon_proposer``,
so the beacon node uses its own default, and is not registered with builders.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from validator.beacon import encode_graffiti
from validator.proposer_config import NO_PROPOSER_CONFIG, ProposerConfig

log = logging.getLogger("validator.settings")

#: The gas limit a key registers with when no layer sets one (what other clients default to).
DEFAULT_GAS_LIMIT = 36_000_000
#: ``--builder-boost-factor``'s default: the builder's bid and the local block compared as they are.
DEFAULT_BUILDER_BOOST_FACTOR = 100
UINT64_MAX = 2**64 - 1


@dataclass(frozen=True)
class KeyOverrides:
    """What the key's own settings say (None: not set)."""

    fee_recipient: bytes | None = None
    graffiti: str | None = None
    gas_limit: int | None = None


#: Reads one key's own settings; may raise for a key the store does not know.
OverridesLookup = Callable[[bytes], KeyOverrides]


def parse_fee_recipient(text: str) -> bytes:
    """An execution address: 0x and 40 hex digits."""
    value = text.strip()
    if not (value.startswith(("0x", "0X")) and len(value) == 42):
        raise ValueError(f"a fee recipient is 0x followed by 40 hex digits, got {text!r}")
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        raise ValueError(f"a fee recipient is 0x followed by 40 hex digits, got {text!r}") from None


class ProposerSettings:
    def __init__(
        self,
        *,
        default_fee_recipient: bytes | None = None,
        default_graffiti: str | None = None,
        overrides: OverridesLookup | None = None,
        builder: bool = False,
        builder_boost_factor: int = DEFAULT_BUILDER_BOOST_FACTOR,
        proposer_config: ProposerConfig = NO_PROPOSER_CONFIG,
    ) -> None:
        if default_fee_recipient is not None and len(default_fee_recipient) != 20:
            raise ValueError("a fee recipient is 20 bytes")
        if default_graffiti is not None:
            encode_graffiti(default_graffiti)  # refuse more than 32 bytes at start-up
        if not 0 <= builder_boost_factor <= UINT64_MAX:
            raise ValueError("the builder boost factor is a uint64")
        self.default_fee_recipient = default_fee_recipient
        self.default_graffiti = default_graffiti
        self.builder = builder
        self.builder_boost_factor_flag = builder_boost_factor
        self.proposer_config = proposer_config
        self._overrides = overrides

    def _own(self, pubkey: bytes) -> KeyOverrides:
        if self._overrides is None:
            return KeyOverrides()
        try:
            return self._overrides(pubkey)
        except Exception as error:  # a settings problem must never cost the duty itself
            log.warning("cannot read the settings of 0x%s: %s", pubkey.hex()[:16], error)
            return KeyOverrides()

    def fee_recipient(self, pubkey: bytes) -> bytes | None:
        own = self._own(pubkey).fee_recipient
        if own is not None:
            return own
        config = self.proposer_config
        for layer in (config.entry(pubkey).fee_recipient, config.default.fee_recipient):
            if layer is not None:
                return layer
        return self.default_fee_recipient

    def gas_limit(self, pubkey: bytes) -> int:
        own = self._own(pubkey).gas_limit
        if own is not None:
            return own
        config = self.proposer_config
        for layer in (config.entry(pubkey).gas_limit, config.default.gas_limit):
            if layer is not None:
                return layer
        return DEFAULT_GAS_LIMIT

    def builder_enabled(self, pubkey: bytes) -> bool:
        """Whether the key registers with builders and takes their blocks."""
        config = self.proposer_config
        for layer in (config.entry(pubkey).builder_enabled, config.default.builder_enabled):
            if layer is not None:
                return layer
        return self.builder

    def builder_boost_factor(self, pubkey: bytes) -> int:
        """What ``produceBlockV3`` is told: the flag's factor, 0 (local only) for a key
        whose builder flow is off."""
        return self.builder_boost_factor_flag if self.builder_enabled(pubkey) else 0

    def registration_timestamp(self, pubkey: bytes) -> int | None:
        """The file's ``registration_overrides.timestamp`` (None: the time of signing)."""
        return self.proposer_config.entry(pubkey).registration_timestamp

    def graffiti(self, pubkey: bytes) -> bytes | None:
        """The 32 graffiti bytes for the key's blocks; None lets the beacon node choose."""
        text = self._own(pubkey).graffiti
        if text is None:
            text = self.default_graffiti
        if text is None:
            return None
        try:
            return encode_graffiti(text)
        except ValueError as error:
            log.warning("graffiti of 0x%s not used: %s", pubkey.hex()[:16], error)
            return None
