"""The shared record's connection: connecting with the session settings the record relies
on, URLs without their passwords, the schema's creation (`db_init`) and the chain row."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.adapt import Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from slashing_protection.errors import (
    RecordUnreadableError,
)
from slashing_protection.postgres.migrations import (
    apply_migrations,
)

Connection = psycopg.Connection[Any]

# Connection settings a URL may override. Keepalives make a dead peer (a host gone, a
# cable pulled) an error within about 25 s instead of a hang.
_DEFAULT_PARAMS = {
    "connect_timeout": "5",
    "application_name": "unslashable-validator",
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
}
# Read committed plus explicit row locks: every decision reads only rows this transaction
# has locked, so it sees their latest committed version and nobody can change them until
# the commit. Set per session, so the server's default isolation does not matter. A lock
# held by a stuck host is waited for 5 s at most; a transaction left open by a client that
# hangs is ended by the server after 30 s, releasing its locks.
_SESSION_SETUP = (
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET lock_timeout = '5s'",
    "SET idle_in_transaction_session_timeout = '30s'",
)


class DatabaseUnavailableError(RecordUnreadableError):
    """The database cannot be reached, or the connection to it was lost."""


def describe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:
        return "(a malformed postgresql:// URL)"
    user = f"{params['user']}@" if "user" in params else ""
    host = str(params.get("host", ""))
    port = str(params.get("port", ""))
    dbname = params.get("dbname", "")
    if host.startswith("/"):  # a Unix socket directory
        query = f"?host={host}" + (f"&port={port}" if port else "")
        return f"postgresql://{user}/{dbname}{query}"
    return f"postgresql://{user}{host}{':' + port if port else ''}/{dbname}"


class _UintLoader(Loader):
    """numeric (text) -> int: every number of the schema is a whole number."""

    def load(self, data: Any) -> int:
        return int(bytes(data))


def connect(url: str, where: str) -> Connection:
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"the slashing-protection database URL is malformed: {first_line(exc)}"
        ) from None
    extra = {key: value for key, value in _DEFAULT_PARAMS.items() if key not in given}
    try:
        connection = psycopg.connect(make_conninfo(url, **extra), autocommit=True)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"cannot connect to the slashing-protection database {where}: {first_line(exc)}"
        ) from None
    try:
        for statement in _SESSION_SETUP:
            connection.execute(statement.encode())
    except psycopg.Error as exc:
        connection.close()
        raise DatabaseUnavailableError(
            f"cannot set up the session on {where}: {first_line(exc)}"
        ) from None
    connection.adapters.register_loader("numeric", _UintLoader)
    return connection


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def db_init(url: str) -> list[int]:
    """Create or upgrade the schema at `url` (safe to run again); the versions applied."""
    where = describe_url(url)
    connection = connect(url, where)
    try:
        return apply_migrations(connection, where)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"could not create the schema on {where}: {first_line(exc)}; nothing was changed"
        ) from None
    finally:
        connection.close()


def read_chain(connection: Connection) -> bytes | None:
    row = connection.execute(
        "SELECT genesis_validators_root FROM slashing_protection_chain"
    ).fetchone()
    return None if row is None else bytes(row[0])

