"""Decrypting an import's keystores so that one bad keystore fails only itself.

The spec's per-key statuses give `error` for "decrypting error, I/O errors, etc.", so a
wrong password must not refuse the other keys of the request. `ValidatorStore.
prepare_imports` is all or nothing (and fast: the KDFs run in parallel), so the whole
batch is tried first; only when it fails is it split in halves, recursively, until every
keystore that can be opened is and each one that cannot has its own message. One bad
keystore among n costs about log2(n) extra batches, not n single decryptions.
"""

from __future__ import annotations

from collections.abc import Sequence

from keymanager.errors import KeystoreError
from keymanager.store import PreparedImport, ValidatorStore

Pair = tuple[str, str]
"""(keystore JSON, password)."""


def prepare_each(
    store: ValidatorStore, pairs: Sequence[Pair]
) -> list[PreparedImport | KeystoreError]:
    """Per pair, in order: the prepared import, or why it cannot be opened (its message
    starts with ``keystores[i]``)."""
    results: list[PreparedImport | KeystoreError | None] = [None] * len(pairs)
    _prepare_range(store, pairs, list(range(len(pairs))), results)
    done = [result for result in results if result is not None]
    assert len(done) == len(pairs)
    return done


def _prepare_range(
    store: ValidatorStore,
    pairs: Sequence[Pair],
    indices: list[int],
    results: list[PreparedImport | KeystoreError | None],
) -> None:
    if not indices:
        return
    try:
        prepared = store.prepare_imports(
            [pairs[index] for index in indices],
            labels=[f"keystores[{index}]" for index in indices],
        )
    except KeystoreError as error:
        if len(indices) == 1:
            results[indices[0]] = error
            return
        middle = len(indices) // 2
        _prepare_range(store, pairs, indices[:middle], results)
        _prepare_range(store, pairs, indices[middle:], results)
        return
    for index, item in zip(indices, prepared, strict=True):
        results[index] = item
