"""The durable minimal record: check, write to disk, and only then answer True.

One `SlashingProtection` object owns `slashing_protection.json` in a validators directory
for its whole life, under an exclusive lock on `slashing_protection.lock`. Every change
is rendered as a whole new file, written durably (see `durable.write_durably`) and only
then taken into memory, so a failed write changes nothing and a crash at any moment
leaves either the old or the new record on disk, never a signature the record does not
cover.

All methods block (callers in asyncio use `asyncio.to_thread`) and are serialised by an
internal lock, so concurrent calls from several threads see one order of changes.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
import time
from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import not_
from pathlib import Path
from types import TracebackType
from typing import Any

import filelock
import orjson

from slashing_protection.durable import remove_durably, temp_path_for, write_durably
from slashing_protection.errors import (
    ChainMismatchError,
    InterchangeFormatError,
    RecordClosedError,
    RecordCorruptError,
    RecordLockedError,
    RecordMissingError,
    RecordUnreadableError,
    RecordWriteError,
    SlashingProtectionError,
)
from slashing_protection.interchange import (
    MINIMAL_ENTRY_END,
    MINIMAL_ENTRY_MIDDLE,
    PUBKEY_BYTES,
    ROOT_BYTES,
    InterchangeSource,
    Progress,
    parse_interchange,
    render_attestation,
    render_block,
    render_document,
    render_entry_head,
)
from slashing_protection.metrics import WRITE_FAILURES, WRITE_SECONDS
from slashing_protection.rule import (
    NEVER,
    UINT64_MAX,
    Watermark,
    attestation_allowed,
    attestations_allowed,
    block_allowed,
    is_uint64,
    merge_maximum,
)

RECORD_FILE = "slashing_protection.json"
LOCK_FILE = "slashing_protection.lock"
INIT_FLAG = "--init-slashing-protection"

log = logging.getLogger("slashing_protection")

# Stands for "no record" in the column comparisons: no uint64 source is >= it and no
# uint64 target is > it, so an unknown key is refused without a separate test.
_UNKNOWN = UINT64_MAX + 1
# The parts of an entry with an attestation around its cached head and block parts.
_BEFORE_SOURCE = MINIMAL_ENTRY_MIDDLE + b'{"source_epoch":"'
_BEFORE_TARGET = b'","target_epoch":"'
_AFTER_TARGET = b'"}' + MINIMAL_ENTRY_END


def _decimal_column(values: list[int]) -> list[bytes]:
    """Each int as ASCII decimal, rendered by orjson in one call (a 10,000-key batch)."""
    return orjson.dumps(values)[1:-1].split(b",")


def _check_pubkey(pubkey: object) -> bytes:
    if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
        raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
    return pubkey


def _check_uint64(value: object, what: str) -> int:
    if not is_uint64(value):
        raise ValueError(f"{what} must be an int in [0, 2**64 - 1], got {value!r:.40}")
    assert isinstance(value, int)
    return value


def _to_internal(value: int | None) -> int:
    return NEVER if value is None else value


def _to_public(value: int) -> int | None:
    return None if value == NEVER else value


class SlashingProtection:
    """The minimal EIP-3076 record of one validators directory (see the module docstring)."""

    def __init__(self, directory: Path, lock: filelock.BaseFileLock) -> None:
        """Use `open` or `open_offline`."""
        self._directory = directory
        self._path = directory / RECORD_FILE
        self._file_lock = lock
        self._mutex = threading.Lock()
        self._closed = False
        self._on_disk = False
        self._root: bytes | None = None
        self.leftover_removed = False
        """True when open() found and removed a temp file left by an interrupted write."""
        # Watermarks, NEVER for "never signed"; source and target are NEVER together.
        self._slot: dict[bytes, int] = {}
        self._source: dict[bytes, int] = {}
        self._target: dict[bytes, int] = {}
        # The rendered record, kept per key so that a change re-renders only its keys.
        self._head: dict[bytes, bytes] = {}
        self._block_json: dict[bytes, bytes] = {}
        self._fragments: dict[bytes, bytes] = {}

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        validators_dir: str | os.PathLike[str],
        genesis_validators_root: bytes,
        *,
        register: Iterable[bytes] = (),
        create: bool = False,
    ) -> SlashingProtection:
        """Lock the directory and load its record for the chain `genesis_validators_root`.

        `register` names keys to add as never having signed (the --init-slashing-protection
        path); an existing entry is never lowered. Without a record, opening fails unless
        there are keys to register or `create` is true (an empty record, for a validator
        that starts with --init-slashing-protection and no keys yet): a missing record is
        never read as "nothing signed".
        """
        if type(genesis_validators_root) is not bytes or len(genesis_validators_root) != ROOT_BYTES:
            raise ValueError(f"genesis_validators_root must be {ROOT_BYTES} bytes")
        keys = [_check_pubkey(pubkey) for pubkey in register]
        record = cls._locked(Path(validators_dir), create_directory=False)
        try:
            record._load(genesis_validators_root)
            if not record._on_disk and not keys and not create:
                raise RecordMissingError(
                    f"there is no slashing-protection record at {record._path}; if these keys "
                    f"have never signed anywhere, start once with {INIT_FLAG}; to bring their "
                    f"history from another client, run 'slashing-protection import FILE "
                    f"--validators-dir {record._directory}' first"
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
        if create_directory:
            try:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as exc:
                raise RecordUnreadableError(
                    f"cannot create the validators directory {directory}: {exc.strerror or exc}"
                ) from None
        if not directory.is_dir():
            raise RecordUnreadableError(
                f"the validators directory {directory} does not exist or is not a directory"
            )
        lock = filelock.UnixFileLock(
            directory / LOCK_FILE, mode=0o600, thread_local=False, fallback_to_soft=False
        )
        try:
            lock.acquire(blocking=False)
        except filelock.Timeout:
            raise RecordLockedError(directory) from None
        except OSError as exc:
            raise RecordUnreadableError(
                f"cannot lock {directory / LOCK_FILE}: {exc.strerror or exc}; the validators "
                "directory must be writable"
            ) from None
        return cls(directory, lock)

    def _load(self, expected_root: bytes | None) -> None:
        temp = temp_path_for(self._path)
        if os.path.lexists(temp):
            try:
                remove_durably(temp)
            except OSError as exc:
                raise RecordUnreadableError(
                    f"cannot remove {temp}, left by an interrupted write ({exc.strerror}); "
                    "remove it by hand (the record itself is not affected)"
                ) from None
            self.leftover_removed = True
            log.warning(
                "removed %s, left by a write that was interrupted; the record itself is intact",
                temp,
            )
        data = self._read()
        if data is None:
            self._root = expected_root
            return
        if not data.strip():
            raise RecordCorruptError(
                f"{self._path} is empty (a crash or a full disk may have truncated it); restore "
                "it from a backup or import an interchange export, never delete it to start over "
                "unless these keys have signed nothing anywhere"
            )
        try:
            parsed = parse_interchange(data, name=str(self._path))
        except InterchangeFormatError as exc:
            raise RecordCorruptError(
                f"{exc}; the record cannot be trusted, restore it from a backup or an "
                "interchange export"
            ) from None
        if parsed.repeated_pubkeys:
            raise RecordCorruptError(
                f"{self._path} lists the key 0x{parsed.repeated_pubkeys[0].hex()} more than once; "
                "this client never writes that, so the file was edited or damaged: merge it "
                "with 'slashing-protection import' into a fresh directory instead"
            )
        if not parsed.minimal:
            raise RecordCorruptError(
                f"{self._path} holds more than one block or attestation for a key, so it was "
                "not written by this client; import it with 'slashing-protection import' "
                "into a fresh directory instead"
            )
        root = parsed.genesis_validators_root
        if expected_root is not None and root != expected_root:
            raise ChainMismatchError(
                f"{self._path} is the record of the chain with genesis_validators_root "
                f"0x{root.hex()}, but the beacon node is on 0x{expected_root.hex()}; "
                "point the validator at the right beacon node or the right --validators-dir"
            )
        self._root = root
        self._on_disk = True
        self._take(
            {
                pubkey: (_to_internal(m.slot), _to_internal(m.source), _to_internal(m.target))
                for pubkey, m in parsed.marks.items()
            }
        )

    def _read(self) -> bytes | None:
        """The record's bytes; None only when nothing is there at all."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(self._path, flags)
        except FileNotFoundError:
            if os.path.lexists(self._path):  # a dangling symlink is not "absent"
                raise self._unreadable("is a symbolic link") from None
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._unreadable("is a symbolic link") from None
            raise self._unreadable(f"cannot be opened ({exc.strerror})") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
                raise self._unreadable(f"is {kind}")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError as exc:
            raise self._unreadable(f"cannot be read ({exc.strerror})") from None
        finally:
            os.close(fd)

    def _unreadable(self, problem: str) -> RecordUnreadableError:
        return RecordUnreadableError(
            f"{self._path} {problem}; the record must be a regular file this process can read, "
            "fix it (or restore it from a backup) before starting"
        )

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Release the lock; the object refuses everything afterwards."""
        with self._mutex:
            self._closed = True
        self._file_lock.release(force=True)

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
            return list(self._fragments)

    def contains(self, pubkey: bytes) -> bool:
        with self._mutex:
            return pubkey in self._slot

    def watermark(self, pubkey: bytes) -> Watermark | None:
        """What the record holds for a key, or None when it has no entry."""
        with self._mutex:
            slot = self._slot.get(pubkey)
            if slot is None:
                return None
            return Watermark(
                _to_public(slot), _to_public(self._source[pubkey]), _to_public(self._target[pubkey])
            )

    def block_allowed(self, pubkey: bytes, slot: int) -> bool:
        """Would record_block allow this? Records nothing (the signer's cheap pre-check)."""
        _check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            last = self._slot.get(pubkey)
            return last is not None and block_allowed(last, slot)

    def attestation_allowed(self, pubkey: bytes, source: int, target: int) -> bool:
        """Would record_attestations allow this one? Records nothing."""
        _check_uint64(source, "source")
        _check_uint64(target, "target")
        with self._mutex:
            self._check_open()
            last_source = self._source.get(pubkey)
            if last_source is None:
                return False
            return attestation_allowed(last_source, self._target[pubkey], source, target)

    # ------------------------------------------------------------------ recording

    def record_block(self, pubkey: bytes, slot: int) -> bool:
        """True only when the block is allowed and durably recorded; False otherwise."""
        _check_pubkey(pubkey)
        _check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            last = self._slot.get(pubkey)
            if last is None or not block_allowed(last, slot):
                return False
            block_json = render_block(slot)
            fragment = b"".join(
                (
                    self._head[pubkey],
                    block_json,
                    MINIMAL_ENTRY_MIDDLE,
                    render_attestation(self._source[pubkey], self._target[pubkey]),
                    MINIMAL_ENTRY_END,
                )
            )
            try:
                self._write_with({pubkey: fragment})
            except RecordWriteError:
                return False
            self._slot[pubkey] = slot
            self._block_json[pubkey] = block_json
            self._fragments[pubkey] = fragment
            return True

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[bool]:
        """Judge a batch of (pubkey, source, target) and record the allowed ones in one write.

        A key appearing twice is judged against its earlier verdict in the same batch. When
        the write fails every item answers False and nothing changes.
        """
        if not items:
            return []
        try:
            pubkeys = [pubkey for pubkey, _, _ in items]
            sources = [source for _, source, _ in items]
            targets = [target for _, _, target in items]
        except (TypeError, ValueError):
            raise ValueError("items must be (pubkey, source, target) triples") from None
        try:
            repeated_key = len(set(pubkeys)) != len(pubkeys)
        except TypeError:  # an unhashable pubkey
            self._check_columns(pubkeys, sources, targets)
            raise
        with self._mutex:
            self._check_open()
            if repeated_key:
                self._check_columns(pubkeys, sources, targets)
                verdicts, changed, new_sources, new_targets = self._judge_in_order(
                    pubkeys, sources, targets
                )
            else:
                # Judge first and check arguments afterwards, only where it matters: a key
                # found in the record is valid by construction, numbers about to be written
                # are checked before the write, and refused items are checked so that a
                # malformed argument still raises.
                try:
                    verdicts = attestations_allowed(
                        sources,
                        map(self._source.get, pubkeys, repeat(_UNKNOWN)),
                        targets,
                        map(self._target.get, pubkeys, repeat(_UNKNOWN)),
                    )
                except TypeError:  # a value that does not compare with int, or unhashable
                    self._check_columns(pubkeys, sources, targets)
                    raise
                if all(verdicts):
                    changed, new_sources, new_targets = pubkeys, sources, targets
                else:
                    refused = list(map(not_, verdicts))
                    self._check_columns(
                        list(compress(pubkeys, refused)),
                        list(compress(sources, refused)),
                        list(compress(targets, refused)),
                    )
                    changed = list(compress(pubkeys, verdicts))
                    new_sources = list(compress(sources, verdicts))
                    new_targets = list(compress(targets, verdicts))
                self._check_columns([], new_sources, new_targets)
            if not changed:
                return verdicts
            fragments = list(
                map(
                    b"".join,
                    zip(
                        map(self._head.__getitem__, changed),
                        map(self._block_json.__getitem__, changed),
                        repeat(_BEFORE_SOURCE),
                        _decimal_column(new_sources),
                        repeat(_BEFORE_TARGET),
                        _decimal_column(new_targets),
                        repeat(_AFTER_TARGET),
                        strict=False,  # the repeat()s are endless
                    ),
                )
            )
            changes = dict(zip(changed, fragments, strict=True))
            try:
                self._write_with(changes)
            except RecordWriteError:
                return [False] * len(verdicts)
            self._source.update(zip(changed, new_sources, strict=True))
            self._target.update(zip(changed, new_targets, strict=True))
            self._fragments.update(changes)
            return verdicts

    @staticmethod
    def _check_columns(pubkeys: list[Any], sources: list[Any], targets: list[Any]) -> None:
        """Validate whole columns at once; fall back to item checks to name the bad one."""
        if pubkeys and (
            set(map(type, pubkeys)) != {bytes} or set(map(len, pubkeys)) != {PUBKEY_BYTES}
        ):
            for pubkey in pubkeys:
                _check_pubkey(pubkey)
        for column, what in ((sources, "source"), (targets, "target")):
            if column and (
                set(map(type, column)) != {int} or min(column) < 0 or max(column) > UINT64_MAX
            ):
                for value in column:
                    _check_uint64(value, what)

    def _judge_in_order(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> tuple[list[bool], list[bytes], list[int], list[int]]:
        """The batch rule one item at a time, for batches that name a key twice."""
        latest: dict[bytes, tuple[int, int]] = {}
        verdicts = []
        for pubkey, source, target in zip(pubkeys, sources, targets, strict=True):
            last = latest.get(pubkey)
            if last is None:
                last_source = self._source.get(pubkey)
                if last_source is None:
                    verdicts.append(False)
                    continue
                last = (last_source, self._target[pubkey])
            allowed = attestation_allowed(last[0], last[1], source, target)
            if allowed:
                latest[pubkey] = (source, target)
            verdicts.append(allowed)
        changed = list(latest)
        return (
            verdicts,
            changed,
            [latest[pubkey][0] for pubkey in changed],
            [latest[pubkey][1] for pubkey in changed],
        )

    # ------------------------------------------------------------------ registering, importing

    def register(self, pubkeys: Iterable[bytes]) -> None:
        """Add keys as never having signed, in one durable write; existing entries are kept.

        Raises RecordWriteError when the write fails (then nothing was added).
        """
        keys = [_check_pubkey(pubkey) for pubkey in pubkeys]
        with self._mutex:
            self._check_open()
            if self._root is None:
                raise RecordMissingError(
                    f"there is no slashing-protection record at {self._path} and no chain to "
                    "create one for; import an interchange first"
                )
            new = {pubkey: (NEVER, NEVER, NEVER) for pubkey in keys if pubkey not in self._slot}
            if not new and self._on_disk:
                return
            self._write_new_entries(new)

    def import_interchange(
        self, data: InterchangeSource, *, progress: Progress | None = None
    ) -> frozenset[bytes]:
        """Merge an EIP-3076 v5 interchange into the record by maximum, all or nothing.

        `data` is the document (bytes, or str of JSON text), a path, or a binary file;
        paths and files are streamed. Each key is reduced to its highest slot, source and
        target, merged with the record so that no watermark is lowered, and written in one
        durable write. Returns the keys the interchange covers. Raises a
        SlashingProtectionError (InterchangeFormatError, ChainMismatchError,
        RecordWriteError, ...) and leaves the record untouched on any problem.
        """
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
            updates: dict[bytes, tuple[int, int, int]] = {}
            for pubkey, imported in parsed.marks.items():
                slot = self._slot.get(pubkey)
                if slot is None:
                    current = Watermark.never_signed()
                else:
                    current = Watermark(
                        _to_public(slot),
                        _to_public(self._source[pubkey]),
                        _to_public(self._target[pubkey]),
                    )
                merged = merge_maximum(current, imported)
                if slot is None or merged != current:
                    updates[pubkey] = (
                        _to_internal(merged.slot),
                        _to_internal(merged.source),
                        _to_internal(merged.target),
                    )
            if updates or not self._on_disk:
                previous_root = self._root
                self._root = root
                try:
                    self._write_new_entries(updates)
                except BaseException:
                    self._root = previous_root
                    raise
            return frozenset(parsed.marks)

    def _write_new_entries(self, entries: dict[bytes, tuple[int, int, int]]) -> None:
        """Write the record with these entries added or replaced, then take them in."""
        rendered = self._render(entries)
        self._write_with({pubkey: parts[2] for pubkey, parts in rendered.items()}, adds_keys=True)
        self._take(entries, rendered)
        self._on_disk = True

    @staticmethod
    def _render(
        entries: dict[bytes, tuple[int, int, int]],
    ) -> dict[bytes, tuple[bytes, bytes, bytes]]:
        rendered = {}
        for pubkey, (slot, source, target) in entries.items():
            head = render_entry_head(pubkey)
            block_json = render_block(slot)
            attestation_json = render_attestation(source, target)
            fragment = b"".join(
                (head, block_json, MINIMAL_ENTRY_MIDDLE, attestation_json, MINIMAL_ENTRY_END)
            )
            rendered[pubkey] = (head, block_json, fragment)
        return rendered

    def _take(
        self,
        entries: dict[bytes, tuple[int, int, int]],
        rendered: dict[bytes, tuple[bytes, bytes, bytes]] | None = None,
    ) -> None:
        if rendered is None:
            rendered = self._render(entries)
        for pubkey, (slot, source, target) in entries.items():
            head, block_json, fragment = rendered[pubkey]
            self._slot[pubkey] = slot
            self._source[pubkey] = source
            self._target[pubkey] = target
            self._head[pubkey] = head
            self._block_json[pubkey] = block_json
            self._fragments[pubkey] = fragment

    # ------------------------------------------------------------------ exporting

    def export_interchange(self, pubkeys: Iterable[bytes] | None = None) -> bytes:
        """The record, or the named keys, as a minimal EIP-3076 v5 interchange.

        Keys with no entry in the record are left out.
        """
        with self._mutex:
            self._check_open()
            root = self.genesis_validators_root
            if pubkeys is None:
                return render_document(root, list(self._fragments.values()))
            fragments = self._fragments
            wanted = [fragments[pubkey] for pubkey in dict.fromkeys(pubkeys) if pubkey in fragments]
            return render_document(root, wanted)

    # ------------------------------------------------------------------ writing

    def _write_with(self, changes: dict[bytes, bytes], *, adds_keys: bool = False) -> None:
        """Write the record as it would be with `changes` (replaced or, with adds_keys, new
        entries). Memory is not touched; the caller takes the changes in only afterwards.
        """
        assert self._root is not None
        fragments = self._fragments
        merged = list(map(changes.get, fragments.keys(), fragments.values()))
        if adds_keys:
            merged.extend(
                fragment for pubkey, fragment in changes.items() if pubkey not in fragments
            )
        document = render_document(self._root, merged)
        started = time.perf_counter()
        try:
            write_durably(self._path, document)
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


__all__ = ["SlashingProtection", "SlashingProtectionError", "RECORD_FILE", "LOCK_FILE"]
