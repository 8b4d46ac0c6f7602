"""The shared minimal record on PostgreSQL: the file record's interface, for several hosts.

Every batch is one transaction that locks its keys' rows in pubkey order (`SELECT ... ORDER
BY pubkey FOR UPDATE`; the lock node sits above the sort, so rows are locked in that
order and two batches can never deadlock), judges them with `slashing_protection.rule`
against what the rows hold, raises the allowed keys' watermarks (with GREATEST, so a
watermark is never lowered even by a bug here) and commits. A verdict is allowed only after
the commit succeeded, so a signature always follows a durable record; a connection lost
at any moment before that answers `write_failed` for the whole batch.

The process also remembers, per key, the highest watermark it has committed or read
(`seen`): a row found below that is refused and counted as an alarm.

Numbers travel as text arrays rendered by orjson and come back aggregated into one string
per column, so a 10,000-key batch costs two statements and no per-value Python work in
the driver (the SQL and the judging are `batch`'s; connecting is `session`'s).

It is one class with one connection and one mutex: the reading, recording, importing and
exporting methods of the record's protocol and the reconnection they all share.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from types import TracebackType
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors

from slashing_protection.errors import (
    ChainMismatchError,
    RecordClosedError,
    RecordMissingError,
    RecordWriteError,
    SlashingProtectionError,
)
from slashing_protection.interchange import (
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
from slashing_protection.postgres.batch import (
    KEYS_TABLE,
    LOCK_ROWS,
    MERGE,
    RAISE_ATTESTATIONS,
    RAISE_ATTESTATIONS_IF_ALLOWED,
    RAISE_BLOCK,
    READ_MANY,
    READ_ONE,
    REGISTER,
    LockedRows,
    check_column,
    check_pubkey,
    check_pubkeys,
    check_uint64,
    grouped_batch_params,
    judge_batch,
    keys_param,
    numbers_literal,
)
from slashing_protection.postgres.metrics import DB_INCIDENTS, TX_RETRIES
from slashing_protection.postgres.migrations import (
    ADVISORY_LOCK_KEY,
    check_version,
)
from slashing_protection.postgres.seen import SeenWatermarks
from slashing_protection.postgres.session import (
    Connection,
    DatabaseUnavailableError,
    connect,
    describe_url,
    first_line,
    read_chain,
)
from slashing_protection.record import DEFAULT_MISSING_HINT
from slashing_protection.rule import NEVER, Watermark
from slashing_protection.verdict import (
    ALLOWED,
    NOT_REGISTERED,
    ROLLED_BACK,
    WRITE_FAILED,
    Verdict,
    batch_verdicts,
    judge_attestation,
    judge_block,
)

log = logging.getLogger("slashing_protection")

T = TypeVar("T")

_RETRIES = 5
_RECONNECT_PAUSE = 1.0  # seconds between connection attempts while the database is away
_second, _third = itemgetter(1), itemgetter(2)


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
        self._seen = SeenWatermarks()
        # Whether the last attestation batch passed in full: a host whose peers sign
        # first is refused slot after slot, and skips the one-statement try until then.
        self._last_batch_passed = True

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
        keys = [check_pubkey(pubkey) for pubkey in register]
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
        connection = connect(url, where)
        try:
            check_version(connection, where)
            root = read_chain(connection)
        except psycopg.Error as exc:
            connection.close()
            raise DatabaseUnavailableError(
                f"cannot read the slashing-protection database {where}: {first_line(exc)}"
            ) from None
        except BaseException:
            connection.close()
            raise
        return cls(url, connection, root)

    def _name_chain(self, root: bytes, keys: list[bytes], create: bool, hint: str) -> None:
        def work(connection: Connection) -> None:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
            named = read_chain(connection)
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
                connection.execute(REGISTER, (keys,))

        with self._mutex:
            self._transaction(work, "open the record")
            self._root = root
            for key in keys:
                self._seen.raise_to(key, NEVER, NEVER, NEVER)

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
        connection = connect(self._url, self.where)
        try:
            # A database that changed under us (restored, replaced by another one) must
            # still be the same schema and chain before anything is judged against it.
            check_version(connection, self.where)
            root = read_chain(connection)
            if self._root is not None and root != self._root:
                raise ChainMismatchError(
                    f"the slashing-protection database {self.where} now names the chain "
                    f"0x{root.hex() if root else 'none'}, not 0x{self._root.hex()}; "
                    "nothing will be signed against it"
                )
        except psycopg.Error as exc:
            connection.close()
            raise DatabaseUnavailableError(
                f"cannot read the slashing-protection database {self.where}: {first_line(exc)}"
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
                        f"could not {what} in {self.where}: {first_line(exc)} "
                        f"({_RETRIES} attempts); nothing was changed"
                    )
                ) from None
            except psycopg.Error as exc:
                lost = connection.broken or connection.closed
                kind = DatabaseUnavailableError if lost else RecordWriteError
                raise self._report(
                    kind(
                        f"could not {what} in {self.where}: {first_line(exc)}; "
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
                lambda c: c.execute(
                    f"SELECT pubkey FROM {KEYS_TABLE} ORDER BY position"
                ).fetchall(),
                "list the keys",
            )
        return [bytes(row[0]) for row in rows]

    def _read_one(self, pubkey: bytes) -> tuple[int, int, int] | Verdict:
        """A key's (slot, source, target) to judge against, or the refusal when there is
        none: `NOT_REGISTERED` for a key without a row, `ROLLED_BACK` for a row below what
        this process has seen (the recording call raises the alarm). While the
        database is unreachable the values come from this process's memory (pre-checks
        only: they record nothing, and the recording call fails closed on its own), and a
        key it never saw answers `WRITE_FAILED`, what recording it would answer."""
        try:
            row = self._transaction(
                lambda c: c.execute(READ_ONE, (pubkey,)).fetchone(), "read a key"
            )
        except SlashingProtectionError:
            seen = self._seen.of(pubkey)
            return WRITE_FAILED if seen is None else seen
        if row is None:
            return NOT_REGISTERED
        slot, source, target = row
        if self._seen.is_below(pubkey, slot, source, target):
            return ROLLED_BACK
        self._seen.raise_to(pubkey, slot, source, target)
        return slot, source, target

    def contains(self, pubkey: bytes) -> bool:
        with self._mutex:
            self._check_open()
            return type(self._read_one(pubkey)) is tuple or pubkey in self._seen

    def watermark(self, pubkey: bytes) -> Watermark | None:
        """What the record holds for a key, or None when it has no entry."""
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return None
        return _watermark(row)

    def watermarks(self, pubkeys: Iterable[bytes]) -> dict[bytes, Watermark]:
        """`watermark` of many keys in one query (those without an entry left out).

        The same answers as `watermark` key by key: a row below what this process saw
        is left out, and while the database is unreachable the values are this
        process's memory of each key."""
        wanted = list(dict.fromkeys(pubkeys))
        with self._mutex:
            self._check_open()
            try:
                rows = self._transaction(
                    lambda c: c.execute(READ_MANY, keys_param(wanted)).fetchall(),
                    "read the keys' watermarks",
                )
            except SlashingProtectionError:
                remembered = {pubkey: self._seen.of(pubkey) for pubkey in wanted}
                return {
                    pubkey: _watermark(values)
                    for pubkey, values in remembered.items()
                    if values is not None
                }
            found: dict[bytes, Watermark] = {}
            for raw_pubkey, slot, source, target in rows:
                key = bytes(raw_pubkey)
                if self._seen.is_below(key, slot, source, target):
                    continue
                self._seen.raise_to(key, slot, source, target)
                found[key] = _watermark((slot, source, target))
        return found

    def check_block(self, pubkey: bytes, slot: int) -> Verdict:
        """Would `record_block` allow this? Records nothing (the signer's cheap pre-check)."""
        check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return row
        return judge_block(row[0], slot)

    def check_attestation(self, pubkey: bytes, source: int, target: int) -> Verdict:
        """Would `record_attestations` allow this one? Records nothing."""
        check_uint64(source, "source")
        check_uint64(target, "target")
        with self._mutex:
            self._check_open()
            row = self._read_one(pubkey)
        if isinstance(row, Verdict):
            return row
        return judge_attestation((row[1], row[2]), source, target)

    # ------------------------------------------------------------------ recording

    def record_block(self, pubkey: bytes, slot: int) -> Verdict:
        """Allowed only once the block is allowed and its record committed.

        A key without a row is `NOT_REGISTERED`; a slot the rule refuses `slashable` (with
        the rule and the row's slot), a key whose row was rolled back below what this
        process saw (the alarm) `ROLLED_BACK`; an
        allowed block whose transaction fails (or a database that cannot be reached, so
        nothing could be judged) `WRITE_FAILED`.
        """
        check_pubkey(pubkey)
        check_uint64(slot, "slot")
        outcome: list[Any] = []

        def work(connection: Connection) -> Verdict:
            outcome.clear()  # a retried attempt judges afresh
            locked = LockedRows(connection.execute(LOCK_ROWS, keys_param([pubkey])).fetchone())
            lowered = self._seen.rolled_back(locked, self.where)
            verdict = ROLLED_BACK if lowered else judge_block(locked.slot.get(pubkey), slot)
            if verdict.allowed:
                connection.execute(RAISE_BLOCK, (slot, pubkey))
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
            self._seen.remember(locked, lowered)
            if verdict.allowed:
                self._seen.raise_to(pubkey, slot, NEVER, NEVER)
            return verdict

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[Verdict]:
        """Judge a batch of (pubkey, source, target) and record the allowed ones in one
        transaction; a key named twice is judged against its earlier item. The verdicts are
        the file record's: `NOT_REGISTERED` for a key without a row, `slashable` (with the
        rule and the bound) for one the rule refuses, `ROLLED_BACK` for a key the alarm
        refuses, `WRITE_FAILED` for an allowed item whose transaction failed, and for every
        item when the database could not be reached to judge them."""
        safe, committed, locked, lowered = self._record_batch(items)
        if committed and all(safe):
            return [ALLOWED] * len(safe)
        if locked is None:  # never judged: the transaction failed before its verdicts
            return [WRITE_FAILED] * len(safe)
        passed = ALLOWED if committed else WRITE_FAILED
        return batch_verdicts(locked.source, locked.target, items, safe, passed, lowered)

    def _record_batch(
        self, items: Sequence[tuple[bytes, int, int]]
    ) -> tuple[list[bool], bool, LockedRows | None, set[bytes]]:
        """Judge a batch and record its allowed items in one transaction. Answers, per item,
        whether the rule allows it (all False when it could not be judged); whether the
        transaction committed; the rows it was judged against (None when the batch was never
        judged, or when every item passed in one statement); and the rolled-back keys."""
        if not items:
            return [], True, None, set()
        try:
            pubkeys = [pubkey for pubkey, _, _ in items]  # raises unless each is a triple
            sources = list(map(_second, items))
            targets = list(map(_third, items))
        except (TypeError, ValueError):
            raise ValueError("items must be (pubkey, source, target) triples") from None
        check_pubkeys(pubkeys)
        check_column(sources, "source")
        check_column(targets, "target")
        # The server sorts the keys to lock them in order; a key named twice is locked once.
        batch_keys = keys_param(pubkeys)
        outcome: list[Any] = []

        # Keys named once (every duty loop's batch): try the one-statement path first.
        fast_params = None
        if self._last_batch_passed and len(set(pubkeys)) == len(pubkeys):
            # (A key named twice is judged against its earlier item: never in one statement.)
            rows = self._seen.batch_rows(pubkeys, sources, targets)
            fast_params = grouped_batch_params(pubkeys, rows)

        def work(connection: Connection) -> list[bool]:
            outcome.clear()  # a retried attempt judges afresh
            if fast_params is not None:
                with connection.transaction() as attempt:
                    raised = connection.execute(RAISE_ATTESTATIONS_IF_ALLOWED, fast_params)
                    if raised.rowcount == len(pubkeys):
                        outcome[:] = [None, set(), pubkeys, sources, targets, [True] * len(pubkeys)]
                        return outcome[5]
                    # One item refused (or a key unknown, or lowered): undo, judge in full.
                    raise psycopg.Rollback(attempt)
            locked = LockedRows(connection.execute(LOCK_ROWS, batch_keys).fetchone())
            lowered = self._seen.rolled_back(locked, self.where)
            verdicts, changed, new_sources, new_targets = judge_batch(
                locked, lowered, pubkeys, sources, targets
            )
            if changed:
                connection.execute(
                    RAISE_ATTESTATIONS,
                    {
                        "keys": b"".join(changed),
                        "sources": numbers_literal(new_sources),
                        "targets": numbers_literal(new_targets),
                    },
                )
            outcome[:] = [locked, lowered, changed, new_sources, new_targets, verdicts]
            self._last_batch_passed = all(verdicts)
            return verdicts

        with self._mutex:
            self._check_open()
            started = time.perf_counter()
            try:
                verdicts = self._transaction(work, "record attestations")
            except SlashingProtectionError:
                WRITE_FAILURES.inc()
                if outcome and outcome[0] is not None:
                    return outcome[5], False, outcome[0], outcome[1]
                if outcome:  # judged all allowed in one statement, then not committed
                    return outcome[5], False, LockedRows(None), set()
                return [False] * len(items), False, None, set()
            finally:
                WRITE_SECONDS.observe(time.perf_counter() - started)
            locked, lowered, changed, new_sources, new_targets, _ = outcome
            if locked is not None:
                self._seen.remember(locked, lowered)
            self._seen.raise_attestations(changed, new_sources, new_targets)
            return verdicts, True, locked, lowered

    # ------------------------------------------------------------------ registering, importing

    def register(self, pubkeys: Iterable[bytes]) -> None:
        """Add keys as never having signed, in one transaction; existing entries are kept.

        Raises RecordWriteError (or DatabaseUnavailableError) when that fails.
        """
        keys = [check_pubkey(pubkey) for pubkey in pubkeys]
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
                connection.execute(REGISTER, (keys,))

            self._transaction(work, "register keys")
            for key in keys:
                self._seen.raise_to(key, NEVER, NEVER, NEVER)

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
            named = read_chain(connection)
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
                connection.execute(LOCK_ROWS, keys_param(keys))
                connection.execute(
                    MERGE,
                    (
                        keys,
                        numbers_literal(slots),
                        numbers_literal(sources),
                        numbers_literal(targets),
                    ),
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
            named = read_chain(connection)
            query = (
                f"SELECT pubkey, coalesce(block_slot, -1), coalesce(source_epoch, -1), "
                f"coalesce(target_epoch, -1) FROM {KEYS_TABLE}"
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


def _watermark(values: tuple[int, int, int]) -> Watermark:
    """A row's (slot, source, target), NEVER as None."""
    slot, source, target = (None if value == NEVER else value for value in values)
    return Watermark(slot, source, target)
