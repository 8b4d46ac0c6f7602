"""The durable minimal record: check, write to disk, and only then answer True.

One `SlashingProtection` object owns `slashing_protection.json` in a validators directory
for its whole life, under an exclusive lock on `slashing_protection.lock`. Every change
is prepared aside as a new `_Entries` (the record's content and its rendering), written
as a whole new file, durably (see `durable.write_durably`), and only then taken into
memory by swapping one reference, so a failed write changes nothing and a crash at any
moment leaves either the old or the new record on disk, never a signature the record
does not cover.

All methods block (callers in asyncio use `asyncio.to_thread`) and are serialised by an
internal lock, so concurrent calls from several threads see one order of changes.
"""

from __future__ import annotations

import errno
import io
import logging
import os
import stat
import threading
import time
from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import countOf, itemgetter, not_
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
    PUBKEY_BYTES,
    ROOT_BYTES,
    InterchangeSource,
    Progress,
    parse_interchange,
    render_entry_end,
    render_entry_ends,
    render_entry_start,
    render_minimal,
    write_minimal,
)
from slashing_protection.metrics import WRITE_FAILURES, WRITE_SECONDS
from slashing_protection.rule import (
    NEVER,
    UINT64_MAX,
    Watermark,
    attestation_allowed,
    attestations_allowed,
    batch_allowed_by_columns,
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
_second, _third = itemgetter(1), itemgetter(2)


def _check_pubkey(pubkey: object) -> bytes:
    if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
        raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
    return pubkey


def _check_uint64(value: object, what: str) -> int:
    if not is_uint64(value):
        raise ValueError(f"{what} must be an int in [0, 2**64 - 1], got {value!r:.40}")
    assert isinstance(value, int)
    return value


def _check_uint64_column(values: list[Any], what: str) -> None:
    """`_check_uint64` for a whole column (a 10,000-key batch) with two C-level passes.

    Exactly int (not bool or another subclass), then rendered by orjson, which refuses an
    int above 2**64 - 1 and writes a "-" for any below 0. Only a column that fails is
    walked item by item, to name the bad value.
    """
    if countOf(map(type, values), int) == len(values):
        try:
            rendered = orjson.dumps(values)
        except orjson.JSONEncodeError:  # beyond 64 bits
            pass
        else:
            if b"-" not in rendered:
                return
    for value in values:
        _check_uint64(value, what)


def _to_internal(value: int | None) -> int:
    return NEVER if value is None else value


def _to_public(value: int) -> int | None:
    return None if value == NEVER else value


class _Entries:
    """The record's content, and its rendering.

    - `slot`, `source`, `target`: per key, its highest block slot, attestation source and
      target (NEVER for "never signed"; source and target are NEVER together).
    - `position`: per key, its place in the record: 0, 1, 2, … in the dicts' order.
    - `pieces`: the record's entries rendered, two pieces per key at 2 * position: the
      entry's start (`render_entry_start`) and its end (`render_entry_end`).

    The four dicts hold the same keys in the same order: keys are only ever added, to all
    of them at once, and a dict keeps a key's place when its value changes.

    An instance is never changed once made. A change makes a new one, copying what it
    changes and sharing the rest; the record takes it in by swapping one reference, and
    only after the durable write of its rendering succeeded.
    """

    __slots__ = ("slot", "source", "target", "position", "pieces")

    def __init__(
        self,
        slot: dict[bytes, int],
        source: dict[bytes, int],
        target: dict[bytes, int],
        position: dict[bytes, int],
        pieces: list[bytes],
    ) -> None:
        self.slot = slot
        self.source = source
        self.target = target
        self.position = position
        self.pieces = pieces

    @classmethod
    def empty(cls) -> _Entries:
        return cls({}, {}, {}, {}, [])

    def is_big(self, count: int) -> bool:
        """Whether work on whole columns (O(record), in C) beats work per key (O(count), in
        Python) for a batch of `count` keys; on a 10,000-key record the two broke even
        between 3,000 and 5,000 keys in our measurements."""
        return 3 * count >= len(self.slot)

    def with_entries(self, entries: dict[bytes, tuple[int, int, int]]) -> _Entries:
        """These keys' (slot, source, target) set; keys not in the record are appended."""
        slot, source, target = self.slot.copy(), self.source.copy(), self.target.copy()
        position, pieces = self.position.copy(), self.pieces.copy()
        for pubkey, (new_slot, new_source, new_target) in entries.items():
            index = position.get(pubkey)
            if index is None:  # a new key goes at the end, of the dicts and of the pieces
                index = position[pubkey] = len(position)
                pieces += (b"", b"")
            slot[pubkey] = new_slot
            source[pubkey] = new_source
            target[pubkey] = new_target
            pieces[2 * index] = render_entry_start(pubkey, new_slot)
            pieces[2 * index + 1] = render_entry_end(new_source, new_target)
        return _Entries(slot, source, target, position, pieces)

    def with_block(self, pubkey: bytes, new_slot: int) -> _Entries:
        """A key already in the record with a new highest slot."""
        slot, pieces = self.slot.copy(), self.pieces.copy()
        slot[pubkey] = new_slot
        self._check_same_keys(slot)
        pieces[2 * self.position[pubkey]] = render_entry_start(pubkey, new_slot)
        return _Entries(slot, self.source, self.target, self.position, pieces)

    def with_attestations(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> _Entries:
        """Keys already in the record, each once, with new highest sources and targets."""
        source, target = self.source.copy(), self.target.copy()
        source.update(zip(pubkeys, sources, strict=True))
        target.update(zip(pubkeys, targets, strict=True))
        self._check_same_keys(source)
        return self._with_attestation_columns(source, target, pubkeys, sources, targets)

    def with_batch_if_all_allowed(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> _Entries | None:
        """The record with a whole batch taken in, if every item is allowed (the keys are
        distinct keys of the record and each item passes the rule); otherwise None.

        Takes the batch in first, then judges it from the whole columns before and after
        (`batch_allowed_by_columns`): the columns after are needed anyway, and this costs
        less than looking every key up when the batch covers much of the record.
        """
        source, target = self.source.copy(), self.target.copy()
        source.update(zip(pubkeys, sources, strict=True))
        target.update(zip(pubkeys, targets, strict=True))
        if len(source) != len(self.source):  # a key that the record does not hold
            return None
        if not batch_allowed_by_columns(
            self.source.values(),
            source.values(),
            self.target.values(),
            target.values(),
            len(pubkeys),
        ):
            return None
        return self._with_attestation_columns(source, target, pubkeys, sources, targets)

    def _with_attestation_columns(
        self,
        source: dict[bytes, int],
        target: dict[bytes, int],
        pubkeys: list[bytes],
        sources: list[int],
        targets: list[int],
    ) -> _Entries:
        """The record with these new source and target dicts, which differ from its own
        only for `pubkeys` (now at `sources` and `targets`); re-renders the entries' ends."""
        pieces = self.pieces.copy()
        if self.is_big(len(pubkeys)):
            pieces[1::2] = render_entry_ends(list(source.values()), list(target.values()))
        else:
            position = self.position
            for pubkey, new_source, new_target in zip(pubkeys, sources, targets, strict=True):
                pieces[2 * position[pubkey] + 1] = render_entry_end(new_source, new_target)
        return _Entries(self.slot, source, target, self.position, pieces)

    def _check_same_keys(self, changed: dict[bytes, Any]) -> None:
        # Only keys that the record holds may be changed (callers judge unknown keys
        # refused), or the columns would no longer line up; cheap, so checked anyway.
        if len(changed) != len(self.slot):
            raise RuntimeError("a change named a key that is not in the record")

    def pieces_of(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """The rendered entries of the named keys that the record holds, in the order first
        named, once each."""
        pieces, position = self.pieces, self.position
        wanted = [position[pubkey] for pubkey in dict.fromkeys(pubkeys) if pubkey in position]
        return [piece for index in wanted for piece in pieces[2 * index : 2 * index + 2]]


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
        # What is on disk; replaced (never changed in place) after each durable write.
        self._entries = _Entries.empty()
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
        self._entries = _Entries.empty().with_entries(
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
            return list(self._entries.slot)

    def contains(self, pubkey: bytes) -> bool:
        with self._mutex:
            return pubkey in self._entries.slot

    def watermark(self, pubkey: bytes) -> Watermark | None:
        """What the record holds for a key, or None when it has no entry."""
        with self._mutex:
            entries = self._entries
            slot = entries.slot.get(pubkey)
            if slot is None:
                return None
            return Watermark(
                _to_public(slot),
                _to_public(entries.source[pubkey]),
                _to_public(entries.target[pubkey]),
            )

    def block_allowed(self, pubkey: bytes, slot: int) -> bool:
        """Would record_block allow this? Records nothing (the signer's cheap pre-check)."""
        _check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            last = self._entries.slot.get(pubkey)
            return last is not None and block_allowed(last, slot)

    def attestation_allowed(self, pubkey: bytes, source: int, target: int) -> bool:
        """Would record_attestations allow this one? Records nothing."""
        _check_uint64(source, "source")
        _check_uint64(target, "target")
        with self._mutex:
            self._check_open()
            entries = self._entries
            last_source = entries.source.get(pubkey)
            if last_source is None:
                return False
            return attestation_allowed(last_source, entries.target[pubkey], source, target)

    # ------------------------------------------------------------------ recording

    def record_block(self, pubkey: bytes, slot: int) -> bool:
        """True only when the block is allowed and durably recorded; False otherwise."""
        _check_pubkey(pubkey)
        _check_uint64(slot, "slot")
        with self._mutex:
            self._check_open()
            last = self._entries.slot.get(pubkey)
            if last is None or not block_allowed(last, slot):
                return False
            updated = self._entries.with_block(pubkey, slot)
            try:
                self._write(updated)
            except RecordWriteError:
                return False
            self._entries = updated
            return True

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[bool]:
        """Judge a batch of (pubkey, source, target) and record the allowed ones in one write.

        A key appearing twice is judged against its earlier verdict in the same batch. When
        the write fails every item answers False and nothing changes.
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
            try:
                verdicts, updated = self._judge_batch(self._entries, pubkeys, sources, targets)
            except TypeError:  # an unhashable key, or a value that does not compare with int
                self._check_columns(pubkeys, sources, targets)
                raise
            if updated is None:  # nothing allowed
                return verdicts
            try:
                self._write(updated)
            except RecordWriteError:
                return [False] * len(verdicts)
            self._entries = updated
            return verdicts

    def _judge_batch(
        self, entries: _Entries, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> tuple[list[bool], _Entries | None]:
        """The batch's verdicts, and the record with its allowed items taken in (None when
        nothing is allowed). Raises ValueError for a malformed argument.

        Arguments are checked where it matters: a key found in the record is valid by
        construction, numbers are checked before they are rendered, and refused items are
        checked so that a malformed argument still raises.
        """
        if entries.is_big(len(pubkeys)):
            # A big batch in which all is allowed (every key of the record once, say) is
            # judged from whole columns, which costs less than looking every key up. Its
            # numbers are checked first: they are about to be compared and rendered.
            _check_uint64_column(sources, "source")
            _check_uint64_column(targets, "target")
            updated = entries.with_batch_if_all_allowed(pubkeys, sources, targets)
            if updated is not None:
                return [True] * len(pubkeys), updated
        if len(set(pubkeys)) != len(pubkeys):
            self._check_columns(pubkeys, sources, targets)
            verdicts, changed, new_sources, new_targets = self._judge_in_order(
                entries, pubkeys, sources, targets
            )
        else:
            verdicts = attestations_allowed(
                sources,
                map(entries.source.get, pubkeys, repeat(_UNKNOWN)),
                targets,
                map(entries.target.get, pubkeys, repeat(_UNKNOWN)),
            )
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
            _check_uint64_column(new_sources, "source")
            _check_uint64_column(new_targets, "target")
        if not changed:
            return verdicts, None
        return verdicts, entries.with_attestations(changed, new_sources, new_targets)

    @staticmethod
    def _check_columns(pubkeys: list[Any], sources: list[Any], targets: list[Any]) -> None:
        """Validate whole columns at once; fall back to item checks to name the bad one."""
        if pubkeys and (
            set(map(type, pubkeys)) != {bytes} or set(map(len, pubkeys)) != {PUBKEY_BYTES}
        ):
            for pubkey in pubkeys:
                _check_pubkey(pubkey)
        _check_uint64_column(sources, "source")
        _check_uint64_column(targets, "target")

    @staticmethod
    def _judge_in_order(
        entries: _Entries, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> tuple[list[bool], list[bytes], list[int], list[int]]:
        """The batch rule one item at a time, for batches that name a key twice."""
        latest: dict[bytes, tuple[int, int]] = {}
        verdicts = []
        for pubkey, source, target in zip(pubkeys, sources, targets, strict=True):
            last = latest.get(pubkey)
            if last is None:
                last_source = entries.source.get(pubkey)
                if last_source is None:
                    verdicts.append(False)
                    continue
                last = (last_source, entries.target[pubkey])
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
            known = self._entries.slot
            new = {pubkey: (NEVER, NEVER, NEVER) for pubkey in keys if pubkey not in known}
            if not new and self._on_disk:
                return
            self._write_new_entries(new, self._root)

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
            entries = self._entries
            updates: dict[bytes, tuple[int, int, int]] = {}
            for pubkey, imported in parsed.marks.items():
                slot = entries.slot.get(pubkey)
                if slot is None:
                    current = Watermark.never_signed()
                else:
                    current = Watermark(
                        _to_public(slot),
                        _to_public(entries.source[pubkey]),
                        _to_public(entries.target[pubkey]),
                    )
                merged = merge_maximum(current, imported)
                if slot is None or merged != current:
                    updates[pubkey] = (
                        _to_internal(merged.slot),
                        _to_internal(merged.source),
                        _to_internal(merged.target),
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

    def _write(self, entries: _Entries, genesis_validators_root: bytes | None = None) -> None:
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
