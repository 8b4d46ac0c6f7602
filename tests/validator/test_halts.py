"""Halt markers: written durably, read fail-closed, cleared only by `validator resume`."""

from __future__ import annotations

import stat
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from slashing_protection import SlashingProtection
from validator.cli import app
from validator.consensus.interop import interop_keypair
from validator.halts import (
    CLEARED_LOG,
    HALTS_DIRECTORY,
    HaltError,
    HaltReason,
    HaltStore,
    marker_name,
    refusal_message,
    resume,
)

PUBKEYS = [interop_keypair(index)[1] for index in range(3)]
GVR = bytes(range(32))


def test_a_halt_is_a_0600_file_that_names_its_reason_and_survives_a_new_store(
    tmp_path: Path,
) -> None:
    HaltStore(tmp_path).halt(PUBKEYS[0], HaltReason.DOPPELGANGER, "seen live in epoch 7", 7)
    path = tmp_path / HALTS_DIRECTORY / marker_name(PUBKEYS[0])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    content = orjson.loads(path.read_bytes())
    assert content["reason"] == "doppelganger" and content["epoch"] == 7
    halts = HaltStore(tmp_path).halts()  # a new process reads the same
    assert list(halts) == [PUBKEYS[0]]
    assert halts[PUBKEYS[0]].reason is HaltReason.DOPPELGANGER
    assert "a doppelganger was found at epoch 7" in halts[PUBKEYS[0]].describe()
    assert HaltStore(tmp_path).get(PUBKEYS[1]) is None


def test_the_first_reason_stands(tmp_path: Path) -> None:
    store = HaltStore(tmp_path)
    store.halt(PUBKEYS[0], HaltReason.DOPPELGANGER, "first", 3)
    again = store.halt(PUBKEYS[0], HaltReason.SLASHED, "second", 9)
    assert again.reason is HaltReason.DOPPELGANGER and again.detail == "first"


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"pubkey": "0x00"}', b"[]"])
def test_a_damaged_marker_still_halts_its_key(tmp_path: Path, content: bytes) -> None:
    directory = tmp_path / HALTS_DIRECTORY
    directory.mkdir()
    (directory / marker_name(PUBKEYS[1])).write_bytes(content)
    halt = HaltStore(tmp_path).get(PUBKEYS[1])
    assert halt is not None and halt.reason is HaltReason.UNREADABLE
    assert list(HaltStore(tmp_path).halts()) == [PUBKEYS[1]]


def test_the_refusal_names_the_halt_and_the_resume_command(tmp_path: Path) -> None:
    halt = HaltStore(tmp_path).halt(PUBKEYS[0], HaltReason.SLASHED, "status active_slashed", 4)
    line = refusal_message(tmp_path, halt)
    assert "\n" not in line
    assert "the chain reports it slashed at epoch 4" in line
    assert f"validator resume --validators-dir {tmp_path} --pubkey 0x{PUBKEYS[0].hex()}" in line


def test_resume_clears_the_named_keys_and_records_who_and_when(tmp_path: Path) -> None:
    store = HaltStore(tmp_path)
    for pubkey in PUBKEYS[:2]:
        store.halt(pubkey, HaltReason.DOPPELGANGER, "seen", 1)
    cleared = resume(tmp_path, [PUBKEYS[0]], who="operator@host")
    assert [halt.pubkey for halt in cleared] == [PUBKEYS[0]]
    assert list(HaltStore(tmp_path).halts()) == [PUBKEYS[1]]
    (entry,) = HaltStore(tmp_path).cleared_log()
    assert entry["pubkey"] == "0x" + PUBKEYS[0].hex()
    assert entry["cleared_by"] == "operator@host"
    assert entry["halt"]["reason"] == "doppelganger" and entry["cleared_at"].endswith("Z")
    assert (tmp_path / HALTS_DIRECTORY / CLEARED_LOG).exists()


def test_resume_of_a_key_that_is_not_halted_clears_nothing(tmp_path: Path) -> None:
    HaltStore(tmp_path).halt(PUBKEYS[0], HaltReason.DOPPELGANGER, "seen", 1)
    with pytest.raises(HaltError, match="not halted"):
        resume(tmp_path, [PUBKEYS[0], PUBKEYS[2]])
    assert list(HaltStore(tmp_path).halts()) == [PUBKEYS[0]]
    assert HaltStore(tmp_path).cleared_log() == []


def test_resume_refuses_while_the_directory_is_in_use(tmp_path: Path) -> None:
    HaltStore(tmp_path).halt(PUBKEYS[0], HaltReason.DOPPELGANGER, "seen", 1)
    with SlashingProtection.open(tmp_path, GVR, register=PUBKEYS, create=True):
        with pytest.raises(HaltError, match="in use by another process"):
            resume(tmp_path, None)
    assert list(HaltStore(tmp_path).halts()) == [PUBKEYS[0]]
    assert [halt.pubkey for halt in resume(tmp_path, None)] == [PUBKEYS[0]]


def test_opening_the_record_with_registration_leaves_halts_alone(tmp_path: Path) -> None:
    HaltStore(tmp_path).halt(PUBKEYS[0], HaltReason.SLASHED, "status active_slashed", 2)
    with SlashingProtection.open(tmp_path, GVR, register=PUBKEYS, create=True):
        pass
    assert list(HaltStore(tmp_path).halts()) == [PUBKEYS[0]]


def test_the_resume_command(tmp_path: Path) -> None:
    runner = CliRunner()
    store = HaltStore(tmp_path)
    store.halt(PUBKEYS[0], HaltReason.DOPPELGANGER, "seen", 1)
    store.halt(PUBKEYS[1], HaltReason.SLASHED, "slashed", 1)

    usage = runner.invoke(app, ["resume", "--validators-dir", str(tmp_path)])
    assert usage.exit_code == 2
    both = runner.invoke(
        app, ["resume", "--validators-dir", str(tmp_path), "--all", "--pubkey", "0x" + "00" * 48]
    )
    assert both.exit_code == 2
    bad = runner.invoke(app, ["resume", "--validators-dir", str(tmp_path), "--pubkey", "0x12"])
    assert bad.exit_code == 2

    one = runner.invoke(
        app, ["resume", "--validators-dir", str(tmp_path), "--pubkey", "0x" + PUBKEYS[0].hex()]
    )
    assert one.exit_code == 0, one.output
    assert f"resumed 0x{PUBKEYS[0].hex()}" in one.output
    with SlashingProtection.open(tmp_path, GVR, register=PUBKEYS, create=True):
        locked = runner.invoke(app, ["resume", "--validators-dir", str(tmp_path), "--all"])
    assert locked.exit_code == 1
    assert locked.output.startswith("error: ") and locked.output.count("\n") == 1
    rest = runner.invoke(app, ["resume", "--validators-dir", str(tmp_path), "--all"])
    assert rest.exit_code == 0 and f"resumed 0x{PUBKEYS[1].hex()}" in rest.output
    nothing = runner.invoke(app, ["resume", "--validators-dir", str(tmp_path), "--all"])
    assert nothing.exit_code == 0 and "no halted keys" in nothing.output
    assert len(HaltStore(tmp_path).cleared_log()) == 2
