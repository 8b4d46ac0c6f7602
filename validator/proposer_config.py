"""``--proposer-config FILE``: per-key proposer settings in the JSON shape Teku documents.

::

    {
      "proposer_config": {
        "0x<96 hex>": {
          "fee_recipient": "0x<40 hex>",
          "builder": {
            "enabled": true,
            "gas_limit": "36000000",
            "registration_overrides": {"timestamp": "1700000000"}
          }
        }
      },
      "default_config": {
        "fee_recipient": "0x<40 hex>",
        "builder": {"enabled": false}
      }
    }

Every field is optional; one that is absent falls through to the next layer
(``default_config``, then the flags). The file is read once at start-up and
parsed strictly: invalid JSON, a duplicated key, an unknown field or a value of
the wrong shape raises :class:`ProposerConfigError` whose message is one line
naming the field, so a typo never silently turns the builder flow off (or on).
A ``registration_overrides.public_key`` may only name the key itself: this
client signs a registration with the key it registers.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("validator.settings")

UINT64_MAX = 2**64 - 1

_ADDRESS = re.compile(r"0[xX][0-9a-fA-F]{40}")
_PUBKEY = re.compile(r"0[xX][0-9a-fA-F]{96}")
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,19}")


class ProposerConfigError(ValueError):
    """The proposer configuration cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class ProposerEntry:
    """One layer's settings (``default_config`` or one key's); None: not set here."""

    fee_recipient: bytes | None = None
    builder_enabled: bool | None = None
    gas_limit: int | None = None
    registration_timestamp: int | None = None


@dataclass(frozen=True)
class ProposerConfig:
    """The parsed file: entries by public key, and the default entry."""

    keys: Mapping[bytes, ProposerEntry] = field(default_factory=dict)
    default: ProposerEntry = ProposerEntry()

    def entry(self, pubkey: bytes) -> ProposerEntry:
        return self.keys.get(pubkey, ProposerEntry())

    def enables_builder(self) -> bool:
        """Whether any entry turns the builder flow on."""
        return any(entry.builder_enabled for entry in [self.default, *self.keys.values()])


NO_PROPOSER_CONFIG = ProposerConfig()


def _show(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, bytes) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _object(value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProposerConfigError(f"{where}: must be an object, got {_show(value)}")
    for name in value:
        if name not in allowed:
            raise ProposerConfigError(
                f"{where}.{name}: unknown field (allowed: {', '.join(allowed)})"
            )
    return value


def _fee_recipient(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or not _ADDRESS.fullmatch(value):
        raise ProposerConfigError(f"{where}: must be 0x and 40 hex digits, got {_show(value)}")
    address = bytes.fromhex(value[2:])
    if address == bytes(20):
        raise ProposerConfigError(f"{where}: the zero address would burn the fees")
    return address


def _uint64(value: Any, where: str) -> int:
    # Teku writes these as decimal strings; a JSON integer means the same number.
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ProposerConfigError(f"{where}: must be a decimal uint64, got {_show(value)}")
    if isinstance(value, str) and not _DECIMAL.fullmatch(value):
        raise ProposerConfigError(f"{where}: must be a decimal uint64, got {_show(value)}")
    number = int(value)
    if not 0 <= number <= UINT64_MAX:
        raise ProposerConfigError(f"{where}: must be a uint64, got {value}")
    return number


def _entry(value: Any, where: str, pubkey: bytes | None) -> ProposerEntry:
    body = _object(value, where, ("fee_recipient", "builder"))
    fee_recipient = None
    if "fee_recipient" in body:
        fee_recipient = _fee_recipient(body["fee_recipient"], f"{where}.fee_recipient")
    enabled = gas_limit = timestamp = None
    if "builder" in body:
        builder_where = f"{where}.builder"
        builder = _object(
            body["builder"], builder_where, ("enabled", "gas_limit", "registration_overrides")
        )
        if "enabled" in builder:
            enabled = builder["enabled"]
            if not isinstance(enabled, bool):
                raise ProposerConfigError(
                    f"{builder_where}.enabled: must be true or false, got {_show(enabled)}"
                )
        if "gas_limit" in builder:
            gas_limit = _uint64(builder["gas_limit"], f"{builder_where}.gas_limit")
        if "registration_overrides" in builder:
            timestamp = _overrides(
                builder["registration_overrides"],
                f"{builder_where}.registration_overrides",
                pubkey,
            )
    return ProposerEntry(fee_recipient, enabled, gas_limit, timestamp)


def _overrides(value: Any, where: str, pubkey: bytes | None) -> int | None:
    overrides = _object(value, where, ("timestamp", "public_key"))
    if "public_key" in overrides:
        named = overrides["public_key"]
        if not isinstance(named, str) or not _PUBKEY.fullmatch(named):
            raise ProposerConfigError(
                f"{where}.public_key: must be 0x and 96 hex digits, got {_show(named)}"
            )
        if pubkey is None or bytes.fromhex(named[2:]) != pubkey:
            raise ProposerConfigError(
                f"{where}.public_key: only the key itself can be registered (this client "
                "signs each registration with the key it names)"
            )
    if "timestamp" in overrides:
        return _uint64(overrides["timestamp"], f"{where}.timestamp")
    return None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ProposerConfigError(f"duplicated key {key!r}")
        result[key] = value
    return result


def parse_proposer_config(data: bytes) -> ProposerConfig:
    """The configuration in ``data``; ProposerConfigError naming the field otherwise."""
    if not data.strip():
        raise ProposerConfigError("the file is empty")
    try:
        document = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except ProposerConfigError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ProposerConfigError(f"not valid JSON: {error}") from None
    top = _object(document, "(top level)", ("proposer_config", "default_config"))
    keys: dict[bytes, ProposerEntry] = {}
    by_key = top.get("proposer_config", {})
    if not isinstance(by_key, dict):
        raise ProposerConfigError(f"proposer_config: must be an object, got {_show(by_key)}")
    for text, value in by_key.items():
        where = f"proposer_config.{text}"
        if not _PUBKEY.fullmatch(text):
            raise ProposerConfigError(f"{where}: a key must be 0x and 96 hex digits")
        pubkey = bytes.fromhex(text[2:])
        if pubkey in keys:
            raise ProposerConfigError(f"{where}: the key is listed twice (in another case)")
        keys[pubkey] = _entry(value, where, pubkey)
    default = ProposerEntry()
    if "default_config" in top:
        default = _entry(top["default_config"], "default_config", None)
        if default.registration_timestamp is not None:
            raise ProposerConfigError(
                "default_config.builder.registration_overrides: a timestamp is per key"
            )
    return ProposerConfig(keys, default)


def load_proposer_config(path: Path) -> ProposerConfig:
    """Read and parse ``path``; ProposerConfigError (one line, naming the file) otherwise."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ProposerConfigError(
            f"--proposer-config {path}: cannot read it: {error.strerror or error}"
        ) from None
    try:
        return parse_proposer_config(data)
    except ProposerConfigError as error:
        raise ProposerConfigError(f"--proposer-config {path}: {error}") from None


def warn_unknown_keys(config: ProposerConfig, known: Collection[bytes]) -> None:
    """A key the file names that this client does not have: a warning, not a stop (a file
    shared by several machines names keys of the others)."""
    unknown = sorted(pubkey for pubkey in config.keys if pubkey not in known)
    if unknown:
        shown = ", ".join("0x" + pubkey.hex()[:16] for pubkey in unknown[:3])
        log.warning(
            "the proposer config names %d key(s) this validator does not have: %s%s",
            len(unknown),
            shown,
            f" and {len(unknown) - 3} more" if len(unknown) > 3 else "",
        )
