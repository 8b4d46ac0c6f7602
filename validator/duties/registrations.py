"""Builder registrations (MEV-boost): every enabled key registered with the builders each epoch.

A key whose builder flow is on (``--builder``, or ``builder.enabled`` in
``--proposer-config``) and that has a fee recipient gets a
``ValidatorRegistrationV1`` (fee recipient, gas limit, timestamp, pubkey),
signed once through the signer (local or remote key, under
``DOMAIN_APPLICATION_BUILDER``). The signed message is kept and sent again
as it is every epoch; it is signed anew only when the key's fee recipient or
gas limit changes (a Keymanager API call, another proposer config after a
restart) or the key is new. Keys the signer does not hold (waiting under
doppelganger protection, halted, removed) register nothing.

Each round sends every kept registration to ``POST
/eth/v1/validator/register_validator`` in batches, each to every beacon node
the client uses. A node that refuses or fails is counted
(``validator_builder_registrations_total{result="failed"}``) and gets the
same messages again next epoch; a round never holds up a duty (it is a task
of its own). From the Gloas fork epoch on (when the chain schedules it)
registrations stop: proposer preferences replace them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from validator.beacon import BeaconNodeClient, BeaconNodeError
from validator.consensus.forks import FAR_FUTURE_EPOCH
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz.builder import ValidatorRegistrationV1
from validator.duties.metrics import BUILDER_REGISTRATIONS, REGISTRATION_BATCH_SECONDS
from validator.duties.slot_clock import SlotClock
from validator.key_settings import ProposerSettings
from validator.signing.signer import Signer

log = logging.getLogger("validator.builder")

#: Registrations per request: large key counts go in several requests, none of them huge.
REGISTRATION_BATCH_SIZE = 500

JsonObject = dict[str, Any]


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def registrations_end_epoch(chain: ChainSpec) -> int:
    """The first epoch without builder registrations: Gloas's, or never when not scheduled."""
    for fork in chain.forks:
        if fork.name.value == "gloas":
            return fork.epoch
    return FAR_FUTURE_EPOCH


@dataclass(frozen=True)
class _Kept:
    """A key's signed registration and the settings it was signed for."""

    fee_recipient: bytes
    gas_limit: int
    timestamp_override: int | None
    signed: JsonObject

    @property
    def signed_for(self) -> tuple[bytes, int, int | None]:
        return self.fee_recipient, self.gas_limit, self.timestamp_override


@dataclass(frozen=True)
class RoundReport:
    """What one round did: new signatures, registrations sent, batches no node took."""

    epoch: int
    signed: int = 0
    submitted: int = 0
    failed_batches: int = 0


def _signed_json(registration: ValidatorRegistrationV1, signature: bytes) -> JsonObject:
    """``SignedValidatorRegistrationV1`` as the Beacon API takes it."""
    return {
        "message": {
            "fee_recipient": "0x" + bytes(registration.fee_recipient).hex(),
            "gas_limit": str(int(registration.gas_limit)),
            "timestamp": str(int(registration.timestamp)),
            "pubkey": "0x" + bytes(registration.pubkey).hex(),
        },
        "signature": "0x" + signature.hex(),
    }


