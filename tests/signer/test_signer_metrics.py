"""The signer's metrics as a /metrics scrape shows them, with the record's write metrics."""

from __future__ import annotations

import errno
import os

import pytest
from prometheus_client import REGISTRY, generate_latest

from tests.signer.support import attestation_data
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def test_one_batch_moves_every_counter_once(
    signer: Signer, pubkeys: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = sample("validator_attestation_batch_seconds_count")
    writes = sample("validator_slashing_protection_write_seconds_count")
    made = sample("validator_signatures_total", {"kind": "attestation"})
    await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
    )
    assert sample("validator_attestation_batch_seconds_count") == batches + 1
    assert sample("validator_slashing_protection_write_seconds_count") == writes + 1
    assert sample("validator_signatures_total", {"kind": "attestation"}) == made + len(pubkeys)

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    failures = sample("validator_slashing_protection_write_failures_total")
    refused = sample(
        "validator_signature_refusals_total",
        {"kind": "attestation", "reason": "record_write_failed"},
    )
    await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(40, 4, 5)) for pubkey in pubkeys]
    )
    assert sample("validator_slashing_protection_write_failures_total") == failures + 1
    assert sample(
        "validator_signature_refusals_total",
        {"kind": "attestation", "reason": "record_write_failed"},
    ) == refused + len(pubkeys)


async def test_the_scrape_names_them(signer: Signer, pubkeys: list[bytes]) -> None:
    await signer.sign_randao_reveal(pubkeys[0], 5)
    text = generate_latest(REGISTRY).decode()
    for line in (
        'validator_signatures_total{kind="randao_reveal"}',
        "# TYPE validator_signature_refusals_total counter",
        "# TYPE validator_attestation_batch_seconds histogram",
        "# TYPE validator_block_signing_seconds histogram",
        f"validator_signing_keys {float(len(pubkeys))}",
        "# TYPE validator_slashing_protection_write_seconds histogram",
        "# TYPE validator_slashing_protection_write_failures_total counter",
    ):
        assert line in text
