"""Open the record a location names: a validators directory, or a postgresql:// URL.

The PostgreSQL driver is imported only when a URL is given, so the file record's users
never load it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from slashing_protection.protocol import SlashingProtectionRecord
from slashing_protection.record import SlashingProtection

URL_SCHEMES = ("postgresql://", "postgres://")
Location = str | os.PathLike[str]


def is_database_url(location: object) -> bool:
    """Whether a location is a PostgreSQL URL (the shared record) rather than a directory."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


def open_record(
    location: Location,
    genesis_validators_root: bytes,
    *,
    register: Iterable[bytes] = (),
    create: bool = False,
    missing_hint: str | None = None,
) -> SlashingProtectionRecord:
    """`SlashingProtection.open` for a directory, `PostgresSlashingProtection.open` for a URL
    (the same arguments; `missing_hint` is the caller's advice when there is no record)."""
    if is_database_url(location):
        from slashing_protection.postgres import PostgresSlashingProtection

        assert isinstance(location, str)
        return PostgresSlashingProtection.open(
            location,
            genesis_validators_root,
            register=register,
            create=create,
            missing_hint=missing_hint,
        )
    return SlashingProtection.open(
        location,
        genesis_validators_root,
        register=register,
        create=create,
        missing_hint=missing_hint,
    )


def open_offline_record(
    location: Location, *, create_directory: bool = False
) -> SlashingProtectionRecord:
    """The offline commands' open (the chain is the record's own) for either store."""
    if is_database_url(location):
        from slashing_protection.postgres import PostgresSlashingProtection

        assert isinstance(location, str)
        return PostgresSlashingProtection.open_offline(location)
    return SlashingProtection.open_offline(location, create_directory=create_directory)
