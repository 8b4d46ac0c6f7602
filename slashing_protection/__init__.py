"""Durable EIP-3076 slashing protection: the minimal record, its lock, interchange import/export.

`SlashingProtection.open(validators_dir, genesis_validators_root, register=...)` is the
record a signer checks and writes before every block or attestation signature;
`open_record(dir_or_postgresql_url, ...)` opens either it or the shared PostgreSQL record
(`slashing_protection.postgres`), both `SlashingProtectionRecord`s.
"""

from slashing_protection.errors import (
    ChainMismatchError,
    InterchangeFormatError,
    InterchangeReadError,
    RecordClosedError,
    RecordCorruptError,
    RecordLockedError,
    RecordMissingError,
    RecordUnreadableError,
    RecordWriteError,
    SlashingProtectionError,
)
from slashing_protection.interchange import ParsedInterchange, parse_interchange
from slashing_protection.opening import is_database_url, open_offline_record, open_record
from slashing_protection.protocol import SlashingProtectionRecord
from slashing_protection.record import LOCK_FILE, RECORD_FILE, SlashingProtection
from slashing_protection.rule import Watermark
from slashing_protection.verdict import RecordRefusal, Verdict

__all__ = [
    "LOCK_FILE",
    "RECORD_FILE",
    "ChainMismatchError",
    "InterchangeFormatError",
    "InterchangeReadError",
    "ParsedInterchange",
    "RecordClosedError",
    "RecordCorruptError",
    "RecordLockedError",
    "RecordMissingError",
    "RecordRefusal",
    "RecordUnreadableError",
    "RecordWriteError",
    "SlashingProtection",
    "SlashingProtectionError",
    "SlashingProtectionRecord",
    "Verdict",
    "Watermark",
    "is_database_url",
    "open_offline_record",
    "open_record",
    "parse_interchange",
]
