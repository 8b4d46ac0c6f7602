"""The clean-shutdown marker: what lets a restart skip the doppelganger wait, key by key.

At a clean stop (SIGTERM, SIGINT, the devnet's last slot), once the duty loop has
drained, ``validator run`` writes ``clean-shutdown.json`` in the validators
directory, durably, while it still holds the directory: the time, the epoch, and
for every key that was signing the watermark the record showed then. The next
start reads it and removes it (durably) before anything else, whether or not it
uses doppelganger protection, so the marker speaks for the one stop just before
this start and never for an older one: after a crash there is none.

A key may skip the wait only when the marker names it, the record still shows
exactly the watermark the marker saved (nothing imported or signed elsewhere into
the record since), and that watermark is in the previous epoch or later: this
directory itself signed for the key a moment ago, and only stopped cleanly since.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from slashing_protection.durable import remove_durably, write_durably
from slashing_protection.rule import Watermark

log = logging.getLogger("validator.service")

CLEAN_SHUTDOWN_FILE = "clean-shutdown.json"


def last_signed_epoch(watermark: Watermark | None, slots_per_epoch: int) -> int | None:
    """The latest epoch a watermark proves a signature in (attestation target or block)."""
    if watermark is None:
        return None
    epochs = []
    if watermark.target is not None:
        epochs.append(watermark.target)
    if watermark.slot is not None:
        epochs.append(watermark.slot // slots_per_epoch)
    return max(epochs) if epochs else None


@dataclass(frozen=True)
class CleanShutdown:
    stopped_at: float
    epoch: int
    genesis_validators_root: bytes
    watermarks: dict[bytes, Watermark]

    def skip_reason(
        self, pubkey: bytes, watermark: Watermark | None, current_epoch: int, slots_per_epoch: int
    ) -> tuple[bool, str]:
        """(may skip the wait, why) for one key."""
        saved = self.watermarks.get(pubkey)
        if saved is None:
            return False, "the previous run did not sign with it"
        if watermark != saved:
            return False, "its record changed since the previous run stopped"
        last = last_signed_epoch(saved, slots_per_epoch)
        if last is None or last < current_epoch - 1:
            shown = "never" if last is None else f"last in epoch {last}"
            return False, f"this directory signed for it {shown}, before the previous epoch"
        stopped = time.strftime("%H:%M:%SZ", time.gmtime(self.stopped_at))
        return True, (
            f"the previous run stopped cleanly at {stopped} (epoch {self.epoch}) and this "
            f"directory signed for it in epoch {last} (now {current_epoch})"
        )


def _watermark_json(watermark: Watermark) -> dict[str, int | None]:
    return {"slot": watermark.slot, "source": watermark.source, "target": watermark.target}


def write_clean_shutdown(
    validators_dir: Path,
    genesis_validators_root: bytes,
    epoch: int,
    watermarks: Mapping[bytes, Watermark],
) -> None:
    content = {
        "stopped_at": time.time(),
        "epoch": epoch,
        "genesis_validators_root": "0x" + genesis_validators_root.hex(),
        "keys": {"0x" + pk.hex(): _watermark_json(mark) for pk, mark in watermarks.items()},
    }
    write_durably(validators_dir / CLEAN_SHUTDOWN_FILE, orjson.dumps(content) + b"\n")


def _optional_uint(value: object) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise ValueError(f"not a uint: {value!r:.40}")
    return value


def _parse(raw: bytes) -> CleanShutdown:
    content = orjson.loads(raw)
    if not isinstance(content, dict) or not isinstance(content.get("keys"), dict):
        raise ValueError("not a clean-shutdown marker")
    watermarks = {}
    for name, mark in content["keys"].items():
        if not isinstance(name, str) or not name.startswith("0x") or len(name) != 98:
            raise ValueError(f"bad key {name!r:.40}")
        if not isinstance(mark, dict):
            raise ValueError("bad watermark")
        watermarks[bytes.fromhex(name[2:])] = Watermark(
            _optional_uint(mark.get("slot")),
            _optional_uint(mark.get("source")),
            _optional_uint(mark.get("target")),
        )
    epoch = _optional_uint(content.get("epoch"))
    stopped_at = content.get("stopped_at")
    if epoch is None or not isinstance(stopped_at, int | float):
        raise ValueError("no epoch or time")
    root = content.get("genesis_validators_root")
    if not isinstance(root, str) or not root.startswith("0x"):
        raise ValueError("no genesis_validators_root")
    return CleanShutdown(float(stopped_at), epoch, bytes.fromhex(root[2:]), watermarks)


def consume_clean_shutdown(
    validators_dir: Path, genesis_validators_root: bytes
) -> CleanShutdown | None:
    """Read and remove the marker; None when there is none, or it is unusable (then: wait).

    OSError when it cannot be removed: a marker that stays would speak for a later crash.
    """
    path = validators_dir / CLEAN_SHUTDOWN_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning("cannot read %s (%s): every key waits", path, error.strerror or error)
        raw = b""
    remove_durably(path)
    try:
        marker = _parse(raw)
    except (ValueError, TypeError) as error:
        if raw:
            log.warning("%s is not usable (%s): every key waits", path, error)
        return None
    if marker.genesis_validators_root != genesis_validators_root:
        log.warning("%s names another chain: every key waits", path)
        return None
    return marker
