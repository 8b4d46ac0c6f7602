"""The shared minimal record on PostgreSQL: the file record's interface, for several hosts.

Every batch is one transaction that locks its keys' rows in pubkey order (`SELECT ... ORDER
BY pubkey FOR UPDATE`; the lock node sits above the sort, so rows are locked in that
order and two batches can never deadlock), judges them with `slashing_protection.rule`
against what the rows hold, raises the allowed keys' watermarks (with GREATEST, so a
watermark is never lowered even by a bug here) and commits. True is returned only after
the commit succeeded, so a signature always follows a durable record; a connection lost
at any moment before that answers False for the whole batch.

The process also remembers, per key, the highest watermark it has committed or read. A
row found below that (a replica promoted after losing committed transactions, a restored
old backup) is refused and counted as an alarm: its history is no longer to be trusted.

Numbers travel as text arrays rendered by orjson and come back aggregated into one string
per column, so a 10,000-key batch costs two statements and no per-value Python work in
the driver.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, repeat
from operator import countOf, itemgetter, lt
from types import TracebackType
from typing import Any, TypeVar

import orjson
import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from slashing_protection.errors import (
    ChainMismatchError,
    RecordClosedError,
    RecordMissingError,
    RecordUnreadableError,
    RecordWriteError,
    SlashingProtectionError,
)
from slashing_protection.interchange import (
    PUBKEY_BYTES,
    ROOT_BYTES,
    InterchangeSource,
    ParsedInterchange,
    Progress,
    parse_interchange,
    render_entry_end,
    render_entry_start,
    render_minimal,
)
from slashing_protection.metrics import WRITE_FAILURES, WRITE_SECONDS
from slashing_protection.postgres.metrics import DB_INCIDENTS, ROLLBACK_ALARMS, TX_RETRIES
from slashing_protection.postgres.migrations import (
    ADVISORY_LOCK_KEY,
    apply_migrations,
    check_version,
)
from slashing_protection.record import DEFAULT_MISSING_HINT
from slashing_protection.rule import (
    NEVER,
    UINT64_MAX,
    Watermark,
    attestation_allowed,
    attestations_allowed,
    block_allowed,
    is_uint64,
)
from slashing_protection.verdict import (
    ALLOWED,
    NOT_REGISTERED,
    SLASHABLE,
    WRITE_FAILED,
    Verdict,
)

log = logging.getLogger("slashing_protection")

Connection = psycopg.Connection[Any]
T = TypeVar("T")

_RETRIES = 5
_RECONNECT_PAUSE = 1.0  # seconds between connection attempts while the database is away
# Stands for "no record" in the column comparisons (as in the file record): no uint64
# source is >= it and no uint64 target is > it.
_UNKNOWN = UINT64_MAX + 1
_KEYS = "slashing_protection_keys"
_second, _third = itemgetter(1), itemgetter(2)

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


def _connect(url: str, where: str) -> Connection:
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"the slashing-protection database URL is malformed: {_first_line(exc)}"
        ) from None
    extra = {key: value for key, value in _DEFAULT_PARAMS.items() if key not in given}
    try:
        connection = psycopg.connect(make_conninfo(url, **extra), autocommit=True)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"cannot connect to the slashing-protection database {where}: {_first_line(exc)}"
        ) from None
    try:
        for statement in _SESSION_SETUP:
            connection.execute(statement.encode())
    except psycopg.Error as exc:
        connection.close()
        raise DatabaseUnavailableError(
            f"cannot set up the session on {where}: {_first_line(exc)}"
        ) from None
    connection.adapters.register_loader("numeric", _UintLoader)
    return connection


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def db_init(url: str) -> list[int]:
    """Create or upgrade the schema at `url` (safe to run again); the versions applied."""
    where = describe_url(url)
    connection = _connect(url, where)
    try:
        return apply_migrations(connection, where)
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(
            f"could not create the schema on {where}: {_first_line(exc)}; nothing was changed"
        ) from None
    finally:
        connection.close()


# --------------------------------------------------------------------------- argument checks


def _check_pubkey(pubkey: object) -> bytes:
    if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
        raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
    return pubkey


def _check_uint64(value: object, what: str) -> int:
    if not is_uint64(value):
        raise ValueError(f"{what} must be an int in [0, 2**64 - 1], got {value!r:.40}")
    assert isinstance(value, int)
    return value


def _check_column(values: list[Any], what: str) -> None:
    """`_check_uint64` over a column, in C-level passes unless one value is wrong."""
    if countOf(map(type, values), int) == len(values) and (
        not values or (min(values) >= 0 and max(values) <= UINT64_MAX)
    ):
        return
    for value in values:
        _check_uint64(value, what)


def _check_pubkeys(pubkeys: list[Any]) -> None:
    if pubkeys and (set(map(type, pubkeys)) != {bytes} or set(map(len, pubkeys)) != {48}):
        for pubkey in pubkeys:
            _check_pubkey(pubkey)


def _numbers(values: Iterable[int]) -> str:
    """A numeric[] literal ("{1,2,3}") rendered in one C call (NEVER is -1, see NULLIF)."""
    return "{" + orjson.dumps(list(values))[1:-1].decode() + "}"


def _keys_param(pubkeys: list[bytes]) -> dict[str, Any]:
    return {"keys": b"".join(pubkeys), "count": len(pubkeys)}


def _split_keys(blob: bytes | None) -> list[bytes]:
    if not blob:
        return []
    return [blob[i : i + PUBKEY_BYTES] for i in range(0, len(blob), PUBKEY_BYTES)]


def _parse_numbers(text: str | None) -> list[int]:
    return orjson.loads("[" + text + "]") if text else []


# The locked rows of a batch, aggregated into one value per column. The four aggregates
# read the locked rows in one pass, so their entries line up. Keys travel as one bytea of
# 48-byte pieces: far cheaper for the driver than a bytea[] of 10,000 items.
_LOCK_ROWS = f"""
WITH locked AS (
    SELECT pubkey, block_slot, source_epoch, target_epoch FROM {_KEYS}
    WHERE pubkey IN (
        SELECT substring(%(keys)b::bytea FROM n * 48 + 1 FOR 48)
        FROM generate_series(0, %(count)s::int - 1) AS n
    )
    ORDER BY pubkey FOR NO KEY UPDATE
)
SELECT string_agg(pubkey, ''::bytea),
       string_agg(coalesce(block_slot, -1)::text, ','),
       string_agg(coalesce(source_epoch, -1)::text, ','),
       string_agg(coalesce(target_epoch, -1)::text, ',')
