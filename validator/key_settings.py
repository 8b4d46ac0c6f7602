"""Per-key proposer settings: fee recipient and graffiti.

A key's own setting (set through the Keymanager API, kept by
``keymanager.store``) wins; otherwise the process-wide ``--suggested-fee-recipient``
and ``--graffiti`` apply. A key with no fee recipient anywhere is left out of
``prepare_beacon_proposer``, so the beacon node uses its own default.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from validator.beacon import encode_graffiti

log = logging.getLogger("validator.settings")


@dataclass(frozen=True)
class KeyOverrides:
    """What the key's own settings say (None: not set)."""

    fee_recipient: bytes | None = None
    graffiti: str | None = None


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
    ) -> None:
        if default_fee_recipient is not None and len(default_fee_recipient) != 20:
            raise ValueError("a fee recipient is 20 bytes")
        if default_graffiti is not None:
            encode_graffiti(default_graffiti)  # refuse more than 32 bytes at start-up
        self.default_fee_recipient = default_fee_recipient
        self.default_graffiti = default_graffiti
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
        return own if own is not None else self.default_fee_recipient

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
