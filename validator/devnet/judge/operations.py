"""Judging the validator operations a client submits: voluntary exits and builder registrations.

Signatures first (one batch), then the chain's rules, as in
:mod:`validator.devnet.judge.duty_messages`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from remerkleable.core import View

from validator.consensus.ssz.builder import SignedValidatorRegistrationV1
from validator.consensus.ssz.codec import SszInputError, from_json
from validator.consensus.ssz.phase0 import SignedVoluntaryExit
from validator.devnet.beacon_api.errors import ApiError
from validator.devnet.chain.relay import Registration
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.signatures import SignatureCheck, failed_checks_async

log = logging.getLogger("validator.devnet")


async def submit_voluntary_exit(chain: DevnetChain, body: Any, now: float) -> None:
    """POST /eth/v1/beacon/pool/voluntary_exits; ApiError(400) when refused."""
    try:
        signed = from_json(SignedVoluntaryExit, body)
    except SszInputError as failure:
        raise ApiError(400, f"malformed voluntary exit: {failure}") from None
    index = int(signed.message.validator_index)
    exit_epoch = int(signed.message.epoch)
    current_epoch = chain.current_epoch(now)
    if index >= len(chain.registry):
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"unknown validator {index}")
    checks = [
        SignatureCheck(
            0,
            "voluntary exit",
            (chain.registry.pubkey(index),),
            chain.roots.judge.voluntary_exit(signed.message, current_epoch),
            bytes(signed.signature),
        )
    ]
    if await failed_checks_async(checks):
        chain.ledger.count("invalid_signatures")
        raise ApiError(400, f"invalid signature on the voluntary exit of validator {index}")
    problem = None
    if exit_epoch > current_epoch:
        problem = f"exit epoch {exit_epoch} is after the current epoch {current_epoch}"
    elif not chain.lifecycle.is_active(index, current_epoch):
        problem = f"validator {index} is not active"
    elif index in chain.lifecycle.exit_epochs:
        problem = f"validator {index} is already exiting"
    if problem:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"invalid voluntary exit: {problem}")
    chain.lifecycle.initiate_exit(index, current_epoch)
    chain.duties.forget_active_sets()
    chain.ledger.count("voluntary_exits_received")
    chain.events.publish("voluntary_exit", body)


async def submit_registrations(
    chain: DevnetChain, registrations: Sequence[View], now: float
) -> None:
    """POST /eth/v1/validator/register_validator; ApiError(400) naming bad signatures (and,
    with the simulated relay, registrations its timestamp rule refuses)."""
    checks = []
    indices = []
    for item, signed in enumerate(registrations):
        index = chain.registry.index_of(bytes(signed.message.pubkey))
        if index is None:
            continue  # the spec: unknown validators are filtered out, not an error
        checks.append(
            SignatureCheck(
                item,
                "registration",
                (bytes(signed.message.pubkey),),
                chain.roots.judge.validator_registration(signed.message),
                bytes(signed.signature),
            )
        )
        indices.append((item, index, signed))
    bad = {check.item for check in await failed_checks_async(checks)}
    refused: list[str] = []
    for item, index, signed in indices:
        if item in bad:
            chain.ledger.count("invalid_signatures")
            continue
        registration = Registration(
            bytes(signed.message.fee_recipient),
            int(signed.message.gas_limit),
            int(signed.message.timestamp),
        )
        if chain.relay is not None:
            problem = chain.relay.refusal(index, registration.timestamp, now)
            if problem is not None:
                chain.ledger.count("rejected_messages")
                refused.append(f"{item} ({problem})")
                continue
            chain.relay.keep(index, registration)
        chain.registrations[index] = (registration.fee_recipient, registration.gas_limit)
        chain.ledger.count("registrations_received")
    if bad:
        listed = ", ".join(str(item) for item in sorted(bad))
        raise ApiError(400, f"invalid signature on registration(s) {listed}")
    if refused:
        raise ApiError(400, "registration(s) refused by the relay: " + "; ".join(refused))


def parse_registrations(body: Any) -> list[View]:
    if not isinstance(body, list):
        raise ApiError(400, "expected an array of signed validator registrations")
    try:
        return [from_json(SignedValidatorRegistrationV1, item) for item in body]
    except SszInputError as failure:
        raise ApiError(400, f"malformed registration: {failure}") from None
