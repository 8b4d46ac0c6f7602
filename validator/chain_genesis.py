"""The chain's genesis as first seen, kept in the validators directory beside the record.

The far-future guard measures slots and epochs against the wall clock from the
chain's genesis time, and that time comes from the beacon node. A node that
reports a genesis 100,000 epochs too early would make the guard admit a target
100,000 epochs ahead, and the record would then lock the key out for as long.
So the genesis every configured node reports must agree, and the first one seen
is kept in ``chain_genesis.json``; a node reporting another later is refused.
The record already names the genesis validators root; this file pins the time.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from slashing_protection.durable import write_durably
from validator.consensus.encoding import parse_hex, parse_uint, to_hex

GENESIS_FILE = "chain_genesis.json"


class GenesisMismatchError(Exception):
    """The chain's genesis differs from the one kept, or the kept one is unreadable."""


def keep_genesis(validators_dir: Path, genesis_time: int, genesis_validators_root: bytes) -> bool:
    """Check the genesis against the kept one; keep it when none is. True when written now.

    Call with the slashing-protection lock held, so no other process races the write.
    An unreadable file stops the start (fail closed) rather than being replaced.
    """
    path = validators_dir / GENESIS_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        body = {
            "genesis_time": str(genesis_time),
            "genesis_validators_root": to_hex(genesis_validators_root),
        }
        write_durably(path, orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n", mode=0o644)
        return True
    except OSError as error:
        raise GenesisMismatchError(f"cannot read {path}: {error}") from None
    try:
        kept = orjson.loads(raw)
        kept_time = parse_uint(kept["genesis_time"], 64)
        kept_root = parse_hex(kept["genesis_validators_root"], 32)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise GenesisMismatchError(
            f"{path} is unreadable ({error}); it keeps the chain's genesis time for the "
            f"far-future guard, so restore it rather than delete it"
        ) from None
    if kept_root != genesis_validators_root:
        raise GenesisMismatchError(
            f"{path} is for the chain with genesis validators root {to_hex(kept_root)}, but the "
            f"beacon node follows {to_hex(genesis_validators_root)}"
        )
    if kept_time != genesis_time:
        raise GenesisMismatchError(
            f"the beacon node reports genesis time {genesis_time}, but this chain's genesis time "
            f"is {kept_time} (kept in {path} since the first start); a node reporting another "
            f"genesis time would move the far-future guard"
        )
    return False