FROM locked
"""

_RAISE_ATTESTATIONS = f"""
UPDATE {_KEYS} AS k
SET source_epoch = GREATEST(k.source_epoch, u.source),
    target_epoch = GREATEST(k.target_epoch, u.target)
FROM (
    SELECT substring(%(keys)b::bytea FROM (n::int - 1) * 48 + 1 FOR 48) AS pubkey,
           source, target
    FROM unnest(%(sources)s::numeric[], %(targets)s::numeric[])
        WITH ORDINALITY AS x(source, target, n)
) AS u
WHERE k.pubkey = u.pubkey
"""

_RAISE_BLOCK = f"""
UPDATE {_KEYS} SET block_slot = GREATEST(block_slot, %s::numeric) WHERE pubkey = %s
"""

_READ_ONE = f"""
SELECT coalesce(block_slot, -1), coalesce(source_epoch, -1), coalesce(target_epoch, -1)
FROM {_KEYS} WHERE pubkey = %s
"""

_MERGE = f"""
INSERT INTO {_KEYS} (pubkey, block_slot, source_epoch, target_epoch)
SELECT u.pubkey, NULLIF(u.slot, -1), NULLIF(u.source, -1), NULLIF(u.target, -1)
FROM unnest(%s::bytea[], %s::numeric[], %s::numeric[], %s::numeric[])
    WITH ORDINALITY AS u(pubkey, slot, source, target, n)
ORDER BY u.n
ON CONFLICT (pubkey) DO UPDATE SET
    block_slot = GREATEST({_KEYS}.block_slot, EXCLUDED.block_slot),
    source_epoch = GREATEST({_KEYS}.source_epoch, EXCLUDED.source_epoch),
    target_epoch = GREATEST({_KEYS}.target_epoch, EXCLUDED.target_epoch)
