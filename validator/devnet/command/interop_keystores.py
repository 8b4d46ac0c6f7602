"""Keystores of the devnet's deterministic interop keys. DEVNET ONLY.

The keys are public knowledge (``validator.consensus.interop``) and the keystores use
``DEVNET_INSECURE_KDF``, a KDF cheap enough to brute-force: they exist so that
a local test chain with many validators starts in a blink. Never put stake
behind them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore
from keymanager.store import PreparedImport, ValidatorStore
from validator.consensus.interop import interop_keypair

DEVNET_PASSWORD = "unslashable-devnet-insecure"


def write_interop_keystores(
    validators_dir: Path,
    indices: range | list[int],
    *,
    on_checked: Callable[[int], None] | None = None,
) -> list[bytes]:
    """Make sure the interop keys ``indices`` have keystores in ``validators_dir``.

    Existing keystores are kept as they are; returns every key's pubkey, in order.
    """
    store = ValidatorStore(validators_dir)
    present = set(store.local_pubkeys()) if store.keystores_dir.is_dir() else set()
    pubkeys = []
    for index in indices:
        secret, pubkey = interop_keypair(index)
        pubkeys.append(pubkey)
        if pubkey in present:
            if on_checked is not None:
                on_checked(index)
            continue
        keystore = encrypt_keystore(
            secret,
            DEVNET_PASSWORD,
            kdf=DEVNET_INSECURE_KDF,
            path=f"m/12381/3600/{index}/0/0",
            description=f"devnet interop key {index} (public, insecure KDF: never for stake)",
        )
        store.save_import(
            PreparedImport(
                pubkey=pubkey,
                keystore=keystore,
                keystore_json=keystore.to_json(),
                password=DEVNET_PASSWORD,
                secret=secret,
            )
        )
        if on_checked is not None:
            on_checked(index)
    return pubkeys