class BuilderRegistrations:
    """The kept registrations and the per-epoch round (``await round(epoch)``)."""

    def __init__(
        self,
        client: BeaconNodeClient,
        signer: Signer,
        chain: ChainSpec,
        settings: ProposerSettings,
        *,
        batch_size: int = REGISTRATION_BATCH_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be 1 or more")
        self._client = client
        self._signer = signer
        self._chain = chain
        self._settings = settings
        self._batch_size = batch_size
        self._clock = clock
        self._kept: dict[bytes, _Kept] = {}
        self._no_fee_recipient: set[bytes] = set()
        self._running = asyncio.Lock()
        self._last_epoch: int | None = None
        self.end_epoch = registrations_end_epoch(chain)

    async def first_round(self, clock: SlotClock) -> asyncio.Task[RoundReport] | None:
        """The start's round, waited for up to a slot; one still running then goes on in
        the background and is returned (to cancel at a stop)."""
        chain = self._chain
        epoch = chain.epoch_at_slot(max(0, clock.wall_slot()))
        first = asyncio.create_task(self.round(epoch), name="registrations-at-start")
        done, _ = await asyncio.wait({first}, timeout=chain.seconds_per_slot)
        if first in done:
            first.result()
            return None
        log.info("builder registrations still being signed; the duty loop starts meanwhile")
        return first

    def kept(self, pubkey: bytes) -> JsonObject | None:
        """The signed registration kept for ``pubkey`` (as sent), if any."""
        kept = self._kept.get(pubkey)
        return None if kept is None else kept.signed

    async def round(self, epoch: int) -> RoundReport:
        """Sign what changed and send every registration; a round still running is not doubled."""
        if epoch >= self.end_epoch:
            if self._kept:
                log.info("epoch %d is Gloas: builder registrations stop", epoch)
                self._kept.clear()
            return RoundReport(epoch)
        if self._last_epoch is not None and epoch <= self._last_epoch:
            return RoundReport(epoch)  # this epoch's round ran already (the one at start)
        if self._running.locked():
            log.warning("the previous round of builder registrations is still running")
            return RoundReport(epoch)
        self._last_epoch = epoch
        async with self._running:
            signed = await self._sign_changed()
            kept = [self._kept[pubkey].signed for pubkey in sorted(self._kept)]
            failed = await self._submit(kept)
        return RoundReport(epoch, signed, len(kept), failed)

    async def _sign_changed(self) -> int:
        settings = self._settings
        wanted: dict[bytes, tuple[bytes, int, int | None]] = {}
        for pubkey in self._signer.pubkeys():
            if not settings.builder_enabled(pubkey):
                continue
            fee_recipient = settings.fee_recipient(pubkey)
            if fee_recipient is None:
                if pubkey not in self._no_fee_recipient:
                    self._no_fee_recipient.add(pubkey)
                    log.warning(
                        "0x%s has no fee recipient (--suggested-fee-recipient, the proposer "
                        "config or the Keymanager API): not registered with builders",
                        pubkey.hex()[:16],
                    )
                continue
            self._no_fee_recipient.discard(pubkey)
            wanted[pubkey] = (
                fee_recipient,
                settings.gas_limit(pubkey),
                settings.registration_timestamp(pubkey),
            )
        for pubkey in [pubkey for pubkey in self._kept if pubkey not in wanted]:
            del self._kept[pubkey]  # removed, halted or switched off: register it no more
        changed = []
        for pubkey, (fee_recipient, gas_limit, override) in wanted.items():
            kept = self._kept.get(pubkey)
            if kept is not None and kept.signed_for == (fee_recipient, gas_limit, override):
                continue
            changed.append((pubkey, fee_recipient, gas_limit, override))
        if not changed:
            return 0
        now = int(self._clock())
        messages = [
            ValidatorRegistrationV1(
                fee_recipient=fee_recipient,
                gas_limit=gas_limit,
                timestamp=now if override is None else override,
                pubkey=pubkey,
            )
            for pubkey, fee_recipient, gas_limit, override in changed
        ]
        results = await self._signer.sign_validator_registrations(messages)
        made = refused = 0
        for (pubkey, fee_recipient, gas_limit, override), message, result in zip(
            changed, messages, results, strict=True
        ):
            if result.signature is None:
                refused += 1
                self._kept.pop(pubkey, None)  # an older message must not outlive a change
                continue
            made += 1
            self._kept[pubkey] = _Kept(
                fee_recipient, gas_limit, override, _signed_json(message, result.signature)
            )
        if made:
            BUILDER_REGISTRATIONS.labels("signed").inc(made)
            log.info("%d builder registration(s) signed", made)
        if refused:
            BUILDER_REGISTRATIONS.labels("refused").inc(refused)
        return made

    async def _submit(self, registrations: list[JsonObject]) -> int:
        """Send in batches to every node; the number of batches no node took."""
        failed_batches = 0
        nodes = max(1, len(self._client.nodes))
        for start in range(0, len(registrations), self._batch_size):
            batch = registrations[start : start + self._batch_size]
            started = time.perf_counter()
            try:
                result = await self._client.register_validators(batch)
            except BeaconNodeError as error:
                failed_batches += 1
                BUILDER_REGISTRATIONS.labels("failed").inc(len(batch) * nodes)
                log.warning(
                    "%d builder registration(s) not taken by any beacon node (sent again next "
                    "epoch): %s",
                    len(batch),
                    error,
                )
                continue
            finally:
                REGISTRATION_BATCH_SECONDS.observe(time.perf_counter() - started)
            BUILDER_REGISTRATIONS.labels("accepted").inc(len(batch) * len(result.accepted))
            if result.errors:
                BUILDER_REGISTRATIONS.labels("failed").inc(len(batch) * len(result.errors))
        return failed_batches
