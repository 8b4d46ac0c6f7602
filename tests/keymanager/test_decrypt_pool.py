"""keymanager.decrypt_pool: spawned workers, result order, errors naming the file, pool choice."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from keymanager import decrypt_pool
from keymanager.decrypt_pool import POOL_MIN_COST, DecryptJob, decrypt_many, usable_cores
from keymanager.decrypt_worker import open_in_worker, prepare_worker, scrypt_scratch_bytes
from keymanager.errors import KeystoreLoadError, WrongPasswordError
from keymanager.keystore import ScryptCost, encrypt_keystore, parse_keystore
from tests.support.keystores import PASSWORD, cheap_keystore_json, pubkey_of

SECRETS = [1000 + 7 * index for index in range(5)]


def _jobs() -> list[DecryptJob]:
    return [
        DecryptJob(f"keystores/key{index}.json", cheap_keystore_json(secret), PASSWORD)
        for index, secret in enumerate(SECRETS)
    ]


def test_pool_of_spawned_workers_returns_secrets_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    methods: list[str | None] = []
    real_get_context = multiprocessing.get_context

    def recording_get_context(method: str | None = None) -> Any:
        methods.append(method)
        return real_get_context(method)

    monkeypatch.setattr(multiprocessing, "get_context", recording_get_context)
    assert decrypt_many(_jobs(), processes=2, use_pool=True) == SECRETS
    assert methods == ["spawn"]


def test_in_process_path_gives_the_same_secrets() -> None:
    assert decrypt_many(_jobs(), processes=1, use_pool=False) == SECRETS


@pytest.mark.parametrize("use_pool", [True, False])
def test_wrong_password_names_the_file(use_pool: bool) -> None:
    jobs = _jobs()
    jobs[3] = DecryptJob(jobs[3].label, jobs[3].keystore_json, "not the password")
    with pytest.raises(KeystoreLoadError, match=r"keystores/key3\.json: wrong password"):
        decrypt_many(jobs, processes=2, use_pool=use_pool)


@pytest.mark.parametrize("use_pool", [True, False])
def test_pubkey_mismatch_is_caught_after_the_worker(use_pool: bool) -> None:
    jobs = _jobs()
    document = json.loads(jobs[1].keystore_json)
    document["pubkey"] = pubkey_of(SECRETS[0]).hex()
    jobs[1] = DecryptJob(jobs[1].label, json.dumps(document).encode(), PASSWORD)
    with pytest.raises(KeystoreLoadError, match=r"key1\.json: the keystore names pubkey"):
        decrypt_many(jobs, processes=2, use_pool=use_pool)


def test_malformed_keystore_is_reported_before_any_worker_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_pool(*args: object, **kwargs: object) -> list[bytes]:
        raise AssertionError("the pool must not start for a malformed keystore")

    monkeypatch.setattr(decrypt_pool, "_open_in_pool", no_pool)
    jobs = _jobs()
    jobs[4] = DecryptJob("keystores/broken.json", b'{"version": 4}', PASSWORD)
    with pytest.raises(KeystoreLoadError, match=r"keystores/broken\.json: malformed keystore"):
        decrypt_many(jobs, processes=2, use_pool=True)


def _expensive_jobs(count: int) -> list[DecryptJob]:
    # Standard-cost scrypt parameters on a cheap keystore: only parsed here, never derived.
    document = json.loads(encrypt_keystore(SECRETS[0], PASSWORD, kdf=ScryptCost(n=2**4)).to_json())
    document["crypto"]["kdf"]["params"]["n"] = 2**18
    return [DecryptJob(f"k{i}", json.dumps(document).encode(), PASSWORD) for i in range(count)]


def test_pool_is_chosen_by_estimated_work(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[int] = []

    def fake_pool(
        jobs: list[DecryptJob], sealed: object, workers: int, advance: object
    ) -> list[bytes]:
        used.append(workers)
        return [SECRETS[0].to_bytes(32, "big")] * len(jobs)

    in_process: list[object] = []

    def fake_open(sealed: object, password: str) -> bytes:
        in_process.append(sealed)
        return SECRETS[0].to_bytes(32, "big")

    monkeypatch.setattr(decrypt_pool, "_open_in_pool", fake_pool)
    monkeypatch.setattr(decrypt_pool, "open_secret", fake_open)
    cheap = [_jobs()[0]] * 3
    assert decrypt_many(cheap, processes=2) == [SECRETS[0]] * 3  # cheap: in this process
    assert used == []
    expensive = _expensive_jobs(int(POOL_MIN_COST) + 1)
    assert decrypt_many(expensive, processes=2) == [SECRETS[0]] * len(expensive)
    assert used == [2]
    assert len(in_process) == 3
    decrypt_many(expensive, processes=1)  # one core: no pool
    assert used == [2]
    assert len(in_process) == 3 + len(expensive)
    decrypt_many(expensive[:1] * 8, processes=16, use_pool=True)  # never more workers than keys
    assert used == [2, 8]


def test_no_jobs_and_bad_process_count() -> None:
    assert decrypt_many([]) == []
    with pytest.raises(ValueError, match="at least 1"):
        decrypt_many(_jobs(), processes=0)
    assert usable_cores() >= 1


def test_progress_bar_is_drawn_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    decrypt_many(_jobs(), processes=1, use_pool=False, progress=True)
    assert "decrypting keystores" in capsys.readouterr().err


def test_no_progress_bar_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    decrypt_many(_jobs(), processes=1, use_pool=False)
    assert capsys.readouterr().err == ""


def test_worker_functions_in_this_process() -> None:
    # Run in a throwaway spawned process: prepare_worker changes malloc for the whole process.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        1, mp_context=context, initializer=prepare_worker, initargs=(1 << 20,)
    ) as pool:
        sealed = parse_keystore(cheap_keystore_json(SECRETS[2])).sealed()
        assert pool.submit(open_in_worker, sealed, PASSWORD).result() == SECRETS[2].to_bytes(
            32, "big"
        )
        with pytest.raises(WrongPasswordError):
            pool.submit(open_in_worker, sealed, "nope").result()


def test_scratch_reserve_is_sized_for_scrypt_only() -> None:
    scrypt = parse_keystore(encrypt_keystore(1, PASSWORD, kdf=ScryptCost(n=2**4)).to_json())
    assert scrypt_scratch_bytes(scrypt.sealed().kdf) == 128 * 8 * (2**4 + 1 + 2)
    assert scrypt_scratch_bytes(parse_keystore(cheap_keystore_json(1)).sealed().kdf) == 0


def test_open_in_worker_in_this_process() -> None:
    sealed = parse_keystore(cheap_keystore_json(SECRETS[2])).sealed()
    assert open_in_worker(sealed, PASSWORD) == SECRETS[2].to_bytes(32, "big")
    with pytest.raises(WrongPasswordError):
        open_in_worker(sealed, "nope")
