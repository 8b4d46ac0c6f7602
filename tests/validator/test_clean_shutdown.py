"""The clean-shutdown marker: written at a clean stop, consumed by the next start."""

from __future__ import annotations

from pathlib import Path

from slashing_protection.rule import Watermark
from validator.clean_shutdown import (
    CLEAN_SHUTDOWN_FILE,
    consume_clean_shutdown,
    last_signed_epoch,
    write_clean_shutdown,
)
from validator.consensus.interop import interop_keypair

A, B, C = (interop_keypair(index)[1] for index in range(3))
GVR = bytes(range(32))
SLOTS_PER_EPOCH = 8


def test_it_is_read_once(tmp_path: Path) -> None:
    write_clean_shutdown(tmp_path, GVR, 10, {A: Watermark(None, 8, 9)})
    marker = consume_clean_shutdown(tmp_path, GVR)
    assert marker is not None and marker.epoch == 10
    assert marker.watermarks == {A: Watermark(None, 8, 9)}
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    assert consume_clean_shutdown(tmp_path, GVR) is None


def test_a_key_skips_only_with_its_own_unchanged_recent_watermark(tmp_path: Path) -> None:
    write_clean_shutdown(
        tmp_path,
        GVR,
        10,
        {A: Watermark(None, 8, 9), B: Watermark(None, 6, 7), C: Watermark(79, None, None)},
    )
    marker = consume_clean_shutdown(tmp_path, GVR)
    assert marker is not None
    skip, reason = marker.skip_reason(A, Watermark(None, 8, 9), 10, SLOTS_PER_EPOCH)
    assert skip and "signed for it in epoch 9" in reason
    # Signed two epochs ago: too old.
    skip, reason = marker.skip_reason(B, Watermark(None, 6, 7), 10, SLOTS_PER_EPOCH)
    assert not skip and "before the previous epoch" in reason
    # A block at slot 79 is epoch 9.
    assert marker.skip_reason(C, Watermark(79, None, None), 10, SLOTS_PER_EPOCH)[0]
    # The record moved since the stop (an import, another client on a shared record).
    skip, reason = marker.skip_reason(A, Watermark(None, 9, 10), 10, SLOTS_PER_EPOCH)
    assert not skip and "changed" in reason
    other = interop_keypair(5)[1]
    assert not marker.skip_reason(other, Watermark(None, 9, 10), 10, SLOTS_PER_EPOCH)[0]


def test_a_damaged_or_foreign_marker_is_removed_and_proves_nothing(tmp_path: Path) -> None:
    (tmp_path / CLEAN_SHUTDOWN_FILE).write_bytes(b'{"keys": 3}')
    assert consume_clean_shutdown(tmp_path, GVR) is None
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    write_clean_shutdown(tmp_path, GVR, 10, {A: Watermark(None, 8, 9)})
    assert consume_clean_shutdown(tmp_path, bytes(32)) is None
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()


def test_last_signed_epoch() -> None:
    assert last_signed_epoch(None, 8) is None
    assert last_signed_epoch(Watermark(None, None, None), 8) is None
    assert last_signed_epoch(Watermark(100, 3, 4), 8) == 12
    assert last_signed_epoch(Watermark(7, 3, 4), 8) == 4
