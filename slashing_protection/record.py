"""The durable minimal record: check, write to disk, and only then answer True.

One `SlashingProtection` object owns `slashing_protection.json` in a validators directory
for its whole life, under an exclusive lock on `slashing_protection.lock`. Every change
is prepared aside as a new `Entries` (the record's content and its rendering, in
`entries`), written as a whole new file, durably (see `durable.write_durably`), and only
then taken into memory by swapping one reference, so a failed write changes nothing and a
crash at any moment leaves either the old or the new record on disk, never a signature the
record does not cover. Opening (the lock, the fail-closed read) is `record_file`'s.

Every question about a block or an attestation answers a `Verdict` (allowed, or why not
and the bound it hit: `verdict`), whether it records (`record_block`,
`record_attestations`) or only checks (`check_block`, `check_attestation`).

All methods block (callers in asyncio use `slashing_protection.blocking.run_to_completion`)
and are serialised by an internal lock, so concurrent calls from several threads see one
order of changes.

It is one class because every signature passes it and its check-write-swap order (with
the lock re-checked before each write) is reviewed as one piece; the entries, the opening
and the verdicts are rooms of their own.
"""

from __future__ import annotations

import io
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from types import TracebackType

from slashing_protection.durable import DirectorySyncError, write_durably
from slashing_protection.entries import (
    Entries,
    check_columns,
    check_pubkey,
    check_uint64,
    judge_batch,
    to_internal,
    to_public,
)
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
    render_minimal,
    write_minimal,
)
from slashing_protection.lock import DirectoryLock, LockLostError, unique_temp_path
from slashing_protection.metrics import WRITE_FAILURES, WRITE_SECONDS
from slashing_protection.record_file import (
    LOCK_FILE,
    RECORD_FILE,
    load_entries,
    lock_directory,
    remove_leftover,
)
from slashing_protection.rule import NEVER, Watermark, merge_maximum
from slashing_protection.verdict import (
    ALLOWED,
    WRITE_FAILED,
    Verdict,
    batch_verdicts,
    judge_attestation,
    judge_block,
)

log = logging.getLogger("slashing_protection")

_second, _third = itemgetter(1), itemgetter(2)

DEFAULT_MISSING_HINT = (
    "if these keys have never signed anywhere, open it registering them as never having signed"
)
"""What a refused open without a record suggests when the caller gives no hint of its own
(the validator names its command-line flag; the record knows no caller's flags)."""


