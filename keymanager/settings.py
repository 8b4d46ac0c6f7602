"""`validator_settings.json`: per-key settings and remote signer keys, in one versioned file.

Format (version 1)::

    {
      "version": 1,
      "validators": {
        "0x<96 lowercase hex>": {
          "fee_recipient": "0x<40 lowercase hex>",   (optional)
          "gas_limit": "36000000",                   (optional, decimal uint64 as text)
          "graffiti": "text, at most 32 bytes UTF-8",  (optional)
          "enabled": false                           (optional, default true)
        }
      },
      "remote_keys": {
        "0x<96 lowercase hex>": {"url": "https://signer.example:9000"}
      }
    }

An absent setting means "use the process-wide default" (`--suggested-fee-recipient`,
`--graffiti`, the client's default gas limit). Parsing is strict and fails
closed: an empty file, invalid JSON, a duplicated key, an unknown field or
version, or an invalid value raises `SettingsFileError` naming the file; it is
never read as "no settings".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    StrictBool,
    ValidationError,
    ValidationInfo,
)

from keymanager.errors import StoreCorruptionError
from keymanager.pubkeys import format_pubkey, is_canonical_pubkey, parse_pubkey

SETTINGS_FILE_NAME = "validator_settings.json"
SETTINGS_VERSION: Final = 1
GRAFFITI_MAX_BYTES = 32
UINT64_MAX = 2**64 - 1
URL_MAX_LENGTH = 2048

_FROM_FILE = "from_settings_file"
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_UINT64_TEXT = re.compile(r"0|[1-9][0-9]{0,19}")


class SettingsValueError(ValueError):
    """A setting value that is not allowed (bad address, gas limit, graffiti or URL)."""


class SettingsFileError(StoreCorruptionError):
    """The settings file exists but cannot be trusted; the message names the file."""


# --- value checks, shared by the file parser and the setters ----------------


def parse_fee_recipient(value: str | bytes) -> bytes:
    """20 address bytes from ``0x`` + 40 hex digits (any case); the zero address is refused."""
    if isinstance(value, bytes):
        raw = value
        if len(raw) != 20:
            raise SettingsValueError(f"fee recipient must be 20 bytes, got {len(raw)}")
    elif isinstance(value, str) and _ADDRESS.fullmatch(value):
        raw = bytes.fromhex(value[2:])
    else:
        raise SettingsValueError(
            f"fee recipient must be 0x followed by 40 hex digits, got {_show(value)}"
        )
    if raw == bytes(20):
        raise SettingsValueError("fee recipient cannot be the zero address (fees would burn)")
    return raw


def format_fee_recipient(address: bytes) -> str:
    return "0x" + address.hex()


def check_gas_limit(value: int) -> int:
    """A uint64 gas limit (bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsValueError(f"gas limit must be an integer, got {_show(value)}")
    if not 0 <= value <= UINT64_MAX:
        raise SettingsValueError(f"gas limit must be a uint64 (0 to {UINT64_MAX}), got {value}")
    return value


def parse_uint64(text: str) -> int:
    """A decimal uint64 written as the Keymanager API writes it (no sign, no leading zeros)."""
    if not isinstance(text, str) or not _UINT64_TEXT.fullmatch(text):
        raise SettingsValueError(f"gas limit must be a decimal uint64 string, got {_show(text)}")
    return check_gas_limit(int(text))


def check_graffiti(value: str) -> str:
    """Graffiti text of at most 32 bytes once UTF-8 encoded."""
    if not isinstance(value, str):
        raise SettingsValueError(f"graffiti must be text, got {_show(value)}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise SettingsValueError("graffiti is not valid Unicode (lone surrogate)") from None
    if size > GRAFFITI_MAX_BYTES:
        raise SettingsValueError(
            f"graffiti must be at most {GRAFFITI_MAX_BYTES} bytes of UTF-8, got {size}"
        )
    return value


def check_remote_url(value: str) -> str:
    """An http(s) URL with a host: where the remote signer (EIP-3030) listens."""
    if not isinstance(value, str):
        raise SettingsValueError(f"remote signer URL must be text, got {_show(value)}")
    if len(value) > URL_MAX_LENGTH or any(char.isspace() or ord(char) < 0x20 for char in value):
        raise SettingsValueError(f"remote signer URL is not a valid URL: {_show(value)}")
    try:
        parts = urlsplit(value)
        host = parts.hostname
        _ = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        raise SettingsValueError(f"remote signer URL is not a valid URL: {_show(value)}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise SettingsValueError(
            f"remote signer URL must be http:// or https:// with a host, got {_show(value)}"
        )
    return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the file model ----------------------------------------------------------


def _file_pubkey(value: object) -> bytes:
    if not isinstance(value, str) or not is_canonical_pubkey(value):
        raise ValueError(f"must be 0x and 96 lowercase hex digits, got {_show(value)}")
    return parse_pubkey(value)


def _file_fee_recipient(value: object) -> bytes:
    if isinstance(value, bytes):
        return parse_fee_recipient(value)
    if not isinstance(value, str) or value != value.lower():
        raise ValueError(f"must be 0x and 40 lowercase hex digits, got {_show(value)}")
    return parse_fee_recipient(value)


def _gas_limit_field(value: object, info: ValidationInfo) -> int:
    # In the file a gas limit is text, as in the Keymanager API; in Python an int.
    if isinstance(info.context, dict) and info.context.get(_FROM_FILE):
        if not isinstance(value, str):
            raise ValueError(f"must be a decimal uint64 string, got {_show(value)}")
        return parse_uint64(value)
    if not isinstance(value, int):
        raise ValueError(f"must be an integer, got {_show(value)}")
    return check_gas_limit(value)


FilePubkey = Annotated[bytes, PlainValidator(_file_pubkey), PlainSerializer(format_pubkey)]
FeeRecipient = Annotated[
    bytes, PlainValidator(_file_fee_recipient), PlainSerializer(format_fee_recipient)
]
GasLimit = Annotated[int, PlainValidator(_gas_limit_field), PlainSerializer(str)]
Graffiti = Annotated[str, PlainValidator(check_graffiti)]
RemoteUrl = Annotated[str, PlainValidator(check_remote_url)]


class KeySettings(BaseModel):
    """One key's settings; None means the process-wide default applies."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    fee_recipient: FeeRecipient | None = None
    gas_limit: GasLimit | None = None
    graffiti: Graffiti | None = None
    enabled: StrictBool = True

    def is_default(self) -> bool:
        return self == KeySettings()


class RemoteKeyEntry(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    url: RemoteUrl


class SettingsFile(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    version: Literal[1]
    validators: dict[FilePubkey, KeySettings] = Field(default_factory=dict)
    remote_keys: dict[FilePubkey, RemoteKeyEntry] = Field(default_factory=dict)

    def to_json(self) -> bytes:
        data = {
            "version": self.version,
            "validators": {
                format_pubkey(pubkey): settings.model_dump(mode="json", exclude_defaults=True)
                for pubkey, settings in sorted(self.validators.items())
                if not settings.is_default()
            },
            "remote_keys": {
                format_pubkey(pubkey): entry.model_dump(mode="json")
                for pubkey, entry in sorted(self.remote_keys.items())
            },
        }
        return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


EMPTY_SETTINGS = SettingsFile(version=SETTINGS_VERSION)


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicated key {key!r}")
        result[key] = value
    return result


def parse_settings(data: bytes, path: Path) -> SettingsFile:
    """Parse the settings file's bytes; every problem raises `SettingsFileError` naming `path`."""
    if not data.strip():
        raise SettingsFileError(
            f"{path}: settings file is empty (expected version {SETTINGS_VERSION})"
        )
    try:
        document = json.loads(data.decode("utf-8"), object_pairs_hook=_reject_duplicate_keys)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # deep nesting: Recursion
        raise SettingsFileError(f"{path}: not valid JSON: {error}") from None
    if isinstance(document, dict) and document.get("version") != SETTINGS_VERSION:
        raise SettingsFileError(
            f"{path}: unsupported settings version {document.get('version')!r} "
            f"(this client reads version {SETTINGS_VERSION})"
        )
    try:
        return SettingsFile.model_validate(document, context={_FROM_FILE: True})
    except ValidationError as error:
        problems = []
        for problem in error.errors(include_url=False)[:4]:
            location = ".".join(str(part) for part in problem["loc"])
            message = problem["msg"].removeprefix("Value error, ")
            problems.append(f"{location}: {message}" if location else message)
        raise SettingsFileError(f"{path}: invalid settings: " + "; ".join(problems)) from None
