"""Key changes do not interleave, and slow decryption does not stall the server."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import keymanager.decrypt_pool
import keymanager.local_keystores
from keymanager.api.keys import KeyChanges
from keymanager.api.server import CHANGES_KEY
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtection
from tests.keymanager_api.support import Api, hex_pubkey, history, import_body, pubkey
from validator.signing.signer import Signer

REQUEST = contextvars.ContextVar[str]("request", default="?")


class StepLog:
    """Which request made which step, in the order the steps happened."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def note(self, step: str) -> None:
        with self._lock:
            self.steps.append((REQUEST.get(), step))

    def wrap(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> None:
        real = getattr(owner, name)
        if inspect.iscoroutinefunction(real):

            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                self.note(name)
                await asyncio.sleep(0.002)  # give another request every chance to cut in
                return await real(*args, **kwargs)

            monkeypatch.setattr(owner, name, wrapped_async)
        else:

            def wrapped(*args: Any, **kwargs: Any) -> Any:
                self.note(name)
                time.sleep(0.002)
                return real(*args, **kwargs)

            monkeypatch.setattr(owner, name, wrapped)

    def interleaved(self) -> list[str]:
        """Requests whose steps are not contiguous."""
        finished: set[str] = set()
        current = None
        broken = []
        for request, _ in self.steps:
            if request != current:
                if request in finished:
                    broken.append(request)
                if current is not None:
                    finished.add(current)
                current = request
        return broken


def tag_requests(monkeypatch: pytest.MonkeyPatch, changes: KeyChanges) -> None:
    counter = iter(range(10**6))
    for name in ("import_keystores", "delete_keystores"):
        real: Callable[..., Any] = getattr(changes, name)

        def tagged(*args: Any, _real: Callable[..., Any] = real, _name: str = name) -> Any:
            async def run() -> Any:
                REQUEST.set(f"{_name}#{next(counter)}")
                return await _real(*args)

            return run()

        monkeypatch.setattr(changes, name, tagged)


async def test_concurrent_import_and_delete_do_not_interleave(
    api: Api,
    store: ValidatorStore,
    record: SlashingProtection,
    signer: Signer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = StepLog()
    for owner, name in (
        (record, "import_interchange"),
        (store, "save_import"),
        (record, "register"),
        (signer, "add_keys"),
        (signer, "remove_keys"),
        (store, "delete_keystore"),
        (record, "export_interchange"),
    ):
        log.wrap(monkeypatch, owner, name)
    app = api.client.server.app
    assert app is not None
    tag_requests(monkeypatch, app[CHANGES_KEY])
    body = import_body([1, 2], history({1: (5, (1, 2)), 2: (6, (2, 3))}))
    delete = {"pubkeys": [hex_pubkey(1), hex_pubkey(2)]}
    for _ in range(6):
        answers = await asyncio.gather(
            api.post("/eth/v1/keystores", body),
            api.delete("/eth/v1/keystores", delete),
            api.post("/eth/v1/keystores", body),
            api.delete("/eth/v1/keystores", delete),
        )
        assert all(answer.status == 200 for answer in answers)
        # Whatever the order, a key is on disk exactly when the signer holds it.
        for n in (1, 2):
            assert store.has_keystore(pubkey(n)) == signer.has_key(pubkey(n))
            assert record.contains(pubkey(n))
    assert len({request for request, _ in log.steps}) >= 12
    assert log.interleaved() == []


async def test_decryption_runs_off_the_event_loop(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = keymanager.local_keystores.decrypt_many
    calls: list[int] = []

    def slow_decrypt_many(jobs: Any, **options: Any) -> list[int]:
        calls.append(len(jobs))
        time.sleep(0.6)  # as a real KDF would hold its thread
        return real(jobs, **options)

    monkeypatch.setattr(keymanager.local_keystores, "decrypt_many", slow_decrypt_many)
    importing = asyncio.create_task(api.post("/eth/v1/keystores", import_body([1, 2, 3])))
    await asyncio.sleep(0.1)
    started = time.perf_counter()
    listed = await api.get("/eth/v1/keystores")
    waited = time.perf_counter() - started
    assert listed.status == 200
    assert waited < 0.3, f"GET waited {waited:.2f} s behind the decryption"
    assert not importing.done()
    assert (await importing).statuses == ["imported"] * 3
    assert calls == [3]  # one batch for the whole request


async def test_several_keystores_are_decrypted_on_the_worker_pool(
    api: Api, monkeypatch: pytest.MonkeyPatch, signer: Signer
) -> None:
    # Cheap test keystores are normally opened in-process; make any work worth the pool.
    monkeypatch.setattr(keymanager.decrypt_pool, "POOL_MIN_COST", 0.0)
    monkeypatch.setattr(keymanager.decrypt_pool, "usable_cores", lambda: 2)
    pools: list[int] = []
    real_pool = keymanager.decrypt_pool._open_in_pool

    def counting_pool(jobs: Any, sealed: Any, workers: int, advance: Any) -> Any:
        pools.append(workers)
        return real_pool(jobs, sealed, workers, advance)

    monkeypatch.setattr(keymanager.decrypt_pool, "_open_in_pool", counting_pool)
    answer = await api.post("/eth/v1/keystores", import_body([1, 2, 3]))
    assert answer.statuses == ["imported"] * 3
    assert pools == [2]
    assert all(signer.has_key(pubkey(n)) for n in (1, 2, 3))