class SlashingProtection:
    """The minimal EIP-3076 record of one validators directory (see the module docstring)."""

    def __init__(self, directory: Path, lock: DirectoryLock) -> None:
        """Use `open` or `open_offline`."""
        self._directory = directory
        self._path = directory / RECORD_FILE
        self._temp = unique_temp_path(self._path)  # this process's own (lock.py)
        self._file_lock = lock
        self._mutex = threading.Lock()
        self._closed = False
        self._on_disk = False
        self._root: bytes | None = None
        self.leftover_removed = False
        """True when open() found and removed a temp file left by an interrupted write."""
        # What is on disk; replaced (never changed in place) after each durable write.
        self._entries = Entries.empty()
        # Every write renders the record into this one buffer. A fresh bytes object of the
        # document's size (2 MB for 10,000 keys) cost hundreds of page faults per write in
        # our measurements, more than filling it; a reused buffer costs none.
        self._document = io.BytesIO()

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        validators_dir: str | os.PathLike[str],
        genesis_validators_root: bytes,
        *,
        register: Iterable[bytes] = (),
        create: bool = False,
        missing_hint: str | None = None,
    ) -> SlashingProtection:
        """Lock the directory and load its record for the chain `genesis_validators_root`.

        `register` names keys to add as never having signed (the validator's
        --init-slashing-protection path); an existing entry is never lowered. Without a
        record, opening fails unless there are keys to register or `create` is true (an
        empty record, for a validator that starts with --init-slashing-protection and no
        keys yet): a missing record is never read as "nothing signed". `missing_hint` is
        the caller's advice in that refusal, for keys that never signed (its own flag, say);
        by default `DEFAULT_MISSING_HINT`.
        """
        if type(genesis_validators_root) is not bytes or len(genesis_validators_root) != ROOT_BYTES:
            raise ValueError(f"genesis_validators_root must be {ROOT_BYTES} bytes")
        keys = [check_pubkey(pubkey) for pubkey in register]
        record = cls._locked(Path(validators_dir), create_directory=False)
        try:
            record._load(genesis_validators_root)
            if not record._on_disk and not keys and not create:
                hint = DEFAULT_MISSING_HINT if missing_hint is None else missing_hint
                raise RecordMissingError(
                    f"there is no slashing-protection record at {record._path}; {hint}; to "
                    f"bring their history from another client, run 'slashing-protection "
                    f"import FILE --validators-dir {record._directory}' first"
                )
            if keys or not record._on_disk:
                record.register(keys)
        except BaseException:
            record.close()
            raise
        return record

    @classmethod
    def open_offline(
        cls, validators_dir: str | os.PathLike[str], *, create_directory: bool = False
    ) -> SlashingProtection:
        """Lock the directory for the offline commands; the chain is the record's own.

        Without a record the object is empty and has no chain until the first import,
        whose interchange names it (the record file is only created by that import).
        """
        record = cls._locked(Path(validators_dir), create_directory=create_directory)
        try:
            record._load(None)
        except BaseException:
            record.close()
            raise
        return record

    @classmethod
    def _locked(cls, directory: Path, *, create_directory: bool) -> SlashingProtection:
        return cls(directory, lock_directory(directory, create_directory=create_directory))

    def _load(self, expected_root: bytes | None) -> None:
        self.leftover_removed = remove_leftover(self._path)
        loaded = load_entries(self._path, expected_root)
        if loaded is None:
            self._root = expected_root
            return
        self._root, self._entries = loaded
        self._on_disk = True

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Release the lock; the object refuses everything afterwards."""
        with self._mutex:
            self._closed = True
        self._file_lock.release()

    def __enter__(self) -> SlashingProtection:
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
            raise RecordClosedError(
                f"the slashing-protection record in {self._directory} is closed"
            )

    # ------------------------------------------------------------------ reading

    @property
    def genesis_validators_root(self) -> bytes:
        if self._root is None:
            raise RecordMissingError(f"there is no slashing-protection record at {self._path}")
        return self._root

    @property
    def path(self) -> Path:
        return self._path

    @property
    def exists(self) -> bool:
        """Whether the record file has been written (False only for an empty offline open)."""
        return self._on_disk

    def pubkeys(self) -> list[bytes]:
        """Every key in the record, in record order."""
        with self._mutex:
            return list(self._entries.slot)

    def contains(self, pubkey: bytes) -> bool:
        with self._mutex:
            return pubkey in self._entries.slot

    def watermark(self, pubkey: bytes) -> Watermark | None:
        """What the record holds for a key, or None when it has no entry."""
        return self.watermarks((pubkey,)).get(pubkey)

    def watermarks(self, pubkeys: Iterable[bytes]) -> dict[bytes, Watermark]:
        """`watermark` of many keys under one hold of the lock (those without an entry
        left out)."""
        with self._mutex:
            entries = self._entries
            return {
                pubkey: Watermark(
                    to_public(slot),
                    to_public(entries.source[pubkey]),
                    to_public(entries.target[pubkey]),
                )
                for pubkey in pubkeys
                if (slot := entries.slot.get(pubkey)) is not None
            }

    def check_block(self, pubkey: bytes, slot: int) -> Verdict:
        """Would `record_block` allow this? Records nothing (the signer's cheap pre-check)."""
        check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            return judge_block(self._entries.slot.get(pubkey), slot)

    def check_attestation(self, pubkey: bytes, source: int, target: int) -> Verdict:
        """Would `record_attestations` allow this one? Records nothing."""
        check_uint64(source, "source")
        check_uint64(target, "target")
        with self._mutex:
            self._check_open()
            entries = self._entries
            last_source = entries.source.get(pubkey)
            last = None if last_source is None else (last_source, entries.target[pubkey])
            return judge_attestation(last, source, target)

    # ------------------------------------------------------------------ recording

    def record_block(self, pubkey: bytes, slot: int) -> Verdict:
        """Allowed only when the block is allowed and durably recorded; otherwise why not."""
        check_pubkey(pubkey)
        check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            verdict = judge_block(self._entries.slot.get(pubkey), slot)
            if not verdict.allowed:
                return verdict
            updated = self._entries.with_block(pubkey, slot)
            try:
                self._write(updated)
            except RecordWriteError:
                return WRITE_FAILED
            self._entries = updated
            return ALLOWED

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[Verdict]:
        """Judge a batch of (pubkey, source, target) and record the allowed ones in one write.

        A key appearing twice is judged against its earlier item in the same batch. When the
        write fails, every item the rule allows answers `write_failed` and nothing changes.
        """
        if not items:
            return []
        try:
            pubkeys = [pubkey for pubkey, _, _ in items]  # raises unless each is a triple
            sources = list(map(_second, items))
            targets = list(map(_third, items))
        except (TypeError, ValueError):
            raise ValueError("items must be (pubkey, source, target) triples") from None
        with self._mutex:
            self._check_open()
            judged = self._entries
            try:
                safe, updated = judge_batch(judged, pubkeys, sources, targets)
            except TypeError:  # an unhashable key, or a value that does not compare with int
                check_columns(pubkeys, sources, targets)
                raise
            written = True
            if updated is not None:
                try:
                    self._write(updated)
                    self._entries = updated
                except RecordWriteError:
                    written = False
        if written and all(safe):
            return [ALLOWED] * len(safe)
        passed = ALLOWED if written else WRITE_FAILED
        return batch_verdicts(judged.source, judged.target, items, safe, passed)

    # ------------------------------------------------------------------ registering, importing

    def register(self, pubkeys: Iterable[bytes]) -> None:
        """Add keys as never having signed, in one durable write; existing entries are kept.

        Raises RecordWriteError when the write fails (then nothing was added).
        """
        keys = [check_pubkey(pubkey) for pubkey in pubkeys]
        with self._mutex:
            self._check_open()
            if self._root is None:
                raise RecordMissingError(
                    f"there is no slashing-protection record at {self._path} and no chain to "
                    "create one for; import an interchange first"
                )
            known = self._entries.slot
            new = {pubkey: (NEVER, NEVER, NEVER) for pubkey in keys if pubkey not in known}
            if not new and self._on_disk:
                return
            self._write_new_entries(new, self._root)

    def import_interchange(
        self, data: InterchangeSource | ParsedInterchange, *, progress: Progress | None = None
    ) -> frozenset[bytes]:
        """Merge an EIP-3076 v5 interchange into the record by maximum, all or nothing.

        `data` is the document (bytes, or str of JSON text), a path, or a binary file;
        paths and files are streamed. A caller that has parsed the document already (to
        judge it before other work) passes its `ParsedInterchange`, which is not parsed
        again. Each key is reduced to its highest slot, source and
        target, merged with the record so that no watermark is lowered, and written in one
        durable write. Returns the keys the interchange covers. Raises a
        SlashingProtectionError (InterchangeFormatError, ChainMismatchError,
        RecordWriteError, ...) and leaves the record untouched on any problem.
        """
        if isinstance(data, ParsedInterchange):
            parsed = data
        else:
            parsed = parse_interchange(data, progress=progress)
        with self._mutex:
            self._check_open()
            root = parsed.genesis_validators_root
            if self._root is not None and root != self._root:
                raise ChainMismatchError(
                    f"the interchange is for the chain with genesis_validators_root "
                    f"0x{root.hex()}, but the record at {self._path} is for 0x{self._root.hex()}; "
                    "nothing was imported (export it from a client on the same chain)"
                )
            entries = self._entries
            updates: dict[bytes, tuple[int, int, int]] = {}
            for pubkey, imported in parsed.marks.items():
                slot = entries.slot.get(pubkey)
                if slot is None:
                    current = Watermark.never_signed()
                else:
                    current = Watermark(
                        to_public(slot),
                        to_public(entries.source[pubkey]),
                        to_public(entries.target[pubkey]),
                    )
                merged = merge_maximum(current, imported)
                if slot is None or merged != current:
                    updates[pubkey] = (
                        to_internal(merged.slot),
                        to_internal(merged.source),
                        to_internal(merged.target),
                    )
            if updates or not self._on_disk:
                self._write_new_entries(updates, root)
            return frozenset(parsed.marks)

    def _write_new_entries(
        self, entries: dict[bytes, tuple[int, int, int]], genesis_validators_root: bytes
    ) -> None:
        """Write the record with these entries added or replaced, then take them in."""
        updated = self._entries.with_entries(entries)
        self._write(updated, genesis_validators_root)
        self._entries = updated
        self._root = genesis_validators_root
        self._on_disk = True

    # ------------------------------------------------------------------ exporting

    def export_interchange(self, pubkeys: Iterable[bytes] | None = None) -> bytes:
        """The record, or the named keys, as a minimal EIP-3076 v5 interchange.

        Keys with no entry in the record are left out.
        """
        with self._mutex:
            self._check_open()
            root = self.genesis_validators_root
            entries = self._entries
            pieces = entries.pieces if pubkeys is None else entries.pieces_of(pubkeys)
            return render_minimal(root, pieces)

    # ------------------------------------------------------------------ writing

    def _write(self, entries: Entries, genesis_validators_root: bytes | None = None) -> None:
        """Durably write `entries` as the record; raise RecordWriteError if that fails.

        Memory is not touched: the caller takes `entries` in only after this returns.
        """
        root = self._root if genesis_validators_root is None else genesis_validators_root
        assert root is not None
        buffer = self._document
        buffer.seek(0)
        write_minimal(buffer, root, entries.pieces)
        buffer.truncate()
        # Shares the buffer's memory (no copy). BytesIO copies before writing to memory
        # that something still shares, so the bytes never change under their holder.
        document = buffer.getvalue()
        started = time.perf_counter()
        try:
            self._file_lock.check()  # lock.py: never write once another may hold the directory
            write_durably(self._path, document, temp=self._temp)
        except LockLostError as lost:
            WRITE_FAILURES.inc()
            log.error("%s", lost)
            raise RecordWriteError(f"{lost}; nothing was signed or changed") from None
        except DirectorySyncError as exc:
            # The new file is in place and may survive a crash, so memory takes it too:
            # later checks must never judge against the older, lower state.
            WRITE_FAILURES.inc()
            self._entries = entries
            self._root, self._on_disk = root, True
            log.error("the slashing-protection record %s was replaced, but the directory "
                      "could not be flushed: %s", self._path, exc)
            raise RecordWriteError(
                f"could not flush the directory of {self._path} after replacing the record "
                f"({exc.strerror or exc}); the new record is in use, but this change answers "
                "as not recorded: nothing was signed for it"
            ) from exc
        except OSError as exc:
            WRITE_FAILURES.inc()
            log.error("could not write the slashing-protection record %s: %s", self._path, exc)
            raise RecordWriteError(
                f"could not write the slashing-protection record {self._path} "
                f"({exc.strerror or exc}); nothing was signed or changed, free disk space or "
                "fix the directory's permissions"
            ) from exc
        finally:
            WRITE_SECONDS.observe(time.perf_counter() - started)


__all__ = [
    "DEFAULT_MISSING_HINT",
    "LOCK_FILE",
    "RECORD_FILE",
    "SlashingProtection",
    "SlashingProtectionError",
]
