"""Which loaded keys may sign: halts, doppelganger protection, and the chain's slashing reports.

Every decrypted key reaches the signer through :class:`KeyGate`, at start and
when the Keymanager API imports one. A key outside the signer can sign nothing
(the signer is the one path to a signature) and has no duties fetched, so a
waiting or halted key's duties are simply not done: they are not refusals.

- A halted key (``validator.halts``) never reaches the signer; the refusal names
  the halt and ``validator resume``.
- Without ``--doppelganger-protection`` every other key signs at once.
- With it, a key skips the wait only when the clean-shutdown marker proves this
  directory signed for it in the previous epoch or later (``validator.clean_shutdown``);
  every other key, and every key imported while running, waits. Its watch covers
  the epochs from ``max(E - 1, L + 1)`` (``E`` the epoch it started waiting in, ``L`` the
  last epoch its record shows a signature in: liveness this directory caused is not
  a doppelganger) to at least ``E + 1``, two epochs at the least, each asked of the
  beacon node (``POST /eth/v1/validator/liveness/{epoch}``) while current and again
  once complete. A key live in one of them was signed with elsewhere: it is halted
  and the process stops with status 3. A key clean through its last epoch signs
  from the next. A watched epoch that could not be asked about before the node
  forgets it (a node outage) starts the key's wait again.
- Whatever the flag: the chain reporting one of our keys slashed (validator status
  ``*_slashed``, polled every epoch, or an ``attester_slashing`` / ``proposer_slashing``
  event naming its index) halts it at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from slashing_protection.protocol import SlashingProtectionRecord
from slashing_protection.rule import Watermark
from validator.beacon import BeaconApiError, BeaconNodeClient, BeaconNodeError, RawEvent
from validator.clean_shutdown import CleanShutdown, last_signed_epoch
from validator.consensus.spec import ChainSpec
from validator.duties.metrics import DOPPELGANGER_STATE, HALTS
from validator.halts import HaltError, HaltReason, HaltStore, refusal_message, resume_command
from validator.signing.guards import wall_clock_epoch
from validator.signing.remote import RemoteSigner
from validator.signing.signer import Signer

# What the gate holds for a key until it may sign: its secret, or the remote signer that
# signs for it (remote keys wait exactly as local ones do).
KeyMaterial = int | RemoteSigner

log = logging.getLogger("validator.doppelganger")

#: Statuses a beacon node answers when it does not serve an endpoint at all.
UNSUPPORTED_STATUSES = frozenset({404, 405, 501})
#: Event topics that name slashed validators.
SLASHING_TOPICS = ("attester_slashing", "proposer_slashing")
#: The validator statuses of a slashed validator still on the chain (the status poll's filter).
SLASHED_STATUSES = ("active_slashed", "exited_slashed")


class KeyState(StrEnum):
    WAITING = "waiting"
    LIVE_ELSEWHERE = "live_elsewhere"
    SIGNING = "signing"
    HALTED = "halted"


class LivenessUnsupportedError(Exception):
    """The beacon node cannot tell liveness: doppelganger protection cannot work with it."""


@dataclass
class _Wait:
    material: KeyMaterial
    first: int
    last: int
    reason: str
    checked: set[int] = field(default_factory=set)

    def window(self) -> range:
        return range(self.first, self.last + 1)


def _short(pubkey: bytes) -> str:
    return "0x" + pubkey.hex()


def slashed_indices(event: RawEvent) -> set[int]:
    """The validator indices an attester_slashing / proposer_slashing event says are slashable."""
    data: Any = event.data
    try:
        if event.topic == "proposer_slashing":
            return {int(data["signed_header_1"]["message"]["proposer_index"])}
        if event.topic == "attester_slashing":
            first = {int(i) for i in data["attestation_1"]["attesting_indices"]}
            second = {int(i) for i in data["attestation_2"]["attesting_indices"]}
            return first & second
    except (KeyError, TypeError, ValueError) as error:
        log.warning("unreadable %s event (%s): %.200r", event.topic, error, data)
    return set()


class KeyGate:
    """Admits keys into the signer, holds back waiting ones, halts (see the module docstring)."""

    def __init__(
        self,
        *,
        signer: Signer,
        record: SlashingProtectionRecord,
        halts: HaltStore,
        chain: ChainSpec,
        client: BeaconNodeClient | None,
        protection: bool,
        clean_shutdown: CleanShutdown | None,
        on_doppelganger: Callable[[], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.signer = self._signer = signer
        self._record = record
        self._halts = halts
        self._chain = chain
        self._beacon = client
        self.protection = protection
        self._clean = clean_shutdown
        self._on_doppelganger = on_doppelganger
        self._clock = clock
        self.states: dict[bytes, KeyState] = {}
        self.indices: dict[bytes, int] = {}
        #: The duty tracker's indices of the signing keys (set once it exists), so that only
        #: waiting keys are looked up here.
        self.known_indices: Callable[[], Mapping[bytes, int]] | None = None
        self._waiting: dict[bytes, _Wait] = {}
        self.doppelganger_found = False
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def _client(self) -> BeaconNodeClient:
        """The beacon node; ``validator signer --network`` has none and never watches."""
        if self._beacon is None:
            raise BeaconNodeError("no beacon node is configured")
        return self._beacon

    # -- states ----------------------------------------------------------------------

    def _set_state(self, pubkey: bytes, state: KeyState | None) -> None:
        old = self.states.pop(pubkey, None)
        if old is not None:
            try:
                DOPPELGANGER_STATE.remove(_short(pubkey), old.value)
            except KeyError:
                pass
        if state is not None:
            self.states[pubkey] = state
            DOPPELGANGER_STATE.labels(_short(pubkey), state.value).set(1)

    def waiting(self) -> list[bytes]:
        return list(self._waiting)

    def holds(self, pubkey: bytes) -> bool:
        """Loaded here: signing, or waiting for its doppelganger watch to end."""
        return pubkey in self._waiting or self._signer.has_key(pubkey)

    def epoch(self) -> int:
        return max(0, wall_clock_epoch(self._chain, self._clock()))

    # -- admission -------------------------------------------------------------------

    async def admit(self, keys: Mapping[bytes, KeyMaterial], *, imported: bool = False) -> None:
        """Give the signer the keys that may sign now; hold the waiting ones; refuse halted ones.

        HaltError when the halts cannot be read (nothing is admitted then).
        """
        halts = await asyncio.to_thread(self._halts.halts)
        allowed: dict[bytes, KeyMaterial] = {}
        for pubkey, held in keys.items():
            halt = halts.get(pubkey)
            if halt is not None:
                log.error("%s", refusal_message(self._halts.validators_dir, halt))
                self._set_state(pubkey, KeyState.HALTED)
            else:
                allowed[pubkey] = held
        if not self.protection:
            await self._give(allowed)
            for pubkey in allowed:
                self._set_state(pubkey, KeyState.SIGNING)
            return
        epoch = self.epoch()
        record = self._record
        watermarks = await asyncio.to_thread(record.watermarks, list(allowed))
        now_signing: dict[bytes, KeyMaterial] = {}
        reasons: Counter[tuple[str, int, int]] = Counter()
        spe = self._chain.slots_per_epoch
        for pubkey, held in allowed.items():
            watermark = watermarks.get(pubkey)
            if imported:
                skip, reason = False, "imported through the Keymanager API while running"
            elif self._clean is None:
                skip, reason = False, "no clean-shutdown marker: a first start, or a crash"
            else:
                skip, reason = self._clean.skip_reason(pubkey, watermark, epoch, spe)
            if skip:
                log.info("doppelganger wait skipped for %s: %s", _short(pubkey), reason)
                now_signing[pubkey] = held
                continue
            last_signed = last_signed_epoch(watermark, spe)
            first = max(epoch - 1, 0 if last_signed is None else last_signed + 1, 0)
            wait = _Wait(held, first, max(epoch + 1, first + 1), reason)
            self._waiting[pubkey] = wait
            self._set_state(pubkey, KeyState.WAITING)
            reasons[(reason, wait.first, wait.last)] += 1
        for (reason, first, last), count in sorted(reasons.items()):
            log.warning(
                "doppelganger protection: %d key(s) wait (%s): watching epochs %d to %d, "
                "signing from epoch %d at the earliest (now %d)",
                count,
                reason,
                first,
                last,
                last + 1,
                epoch,
            )
        await self._give(now_signing)
        for pubkey in now_signing:
            self._set_state(pubkey, KeyState.SIGNING)

    async def _give(self, keys: Mapping[bytes, KeyMaterial]) -> None:
        """Hand keys to the signer: secrets as local keys, the others as remote ones."""
        local = {pubkey: held for pubkey, held in keys.items() if isinstance(held, int)}
        remote = {
            pubkey: held for pubkey, held in keys.items() if isinstance(held, RemoteSigner)
        }
        if local:
            await self._signer.add_keys(local)
        if remote:
            await self._signer.add_remote_keys(remote)

    async def remove(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """Forget keys (a Keymanager DELETE): waiting ones at once, signing ones via the signer."""
        wanted = list(dict.fromkeys(pubkeys))
        dropped = [pubkey for pubkey in wanted if self._waiting.pop(pubkey, None) is not None]
        removed = await self._signer.remove_keys(wanted)
        for pubkey in wanted:
            self._set_state(pubkey, None)
        return list(dict.fromkeys([*dropped, *removed]))

    # -- halts -----------------------------------------------------------------------

    async def halt(
        self, details: Mapping[bytes, str], reason: HaltReason, epoch: int | None
    ) -> None:
        """Stop these keys signing now, then write their halt markers (one log line each).

        Shielded: stopping the gate never leaves a key stopped here but unmarked on disk.
        """
        await asyncio.shield(self._halt(details, reason, epoch))

    async def _halt(
        self, details: Mapping[bytes, str], reason: HaltReason, epoch: int | None
    ) -> None:
        stopped = (KeyState.HALTED, KeyState.LIVE_ELSEWHERE)
        pubkeys = [pubkey for pubkey in details if self.states.get(pubkey) not in stopped]
        if not pubkeys:
            return
        state = KeyState.LIVE_ELSEWHERE if reason is HaltReason.DOPPELGANGER else KeyState.HALTED
        for pubkey in pubkeys:
            self._waiting.pop(pubkey, None)
            self._set_state(pubkey, state)
        await self._signer.remove_keys(pubkeys)
        directory = self._halts.validators_dir
        for pubkey in pubkeys:
            HALTS.labels(reason.value).inc()
            try:
                halt = await asyncio.to_thread(
                    self._halts.halt, pubkey, reason, details[pubkey], epoch
                )
            except HaltError as error:
                log.critical(
                    "HALTED %s in this process (%s), but %s: it may sign again after a "
                    "restart; keep this validator stopped until the marker can be written",
                    _short(pubkey),
                    details[pubkey],
                    error,
                )
                continue
            log.error(
                "HALTED %s: %s; it signs nothing, now or after a restart, until `%s`",
                _short(pubkey),
                halt.describe(),
                resume_command(directory, pubkey),
            )

    def on_event(self, event: object) -> None:
        """The scheduler's event stream: slashing reports naming our indices halt those keys."""
        if not isinstance(event, RawEvent) or event.topic not in SLASHING_TOPICS:
            return
        indices = slashed_indices(event)
        ours = {pubkey: index for pubkey, index in self.indices.items() if index in indices}
        if ours:
            details = {
                pubkey: f"a {event.topic} event of the beacon node names validator {index}"
                for pubkey, index in ours.items()
            }
            task = asyncio.get_running_loop().create_task(
                self.halt(details, HaltReason.SLASHED, self.epoch())
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # -- the chain's view ------------------------------------------------------------

    async def check_liveness_support(self) -> None:
        """LivenessUnsupportedError when the beacon node does not serve the liveness endpoint."""
        epoch = self.epoch()
        probe = sorted(self.indices.values())[:1] or [0]
        try:
            await self._client.get_liveness(max(0, epoch - 1), probe)
        except BeaconApiError as error:
            if error.status in UNSUPPORTED_STATUSES:
                raise LivenessUnsupportedError(
                    f"--doppelganger-protection needs the beacon node's "
                    f"POST /eth/v1/validator/liveness/{{epoch}}, which it does not serve "
                    f"(HTTP {error.status}); use a beacon node that does, or start without "
                    "--doppelganger-protection only if you are sure no other client signs "
                    "with these keys"
                ) from None
            raise

    async def _poll_validators(self, epoch: int) -> None:
        """Learn our keys' indices and halt any the chain reports slashed."""
        if self.known_indices is not None:
            self.indices.update(self.known_indices())
        ours = [
            pubkey
            for pubkey, state in self.states.items()
            if state in (KeyState.SIGNING, KeyState.WAITING)
        ]
        unresolved = [
            pubkey
            for pubkey in ours
            if pubkey not in self.indices
            and (pubkey in self._waiting or self.known_indices is None)
        ]
        infos = await self._client.get_validators(unresolved) if unresolved else []
        for info in infos:
            self.indices[info.pubkey] = info.index
        known = sorted({self.indices[pubkey] for pubkey in ours if pubkey in self.indices})
        if known:
            infos = [
                *infos,
                *await self._client.get_validators(known, statuses=SLASHED_STATUSES),
            ]
        slashed: dict[bytes, str] = {}
        for info in infos:
            if info.status.endswith("_slashed") or info.validator.get("slashed") is True:
                slashed[info.pubkey] = f"validator {info.index} has status {info.status}"
        if slashed:
            await self.halt(slashed, HaltReason.SLASHED, epoch)

    async def _watch_liveness(self, epoch: int) -> None:
        for pubkey, wait in list(self._waiting.items()):
            stale = [e for e in wait.window() if e < epoch - 1 and e not in wait.checked]
            if stale:
                wait.first, wait.last = epoch, epoch + 1
                wait.checked.clear()
                log.warning(
                    "doppelganger protection: epoch %d of %s could not be checked in time; "
                    "its wait starts again: epochs %d to %d",
                    stale[0],
                    _short(pubkey),
                    wait.first,
                    wait.last,
                )
        for asked in (epoch - 1, epoch):
            if asked < 0:
                continue
            concerned = {
                pubkey: wait
                for pubkey, wait in self._waiting.items()
                if asked in wait.window() and asked not in wait.checked
            }
            if not concerned:
                continue
            by_index = {
                self.indices[pubkey]: pubkey for pubkey in concerned if pubkey in self.indices
            }
            live: dict[bytes, str] = {}
            if by_index:
                try:
                    answers = await self._client.get_liveness(asked, sorted(by_index))
                except BeaconNodeError as error:
                    log.warning("doppelganger protection: liveness of epoch %d: %s", asked, error)
                    continue
                for index, is_live in answers.items():
                    if is_live and index in by_index:
                        live[by_index[index]] = (
                            f"the beacon node saw validator {index} live in epoch {asked} "
                            "while this client was not signing with the key"
                        )
            if live:
                self.doppelganger_found = True
                await self.halt(live, HaltReason.DOPPELGANGER, asked)
                self._on_doppelganger()
            if asked < epoch:
                # Complete: a key not on the chain (no index) cannot have been live in it.
                for pubkey, wait in concerned.items():
                    if pubkey not in live:
                        wait.checked.add(asked)
        await self._release(epoch)

    async def _release(self, epoch: int) -> None:
        ready = {
            pubkey: wait
            for pubkey, wait in self._waiting.items()
            if epoch > wait.last and all(e in wait.checked for e in wait.window())
        }
        if not ready or self.doppelganger_found:
            return
        for pubkey in ready:
            del self._waiting[pubkey]
        await self._give({pubkey: wait.material for pubkey, wait in ready.items()})
        spans: Counter[tuple[int, int]] = Counter()
        for pubkey, wait in ready.items():
            self._set_state(pubkey, KeyState.SIGNING)
            spans[(wait.first, wait.last)] += 1
        for (first, last), count in sorted(spans.items()):
            log.warning(
                "doppelganger protection: %d key(s) seen nowhere else in epochs %d to %d: "
                "signing from epoch %d",
                count,
                first,
                last,
                epoch,
            )

    async def check(self) -> None:
        """One round: indices and slashed statuses, then liveness of the waiting keys."""
        async with self._lock:
            epoch = self.epoch()
            try:
                await self._poll_validators(epoch)
            except BeaconNodeError as error:
                log.warning("cannot read our validators' statuses: %s", error)
            if self.protection and self._waiting:
                await self._watch_liveness(epoch)

    async def run(self, stop: asyncio.Event) -> None:
        """``check`` now and at the start of every epoch, until ``stop`` is set."""
        chain = self._chain
        while not stop.is_set():
            await self.check()
            if stop.is_set():
                return
            next_epoch = self.epoch() + 1
            # Half a slot into the epoch: the previous epoch's last attestations are in, and
            # the duty loop's work at the boundary (duties, the first block) is not slowed.
            when = chain.slot_start_time(chain.start_slot_of_epoch(next_epoch)) + (
                chain.seconds_per_slot / 2
            )
            try:
                await asyncio.wait_for(stop.wait(), timeout=max(0.0, when - self._clock()))
            except TimeoutError:
                pass

    async def close(self) -> None:
        """Let the halts started from events finish (they are shielded and short)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def signing_watermarks(self) -> dict[bytes, Watermark]:
        """The record's watermark of every signing key (for the clean-shutdown marker)."""
        found = {}
        for pubkey, state in self.states.items():
            watermark = self._record.watermark(pubkey) if state is KeyState.SIGNING else None
            if watermark is not None:
                found[pubkey] = watermark
        return found
