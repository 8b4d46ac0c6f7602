"""Fixtures: a registered record in a temp directory, interop keys, a signer, a crypto spy."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import crypto_backend
from slashing_protection import SlashingProtection
from tests.signer.support import GVR, Clock, CryptoSpy, make_chain
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.signing.signer import Signer

KEY_COUNT = 6


@pytest.fixture(scope="session")
def keypairs() -> list[tuple[int, bytes]]:
    """(secret, pubkey) of interop validators 0..5."""
    return [interop_keypair(index) for index in range(KEY_COUNT)]


@pytest.fixture(scope="session")
def pubkeys(keypairs: list[tuple[int, bytes]]) -> list[bytes]:
    return [pubkey for _, pubkey in keypairs]


@pytest.fixture(scope="session")
def chain() -> ChainSpec:
    return make_chain()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def record(tmp_path: Path, pubkeys: list[bytes]) -> Iterator[SlashingProtection]:
    with SlashingProtection.open(tmp_path, GVR, register=pubkeys) as opened:
        yield opened


@pytest.fixture
async def signer(
    chain: ChainSpec,
    record: SlashingProtection,
    clock: Clock,
    keypairs: list[tuple[int, bytes]],
) -> AsyncIterator[Signer]:
    made = Signer(chain, record, clock=clock)
    await made.add_keys({pubkey: secret for secret, pubkey in keypairs})
    yield made


@pytest.fixture
def crypto_spy(monkeypatch: pytest.MonkeyPatch) -> CryptoSpy:
    """Wrap crypto_backend.sign and sign_many to see every call the signer makes."""
    spy = CryptoSpy()
    real_sign = crypto_backend.sign
    real_sign_many = crypto_backend.sign_many
    inside = threading.local()  # a sign_many that calls sign itself is one call, not several

    def sign(sk: int, message: bytes) -> bytes:
        if not getattr(inside, "active", False):
            spy.note("sign", [sk], message)
        return real_sign(sk, message)

    def sign_many(sks: list[int], message: bytes) -> list[bytes]:
        spy.note("sign_many", sks, message)
        inside.active = True
        try:
            return real_sign_many(sks, message)
        finally:
            inside.active = False

    monkeypatch.setattr(crypto_backend, "sign", sign)
    monkeypatch.setattr(crypto_backend, "sign_many", sign_many)
    return spy
