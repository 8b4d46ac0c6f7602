"""Validators directories holding interop keys, for tests that run the client."""

from __future__ import annotations

from pathlib import Path

from validator.devnet.command.interop_keystores import write_interop_keystores


def make_validators_dir(path: Path, count: int) -> Path:
    """A validators directory with interop keys 0 .. count-1 (cheap devnet keystores)."""
    path.mkdir(parents=True, exist_ok=True)
    write_interop_keystores(path, range(count))
    return path