"""

_REGISTER = f"""
INSERT INTO {_KEYS} (pubkey)
SELECT u.pubkey FROM unnest(%s::bytea[]) WITH ORDINALITY AS u(pubkey, n) ORDER BY u.n
ON CONFLICT (pubkey) DO NOTHING
"""


class _Locked:
    """A batch's rows as locked: per key its (slot, source, target), NEVER for none."""

    __slots__ = ("slot", "source", "target")

    def __init__(self, row: tuple[Any, ...] | None) -> None:
        keys = _split_keys(row[0] if row else None)
        slots = _parse_numbers(row[1] if row else None)
        sources = _parse_numbers(row[2] if row else None)
        targets = _parse_numbers(row[3] if row else None)
        self.slot = dict(zip(keys, slots, strict=True))
        self.source = dict(zip(keys, sources, strict=True))
        self.target = dict(zip(keys, targets, strict=True))


class PostgresSlashingProtection:
    """The minimal EIP-3076 record in a PostgreSQL database (see the module docstring).

    The same methods as `slashing_protection.SlashingProtection`, verdicts included; all
    block (callers in asyncio use `slashing_protection.blocking.run_to_completion`) and are
    serialised on the object's one connection.
    """

    def __init__(self, url: str, connection: Connection, root: bytes | None) -> None:
        """Use `open` or `open_offline`."""
        self._url = url
        self.where = describe_url(url)
        self._connection: Connection | None = connection
        self._root = root
        self._mutex = threading.Lock()
        self._closed = False
        self._retry_at = 0.0
        self._incident = False
        # The highest watermark this process has committed or read, per key (NEVER for
        # none): a stored value below it means the database lost history (the alarm).
        self._seen_slot: dict[bytes, int] = {}
        self._seen_source: dict[bytes, int] = {}
        self._seen_target: dict[bytes, int] = {}

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        url: str,
        genesis_validators_root: bytes,
        *,
        register: Iterable[bytes] = (),
        create: bool = False,
        missing_hint: str | None = None,
    ) -> PostgresSlashingProtection:
        """Connect, check the schema and the chain, and register keys (as the file record).

        The first open that registers keys (or has `create`) names the database's chain;
        afterwards another chain is refused. A database without a chain and nothing to
        register is refused as a missing record, with `missing_hint` as the caller's advice
        for keys that never signed (by default the file record's `DEFAULT_MISSING_HINT`).
        """
        if type(genesis_validators_root) is not bytes or len(genesis_validators_root) != ROOT_BYTES:
            raise ValueError(f"genesis_validators_root must be {ROOT_BYTES} bytes")
        keys = [_check_pubkey(pubkey) for pubkey in register]
        record = cls._connected(url)
        try:
            hint = DEFAULT_MISSING_HINT if missing_hint is None else missing_hint
            record._name_chain(genesis_validators_root, keys, create, hint)
        except BaseException:
            record.close()
            raise
        return record

    @classmethod
    def open_offline(cls, url: str) -> PostgresSlashingProtection:
        """Connect for the offline commands; the chain is the database's, if named yet."""
        return cls._connected(url)

    @classmethod
    def _connected(cls, url: str) -> PostgresSlashingProtection:
        where = describe_url(url)
        connection = _connect(url, where)
        try:
            check_version(connection, where)
            root = _read_chain(connection)
        except psycopg.Error as exc:
            connection.close()
            raise DatabaseUnavailableError(
                f"cannot read the slashing-protection database {where}: {_first_line(exc)}"
            ) from None
        except BaseException:
            connection.close()
            raise
        return cls(url, connection, root)

    def _name_chain(self, root: bytes, keys: list[bytes], create: bool, hint: str) -> None:
        def work(connection: Connection) -> None:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
            named = _read_chain(connection)
            if named is None:
                if not keys and not create:
                    raise RecordMissingError(
                        f"the slashing-protection database {self.where} holds no record yet; "
                        f"{hint}; to bring their history, run 'slashing-protection import "
                        "FILE --slashing-protection-db URL' first"
                    )
                connection.execute(
                    "INSERT INTO slashing_protection_chain (genesis_validators_root) "
                    "VALUES (%b)",
                    (root,),
                )
            elif named != root:
                raise ChainMismatchError(
                    f"the slashing-protection database {self.where} is the record of the "
                    f"chain with genesis_validators_root 0x{named.hex()}, but the beacon node "
                    f"is on 0x{root.hex()}; point the validator at the right beacon node or "
                    "the right database"
                )
            if keys:
                connection.execute(_REGISTER, (keys,))

        with self._mutex:
            self._transaction(work, "open the record")
            self._root = root
            for key in keys:
                self._seen(key, NEVER, NEVER, NEVER)

    # ------------------------------------------------------------------ connection

    def _live_connection(self) -> Connection:
        """The connection, reconnecting (at most once a second) after it was lost."""
        connection = self._connection
        if connection is not None and not connection.broken and not connection.closed:
            return connection
        if connection is not None:
            connection.close()
            self._connection = None
        now = time.monotonic()
        if now < self._retry_at:
            raise DatabaseUnavailableError(
                f"the slashing-protection database {self.where} is unreachable (retrying)"
            )
        self._retry_at = now + _RECONNECT_PAUSE
        connection = _connect(self._url, self.where)
        try:
            # A database that changed under us (restored, replaced by another one) must
            # still be the same schema and chain before anything is judged against it.
            check_version(connection, self.where)
            root = _read_chain(connection)
            if self._root is not None and root != self._root:
                raise ChainMismatchError(
                    f"the slashing-protection database {self.where} now names the chain "
                    f"0x{root.hex() if root else 'none'}, not 0x{self._root.hex()}; "
                    "nothing will be signed against it"
                )
        except psycopg.Error as exc:
            connection.close()
            raise DatabaseUnavailableError(
                f"cannot read the slashing-protection database {self.where}: {_first_line(exc)}"
            ) from None
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _transaction(self, work: Callable[[Connection], T], what: str) -> T:
        """Run `work` in one transaction (retrying serialization failures and deadlocks).

        Raises the SlashingProtectionError that `work` raised, or DatabaseUnavailableError
        when the connection is or gets lost, or RecordWriteError for any other failure;
        the transaction is then rolled back (or never committed) and nothing changed.
        """
        attempt = 0
        while True:
            try:
                connection = self._live_connection()
            except SlashingProtectionError as exc:
                self._report(exc)
                raise
            try:
                with connection.transaction():
                    result = work(connection)
            except (pg_errors.SerializationFailure, pg_errors.DeadlockDetected) as exc:
                attempt += 1
                TX_RETRIES.inc()
                if attempt < _RETRIES:
                    continue
                raise self._report(
                    RecordWriteError(
                        f"could not {what} in {self.where}: {_first_line(exc)} "
                        f"({_RETRIES} attempts); nothing was changed"
                    )
                ) from None
            except psycopg.Error as exc:
                lost = connection.broken or connection.closed
                kind = DatabaseUnavailableError if lost else RecordWriteError
                raise self._report(
                    kind(
                        f"could not {what} in {self.where}: {_first_line(exc)}; "
                        "nothing was changed"
                    )
                ) from None
            if self._incident:
                self._incident = False
                log.warning("the slashing-protection database %s works again", self.where)
            return result

    def _report(self, exc: SlashingProtectionError) -> SlashingProtectionError:
        """Log a failure once per incident (until the next success) and count it."""
        if not self._incident:
            self._incident = True
            DB_INCIDENTS.inc()
            log.error("%s; refusing to sign for the keys it concerns until it works", exc)
        return exc

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Close the connection; the object refuses everything afterwards."""
        with self._mutex:
            self._closed = True
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> PostgresSlashingProtection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RecordClosedError(f"the slashing-protection record in {self.where} is closed")

    @property
    def backend_pid(self) -> int | None:
        """The server process of the current connection (for operators and tests)."""
        connection = self._connection
        return None if connection is None or connection.closed else connection.info.backend_pid

    # ------------------------------------------------------------------ the alarm

    def _seen(self, pubkey: bytes, slot: int, source: int, target: int) -> None:
        """Raise what this process has seen of a key (never lowers it)."""
        for seen, value in (
            (self._seen_slot, slot),
            (self._seen_source, source),
            (self._seen_target, target),
        ):
            if seen.get(pubkey, NEVER) <= value:
                seen[pubkey] = value

    def _rolled_back(self, locked: _Locked) -> set[bytes]:
        """Keys whose rows hold less than this process committed or read (the alarm)."""
        keys = list(locked.slot)
        lowered: set[bytes] = set()
        for column, seen in (
            (locked.slot, self._seen_slot),
            (locked.source, self._seen_source),
            (locked.target, self._seen_target),
        ):
            if any(map(lt, column.values(), map(seen.get, keys, repeat(NEVER)))):
                flags = list(map(lt, column.values(), map(seen.get, keys, repeat(NEVER))))
                lowered.update(compress(keys, flags))
        for pubkey in lowered:
            ROLLBACK_ALARMS.inc()
            log.error(
                "ALARM: the slashing-protection database %s holds a lower watermark for "
                "0x%s than this process has committed or seen before (a failover to a "
                "replica that lost transactions, or a restored backup?); refusing the key",
                self.where,
                pubkey.hex(),
            )
        return lowered

    def _remember(self, locked: _Locked, lowered: set[bytes]) -> None:
        """Take in the values read under lock (all at or above what was seen)."""
        if lowered:
            keep = [key for key in locked.slot if key not in lowered]
            self._seen_slot.update((key, locked.slot[key]) for key in keep)
            self._seen_source.update((key, locked.source[key]) for key in keep)
            self._seen_target.update((key, locked.target[key]) for key in keep)
        else:
            self._seen_slot.update(locked.slot)
            self._seen_source.update(locked.source)
            self._seen_target.update(locked.target)

    # ------------------------------------------------------------------ reading

    @property
    def genesis_validators_root(self) -> bytes:
        if self._root is None:
            raise RecordMissingError(
                f"the slashing-protection database {self.where} holds no record yet"
            )
        return self._root

    @property
    def exists(self) -> bool:
        """Whether the database names a chain (False until the first import or open)."""
        return self._root is not None

    def pubkeys(self) -> list[bytes]:
        """Every key in the record, in the order they were added."""
        with self._mutex:
            self._check_open()
            rows = self._transaction(
                lambda c: c.execute(f"SELECT pubkey FROM {_KEYS} ORDER BY position").fetchall(),
                "list the keys",
            )
        return [bytes(row[0]) for row in rows]

    def _read_one(self, pubkey: bytes) -> tuple[int, int, int] | Verdict:
        """A key's (slot, source, target) to judge against, or the refusal when there is
        none: `NOT_REGISTERED` for a key without a row, `SLASHABLE` for a row below what
        this process has seen (rolled back; the recording call raises the alarm). While the
        database is unreachable the values come from this process's memory (pre-checks
        only: they record nothing, and the recording call fails closed on its own), and a
        key it never saw answers `WRITE_FAILED`, what recording it would answer."""
        try:
            row = self._transaction(
                lambda c: c.execute(_READ_ONE, (pubkey,)).fetchone(), "read a key"
            )
        except SlashingProtectionError:
            if pubkey not in self._seen_slot:
                return WRITE_FAILED
            return (
                self._seen_slot[pubkey],
                self._seen_source[pubkey],
                self._seen_target[pubkey],
            )
        if row is None:
            return NOT_REGISTERED
        slot, source, target = row
        if (
            slot < self._seen_slot.get(pubkey, NEVER)
            or source < self._seen_source.get(pubkey, NEVER)
            or target < self._seen_target.get(pubkey, NEVER)
        ):
            return SLASHABLE
        self._seen(pubkey, slot, source, target)
        return slot, source, target

    def contains(self, pubkey: bytes) -> bool:
        with self._mutex:
            self._check_open()
            return type(self._read_one(pubkey)) is tuple or pubkey in self._seen_slot

    def watermark(self, pubkey: bytes) -> Watermark | None:
        """What the record holds for a key, or None when it has no entry."""
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return None
        return Watermark(*(None if value == NEVER else value for value in row))

    def block_allowed(self, pubkey: bytes, slot: int) -> bool:
        """Would record_block allow this? Records nothing (the signer's cheap pre-check)."""
        return self.block_verdict(pubkey, slot).allowed

    def block_verdict(self, pubkey: bytes, slot: int) -> Verdict:
        """`block_allowed` with the reason of a refusal. Records nothing."""
        _check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return row
        return ALLOWED if block_allowed(last_slot=row[0], slot=slot) else SLASHABLE

    def attestation_allowed(self, pubkey: bytes, source: int, target: int) -> bool:
        """Would record_attestations allow this one? Records nothing."""
        return self.attestation_verdict(pubkey, source, target).allowed

    def attestation_verdict(self, pubkey: bytes, source: int, target: int) -> Verdict:
        """`attestation_allowed` with the reason of a refusal. Records nothing."""
        _check_uint64(source, "source")
        _check_uint64(target, "target")
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return row
        allowed = attestation_allowed(
            last_source=row[1], last_target=row[2], source=source, target=target
        )
        return ALLOWED if allowed else SLASHABLE

    # ------------------------------------------------------------------ recording

    def record_block(self, pubkey: bytes, slot: int) -> bool:
        """True only when the block is allowed and its record committed; False otherwise."""
        return self.record_block_verdict(pubkey, slot).allowed

    def record_block_verdict(self, pubkey: bytes, slot: int) -> Verdict:
        """`record_block` with the reason of a refusal: allowed only once committed.

        A key without a row is `NOT_REGISTERED`; a slot the rule refuses, or a key whose
        row was rolled back below what this process saw (the alarm), `SLASHABLE`; an
        allowed block whose transaction fails (or a database that cannot be reached, so
        nothing could be judged) `WRITE_FAILED`.
        """
        _check_pubkey(pubkey)
        _check_uint64(slot, "slot")
        outcome: list[Any] = []

        def work(connection: Connection) -> Verdict:
            outcome.clear()  # a retried attempt judges afresh
            locked = _Locked(connection.execute(_LOCK_ROWS, _keys_param([pubkey])).fetchone())
            lowered = self._rolled_back(locked)
            last = locked.slot.get(pubkey)
            if last is None:
                verdict = NOT_REGISTERED
            elif lowered or not block_allowed(last_slot=last, slot=slot):
                verdict = SLASHABLE
            else:
                connection.execute(_RAISE_BLOCK, (slot, pubkey))
                verdict = ALLOWED
            outcome[:] = [locked, lowered, verdict]
            return verdict

        with self._mutex:
            self._check_open()
            started = time.perf_counter()
            try:
                verdict = self._transaction(work, "record a block")
            except SlashingProtectionError:
                WRITE_FAILURES.inc()
                # A refusal judged under the lock stays a refusal; nothing else is recorded.
                judged = outcome[2] if outcome else ALLOWED
                return WRITE_FAILED if judged.allowed else judged
            finally:
                WRITE_SECONDS.observe(time.perf_counter() - started)
            locked, lowered, _ = outcome
            self._remember(locked, lowered)
            if verdict.allowed:
                self._seen(pubkey, slot, NEVER, NEVER)
            return verdict

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[bool]:
        """Judge a batch of (pubkey, source, target) and record the allowed ones in one
        transaction; a key named twice is judged against its earlier verdict. When the
        transaction fails every item answers False and nothing changes."""
        allowed, committed, _, _ = self._record_batch(items)
        return allowed if committed else [False] * len(allowed)

    def record_attestations_verdicts(
        self, items: Sequence[tuple[bytes, int, int]]
    ) -> list[Verdict]:
        """`record_attestations` with the reason of each refusal, as the file record gives
        them: `NOT_REGISTERED` for a key without a row, `SLASHABLE` for one the rule (or the
        rollback alarm) refuses, `WRITE_FAILED` for an allowed item whose transaction
        failed, and for every item when the database could not be reached to judge them."""
        allowed, committed, pubkeys, known = self._record_batch(items)
        if committed and all(allowed):
            return [ALLOWED] * len(allowed)
        if known is None:  # never judged: the transaction failed before its verdicts
            return [WRITE_FAILED] * len(allowed)
        passed = ALLOWED if committed else WRITE_FAILED
        return [
            passed if ok else SLASHABLE if pubkey in known else NOT_REGISTERED
            for pubkey, ok in zip(pubkeys, allowed, strict=True)
        ]

    def _record_batch(
        self, items: Sequence[tuple[bytes, int, int]]
    ) -> tuple[list[bool], bool, list[bytes], dict[bytes, int] | None]:
        """Judge a batch and record its allowed items in one transaction. Answers, per item,
        whether the rule allows it (all False when it could not be judged); whether the
        transaction committed; the items' keys; and the keys that have a row (None when the
        batch was never judged)."""
        if not items:
            return [], True, [], {}
        try:
            pubkeys = [pubkey for pubkey, _, _ in items]  # raises unless each is a triple
            sources = list(map(_second, items))
            targets = list(map(_third, items))
        except (TypeError, ValueError):
            raise ValueError("items must be (pubkey, source, target) triples") from None
        _check_pubkeys(pubkeys)
        _check_column(sources, "source")
        _check_column(targets, "target")
        # The server sorts the keys to lock them in order; a key named twice is locked once.
        keys_param = _keys_param(pubkeys)
        outcome: list[Any] = []

        def work(connection: Connection) -> list[bool]:
            outcome.clear()  # a retried attempt judges afresh
            locked = _Locked(connection.execute(_LOCK_ROWS, keys_param).fetchone())
            lowered = self._rolled_back(locked)
            verdicts, changed, new_sources, new_targets = _judge(
                locked, lowered, pubkeys, sources, targets
            )
            if changed:
                connection.execute(
                    _RAISE_ATTESTATIONS,
                    {
                        "keys": b"".join(changed),
                        "sources": _numbers(new_sources),
                        "targets": _numbers(new_targets),
                    },
                )
            outcome[:] = [locked, lowered, changed, new_sources, new_targets, verdicts]
            return verdicts

        with self._mutex:
            self._check_open()
            started = time.perf_counter()
            try:
                verdicts = self._transaction(work, "record attestations")
            except SlashingProtectionError:
                WRITE_FAILURES.inc()
                if outcome:
                    return outcome[5], False, pubkeys, outcome[0].slot
                return [False] * len(items), False, pubkeys, None
            finally:
                WRITE_SECONDS.observe(time.perf_counter() - started)
            locked, lowered, changed, new_sources, new_targets, _ = outcome
            self._remember(locked, lowered)
            self._seen_source.update(zip(changed, new_sources, strict=True))
            self._seen_target.update(zip(changed, new_targets, strict=True))
            return verdicts, True, pubkeys, locked.slot

    # ------------------------------------------------------------------ registering, importing

    def register(self, pubkeys: Iterable[bytes]) -> None:
        """Add keys as never having signed, in one transaction; existing entries are kept.

        Raises RecordWriteError (or DatabaseUnavailableError) when that fails.
        """
        keys = [_check_pubkey(pubkey) for pubkey in pubkeys]
        with self._mutex:
            self._check_open()
            if self._root is None:
                raise RecordMissingError(
                    f"the slashing-protection database {self.where} holds no record and no "
                    "chain to create one for; import an interchange first"
                )
            if not keys:
                return

            def work(connection: Connection) -> None:
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
                connection.execute(_REGISTER, (keys,))

            self._transaction(work, "register keys")
            for key in keys:
                self._seen(key, NEVER, NEVER, NEVER)

    def import_interchange(
        self, data: InterchangeSource | ParsedInterchange, *, progress: Progress | None = None
    ) -> frozenset[bytes]:
        """Merge an EIP-3076 v5 interchange into the record by maximum, all or nothing.

        The document is parsed (streamed, reduced to maxima per key) before the database
        is touched; the merge is then one transaction that locks the keys already present
        in pubkey order and raises their watermarks with GREATEST, so nothing is lowered.
        The first import names the chain. A caller that has parsed the document already
        (the Keymanager API, to judge it before other work) passes its `ParsedInterchange`,
        which is not parsed again. Returns the keys the interchange covers.
        """
        if isinstance(data, ParsedInterchange):
            parsed = data
        else:
            parsed = parse_interchange(data, progress=progress)
        root = parsed.genesis_validators_root
        marks = parsed.marks
        keys = list(marks)
        slots = [NEVER if m.slot is None else m.slot for m in marks.values()]
        sources = [NEVER if m.source is None else m.source for m in marks.values()]
        targets = [NEVER if m.target is None else m.target for m in marks.values()]

        def work(connection: Connection) -> None:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
            named = _read_chain(connection)
            if named is None:
                connection.execute(
                    "INSERT INTO slashing_protection_chain (genesis_validators_root) "
                    "VALUES (%b)",
                    (root,),
                )
            elif named != root:
                raise ChainMismatchError(
                    f"the interchange is for the chain with genesis_validators_root "
                    f"0x{root.hex()}, but the database {self.where} is for 0x{named.hex()}; "
                    "nothing was imported (export it from a client on the same chain)"
                )
            if keys:
                connection.execute(_LOCK_ROWS, _keys_param(keys))
                connection.execute(
                    _MERGE, (keys, _numbers(slots), _numbers(sources), _numbers(targets))
                )

        with self._mutex:
            self._check_open()
            self._transaction(work, "import the interchange")
            self._root = root
        return frozenset(marks)

    # ------------------------------------------------------------------ exporting

    def export_interchange(self, pubkeys: Iterable[bytes] | None = None) -> bytes:
        """The record, or the named keys, as a minimal EIP-3076 v5 interchange (the same
        bytes the file record writes for the same content). Unknown keys are left out."""
        wanted = None if pubkeys is None else list(dict.fromkeys(pubkeys))

        def work(connection: Connection) -> tuple[bytes | None, list[tuple[Any, ...]]]:
            named = _read_chain(connection)
            query = (
                f"SELECT pubkey, coalesce(block_slot, -1), coalesce(source_epoch, -1), "
                f"coalesce(target_epoch, -1) FROM {_KEYS}"
            )
            if wanted is None:
                return named, connection.execute(query + " ORDER BY position").fetchall()
            return named, connection.execute(
                query + " WHERE pubkey = ANY(%s::bytea[])", (wanted,)
            ).fetchall()

        with self._mutex:
            self._check_open()
            root, rows = self._transaction(work, "export the record")
        if root is None:
            raise RecordMissingError(
                f"the slashing-protection database {self.where} holds no record yet"
            )
        entries = {bytes(row[0]): row[1:] for row in rows}
        order = entries if wanted is None else [key for key in wanted if key in entries]
        pieces: list[bytes] = []
        for key in order:
            slot, source, target = entries[key]
            pieces += (render_entry_start(key, slot), render_entry_end(source, target))
        return render_minimal(root, pieces)


def _read_chain(connection: Connection) -> bytes | None:
    row = connection.execute(
        "SELECT genesis_validators_root FROM slashing_protection_chain"
    ).fetchone()
    return None if row is None else bytes(row[0])


def _judge(
    locked: _Locked,
    lowered: set[bytes],
    pubkeys: list[bytes],
    sources: list[int],
    targets: list[int],
) -> tuple[list[bool], list[bytes], list[int], list[int]]:
    """The batch's verdicts by the rule, and the keys it raises with their new values.

    Keys without a row, or rolled back (`lowered`), are refused. A key named twice is
    judged against its own earlier verdict, as in the file record.
    """
    last_source, last_target = locked.source, locked.target
    if lowered:
        last_source = {k: v for k, v in last_source.items() if k not in lowered}
        last_target = {k: v for k, v in last_target.items() if k not in lowered}
    if len(set(pubkeys)) == len(pubkeys):
        verdicts = attestations_allowed(
            sources=sources,
            last_sources=map(last_source.get, pubkeys, repeat(_UNKNOWN)),
            targets=targets,
            last_targets=map(last_target.get, pubkeys, repeat(_UNKNOWN)),
        )
        if all(verdicts):
            return verdicts, pubkeys, sources, targets
        return (
            verdicts,
            list(compress(pubkeys, verdicts)),
            list(compress(sources, verdicts)),
            list(compress(targets, verdicts)),
        )
    latest: dict[bytes, tuple[int, int]] = {}
    verdicts = []
    for pubkey, source, target in zip(pubkeys, sources, targets, strict=True):
        last = latest.get(pubkey)
        if last is None:
            stored = last_source.get(pubkey)
            if stored is None:
                verdicts.append(False)
                continue
            last = (stored, last_target[pubkey])
        allowed = attestation_allowed(
            last_source=last[0], last_target=last[1], source=source, target=target
        )
        if allowed:
            latest[pubkey] = (source, target)
        verdicts.append(allowed)
    changed = list(latest)
    return (
        verdicts,
        changed,
        [latest[key][0] for key in changed],
        [latest[key][1] for key in changed],
    )
