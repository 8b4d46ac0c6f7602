"""`slashing-protection`: offline import, export and display of the record.

Each command takes the directory's lock, so it refuses while a validator runs on the same
--validators-dir. With --slashing-protection-db URL they work on the shared PostgreSQL
record instead (which running clients may use meanwhile: every change is one transaction);
`db-init` creates its schema. Errors print one line on stderr and exit non-zero; the record is then
exactly as it was. The `app` object is also mounted as `validator slashing-protection`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer

from slashing_protection.durable import fsync_directory
from slashing_protection.errors import (
    InterchangeReadError,
    RecordMissingError,
    SlashingProtectionError,
)
from slashing_protection.interchange import parse_interchange, parse_pubkey
from slashing_protection.lock import remove_created, topmost_missing
from slashing_protection.networks import GENESIS_VALIDATORS_ROOTS, NETWORK_NAMES, network_of
from slashing_protection.opening import is_database_url, open_offline_record
from slashing_protection.progress import terminal_progress
from slashing_protection.record import RECORD_FILE

app = typer.Typer(
    name="slashing-protection",
    help="Import, export and show the EIP-3076 slashing-protection record of a validators "
    "directory. Run these only while no validator uses that directory (they take its lock).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ValidatorsDir = Annotated[
    Path | None,
    typer.Option(
        "--validators-dir",
        help="The validator's directory, holding slashing_protection.json and its lock.",
        show_default=False,
    ),
]
DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--slashing-protection-db",
        help="The shared record in PostgreSQL (postgresql://...), instead of --validators-dir.",
        show_default=False,
    ),
]


Network = Annotated[
    str | None,
    typer.Option(
        "--network",
        help="The public network the record must be of: mainnet, sepolia or hoodi. A file or "
        "record of another chain is refused, nothing changed.",
        show_default=False,
    ),
]


class CommandError(Exception):
    """A problem the command reports in one line (not a record error)."""


def _location(validators_dir: Path | None, database: str | None) -> tuple[Path | str, str]:
    """The record to open (a directory or a URL) and how messages name it."""
    if (validators_dir is None) == (database is None):
        raise CommandError(
            "give exactly one of --validators-dir DIR and --slashing-protection-db URL"
        )
    if database is not None:
        if not is_database_url(database):
            raise CommandError(
                "--slashing-protection-db must be a postgresql:// (or postgres://) URL"
            )
        from slashing_protection.postgres import describe_url

        return database, describe_url(database)
    assert validators_dir is not None
    return validators_dir, str(validators_dir / RECORD_FILE)


def _network_root(name: str | None) -> bytes | None:
    if name is None:
        return None
    root = GENESIS_VALIDATORS_ROOTS.get(name)
    if root is None:
        raise CommandError(f"--network {name!r:.40}: built in are {', '.join(NETWORK_NAMES)}")
    return root


def _check_network(name: str | None, root: bytes, what: str) -> None:
    """CommandError, naming both chains, unless ``root`` is network ``name``'s."""
    expected = _network_root(name)
    if expected is not None and root != expected:
        served = network_of(root) or "another chain"
        raise CommandError(
            f"--network {name}: {what} is of {served} (genesis_validators_root 0x{root.hex()}), "
            f"not {name} (0x{expected.hex()}); nothing was changed"
        )


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    try:
        yield
    except (SlashingProtectionError, CommandError) as exc:
        typer.echo("error: " + " ".join(str(exc).split()), err=True)
        raise typer.Exit(1) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        typer.echo(f"error: {exc.strerror or exc}{where}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        typer.echo("error: interrupted; the record is unchanged", err=True)
        raise typer.Exit(130) from None


@app.command("import")
def import_command(
    file: Annotated[
        Path, typer.Argument(help="An EIP-3076 version 5 interchange (complete or minimal).")
    ],
    validators_dir: ValidatorsDir = None,
    database: DatabaseUrl = None,
    network: Network = None,
) -> None:
    """Merge an interchange into the record by maximum, all or nothing.

    Creates the record for the file's chain when the directory (or database) has none.
    """
    with _one_line_errors():
        location, where = _location(validators_dir, database)
        _network_root(network)
        try:
            size = file.stat().st_size
        except OSError as exc:
            raise InterchangeReadError(f"cannot read {file}: {exc.strerror or exc}") from None
        # A directory the import creates is removed again if the import fails.
        created = topmost_missing(validators_dir) if validators_dir is not None else None
        try:
            with open_offline_record(location, create_directory=True) as record:
                if record.exists:
                    _check_network(network, record.genesis_validators_root, f"the record {where}")
                with terminal_progress(size, f"importing {file.name}") as progress:
                    parsed = parse_interchange(file, progress=progress)
                _check_network(network, parsed.genesis_validators_root, str(file))
                covered = record.import_interchange(parsed)
        except BaseException:
            if created is not None and validators_dir is not None:
                remove_created(validators_dir, created)
            raise
        typer.echo(
            f"imported the history of {len(covered)} key(s) from {file} into {where} "
            f"(genesis_validators_root 0x{record.genesis_validators_root.hex()})"
        )


@app.command("export")
def export_command(
    file: Annotated[Path, typer.Argument(help="Where to write the interchange (must not exist).")],
    validators_dir: ValidatorsDir = None,
    database: DatabaseUrl = None,
    pubkey: Annotated[
        list[str] | None,
        typer.Option(
            "--pubkey",
            help="Export only this key (0x-prefixed hex); repeat for several. Default: all.",
            show_default=False,
        ),
    ] = None,
    network: Network = None,
) -> None:
    """Write the record (or the named keys) as a minimal EIP-3076 interchange."""
    with _one_line_errors():
        location, where = _location(validators_dir, database)
        keys = [parse_pubkey(text, "--pubkey") for text in pubkey or ()]
        if os.path.lexists(file):
            raise CommandError(
                f"{file} already exists; choose a new file name, nothing was written"
            )
        with open_offline_record(location) as record:
            if not record.exists:
                raise RecordMissingError(
                    f"there is no slashing-protection record at {where}; nothing to export"
                )
            _check_network(network, record.genesis_validators_root, f"the record {where}")
            known = set(record.pubkeys())
            missing = [key for key in dict.fromkeys(keys) if key not in known]
            data = record.export_interchange(keys or None)
            with terminal_progress(len(data), f"exporting to {file.name}") as progress:
                _write_new_file(file, data, progress)
        exported = len(known) if not keys else len(set(keys)) - len(missing)
        for key in missing:
            typer.echo(f"note: no record for 0x{key.hex()}, left out", err=True)
        typer.echo(f"exported the history of {exported} key(s) to {file}")


#: Bytes per write of an export, so that its progress moves.
EXPORT_CHUNK = 8 * 2**20


def _write_new_file(
    path: Path, data: bytes, progress: Callable[[int], None] | None = None
) -> None:
    """Write `data` durably at a path that must not exist yet (never replaces a file)."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            view = memoryview(data)
            for start in range(0, len(view), EXPORT_CHUNK):
                stream.write(view[start : start + EXPORT_CHUNK])
                if progress is not None:
                    progress(min(len(view), start + EXPORT_CHUNK))
            stream.flush()
            os.fsync(stream.fileno())
        try:
            os.link(temp_name, path)  # fails if the name was taken meanwhile
        except FileExistsError:
            raise CommandError(
                f"{path} already exists; choose a new file name, nothing was written"
            ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
    fsync_directory(directory)


def _show_number(value: int | None) -> str:
    return "-" if value is None else str(value)


@app.command("show")
def show_command(
    validators_dir: ValidatorsDir = None, database: DatabaseUrl = None
) -> None:
    """Print the record: per key the highest block slot and attestation source/target."""
    with _one_line_errors():
        location, where = _location(validators_dir, database)
        with open_offline_record(location) as record:
            if not record.exists:
                raise RecordMissingError(f"there is no slashing-protection record at {where}")
            keys = record.pubkeys()
            lines = [
                f"record: {where}",
                f"genesis_validators_root: 0x{record.genesis_validators_root.hex()}",
                f"keys: {len(keys)}  ('-' means never signed)",
                f"{'pubkey':<98}  {'block_slot':>10}  {'source':>8}  {'target':>8}",
            ]
            marks = record.watermarks(keys)
            for key in keys:
                mark = marks.get(key)
                assert mark is not None
                lines.append(
                    f"0x{key.hex()}  {_show_number(mark.slot):>10}  "
                    f"{_show_number(mark.source):>8}  {_show_number(mark.target):>8}"
                )
        typer.echo("\n".join(lines))


@app.command("db-init")
def db_init_command(
    database: Annotated[
        str,
        typer.Option(
            "--slashing-protection-db",
            help="The PostgreSQL database of the shared record (postgresql://...).",
            show_default=False,
        ),
    ],
) -> None:
    """Create (or upgrade) the shared record's schema in PostgreSQL; safe to run again."""
    with _one_line_errors():
        _location(None, database)
        from slashing_protection.postgres import SCHEMA_VERSION, db_init, describe_url

        applied = db_init(database)
        where = describe_url(database)
        if applied:
            done = ", ".join(map(str, applied))
            typer.echo(f"applied schema migration(s) {done} to {where}; it is at version "
                       f"{SCHEMA_VERSION}")
        else:
            typer.echo(f"{where} already has schema version {SCHEMA_VERSION}; nothing to do")


def main() -> None:
    """Console entry point `slashing-protection`."""
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s", stream=sys.stderr)
    app(prog_name="slashing-protection")
