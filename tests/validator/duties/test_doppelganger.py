"""The key gate: halted keys refused, waiting keys held out of the signer, doppelgangers halted."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import SlashingProtection
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.support.fake_node import FakeBeaconNode
from tests.support.records import verdicts_allowed
from tests.validator.signing.support import GVR, Clock, make_chain
from validator.beacon import BeaconNodeClient, RawEvent, routes
from validator.clean_shutdown import consume_clean_shutdown, write_clean_shutdown
from validator.consensus.interop import interop_keypair
from validator.duties.doppelganger import KeyGate, KeyState, LivenessUnsupportedError
from validator.halts import HaltReason, HaltStore
from validator.signing.signer import Signer

KEYS = {pubkey: secret for secret, pubkey in (interop_keypair(index) for index in range(3))}
A, B, C = list(KEYS)
SLOTS_PER_EPOCH = 8
EPOCH = 5  # the test clock starts in slot 40


class Setup:
    def __init__(
        self, tmp_path: Path, node: FakeBeaconNode, client: BeaconNodeClient, **gate: Any
    ) -> None:
        self.chain = make_chain()
        self.clock = Clock()
        self.record = SlashingProtection.open(tmp_path, GVR, register=list(KEYS), create=True)
        self.signer = Signer(self.chain, self.record, clock=self.clock)
        self.node = node
        self.found: list[bool] = []
        self.gate = KeyGate(
            signer=self.signer,
            record=self.record,
            halts=HaltStore(tmp_path),
            chain=self.chain,
            client=client,
            protection=bool(gate.get("protection", True)),
            clean_shutdown=None,
            on_doppelganger=lambda: self.found.append(True),
            clock=self.clock,
        )
        self.gate.indices.update({A: 0, B: 1, C: 2})

    def at_epoch(self, epoch: int) -> None:
        self.clock.at_slot(epoch * SLOTS_PER_EPOCH, into=0.1)


SetupFor = Callable[..., Awaitable[Setup]]


@pytest.fixture
async def setup_for(
    tmp_path: Path, start_node: NodeStarter, make_client: ClientFactory
) -> AsyncIterator[SetupFor]:
    made: list[Setup] = []

    async def make(strict: bool = True, **gate: Any) -> Setup:
        # Not strict: a node that lacks an endpoint answers what the spec does not list.
        node, url = await start_node(strict=strict)
        client = await make_client([url], strict=strict)
        setup = Setup(tmp_path, node, client, **gate)
        made.append(setup)
        return setup

    yield make
    for setup in made:
        setup.record.close()


async def test_without_protection_every_key_but_a_halted_one_signs(
    setup_for: SetupFor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s = await setup_for(protection=False)
    HaltStore(tmp_path).halt(B, HaltReason.DOPPELGANGER, "seen live in epoch 2", 2)
    with caplog.at_level(logging.ERROR):
        await s.gate.admit(KEYS)
    assert sorted(s.signer.pubkeys()) == sorted([A, C])
    assert s.gate.states[B] is KeyState.HALTED
    (line,) = [r.getMessage() for r in caplog.records if "is halted" in r.getMessage()]
    assert f"0x{B.hex()}" in line and "validator resume --validators-dir" in line


async def test_waiting_keys_are_not_in_the_signer_until_two_clean_epochs_end(
    setup_for: SetupFor,
) -> None:
    s = await setup_for()
    s.at_epoch(EPOCH)
    await s.gate.admit(KEYS)
    assert s.signer.pubkeys() == []
    assert set(s.gate.waiting()) == set(KEYS)
    # Epochs EPOCH-1 .. EPOCH+1 are watched: asked while current, and once complete.
    for epoch in (EPOCH, EPOCH + 1):
        s.at_epoch(epoch)
        await s.gate.check()
        assert s.signer.pubkeys() == [], epoch
    s.at_epoch(EPOCH + 2)
    await s.gate.check()
    assert sorted(s.signer.pubkeys()) == sorted(KEYS)
    assert all(state is KeyState.SIGNING for state in s.gate.states.values())
    asked = sorted({int(r.path.rsplit("/", 1)[1]) for r in s.node.requests_to(routes.LIVENESS)})
    assert asked == [EPOCH - 1, EPOCH, EPOCH + 1]
    assert s.found == []


async def test_a_key_live_elsewhere_is_halted_and_never_signs(
    setup_for: SetupFor, tmp_path: Path
) -> None:
    s = await setup_for()
    s.at_epoch(EPOCH)
    await s.gate.admit(KEYS)
    s.node.live[EPOCH] = {1}
    await s.gate.check()
    assert s.found == [True] and s.gate.doppelganger_found
    assert s.gate.states[B] is KeyState.LIVE_ELSEWHERE
    halt = HaltStore(tmp_path).get(B)
    assert halt is not None and halt.reason is HaltReason.DOPPELGANGER and halt.epoch == EPOCH
    # Once a doppelganger is found, nothing is released any more.
    for epoch in (EPOCH + 1, EPOCH + 2, EPOCH + 3):
        s.at_epoch(epoch)
        await s.gate.check()
    assert s.signer.pubkeys() == []


async def test_liveness_this_directory_caused_is_not_a_doppelganger(setup_for: SetupFor) -> None:
    s = await setup_for()
    # The previous run (killed) attested with A at target EPOCH: the chain saw it live then.
    assert verdicts_allowed(s.record.record_attestations([(A, EPOCH - 1, EPOCH)])) == [True]
    s.node.live[EPOCH] = {0}
    s.at_epoch(EPOCH)
    await s.gate.admit({A: KEYS[A]})
    await s.gate.check()
    assert s.found == []
    # Its watch starts after its last signature: epochs EPOCH+1 and EPOCH+2.
    for epoch in (EPOCH + 1, EPOCH + 2):
        s.at_epoch(epoch)
        await s.gate.check()
        assert s.signer.pubkeys() == []
    s.at_epoch(EPOCH + 3)
    await s.gate.check()
    assert s.signer.pubkeys() == [A]


async def test_a_clean_stop_with_a_recent_signature_skips_the_wait_key_by_key(
    setup_for: SetupFor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s = await setup_for(protection=False)
    signed = s.record.record_attestations([(A, EPOCH - 2, EPOCH - 1), (B, 1, 2)])
    assert verdicts_allowed(signed) == [True, True]
    write_clean_shutdown(
        tmp_path,
        GVR,
        EPOCH,
        {pubkey: mark for pubkey in (A, B) if (mark := s.record.watermark(pubkey))},
    )
    clean = consume_clean_shutdown(tmp_path, GVR)
    s.gate._clean = clean
    s.gate.protection = True
    s.at_epoch(EPOCH)
    with caplog.at_level(logging.INFO):
        await s.gate.admit(KEYS)
    assert s.signer.pubkeys() == [A]
    assert set(s.gate.waiting()) == {B, C}
    skipped = [r.getMessage() for r in caplog.records if "wait skipped" in r.getMessage()]
    assert len(skipped) == 1 and f"0x{A.hex()}" in skipped[0] and "stopped cleanly" in skipped[0]


async def test_a_key_imported_while_running_always_waits(setup_for: SetupFor) -> None:
    s = await setup_for()
    s.at_epoch(EPOCH)
    await s.gate.admit({A: KEYS[A]}, imported=True)
    assert s.signer.pubkeys() == [] and s.gate.holds(A)
    assert await s.gate.remove([A]) == [A]
    assert not s.gate.holds(A) and A not in s.gate.states


@pytest.mark.parametrize("status", [404, 405, 501])
async def test_a_node_without_the_liveness_endpoint_is_refused(
    setup_for: SetupFor, status: int
) -> None:
    s = await setup_for(strict=False)
    s.node.misbehave(routes.LIVENESS, status=status, body={"code": status, "message": "not served"})
    with pytest.raises(LivenessUnsupportedError, match="liveness") as raised:
        await s.gate.check_liveness_support()
    assert "\n" not in str(raised.value) and f"HTTP {status}" in str(raised.value)


async def test_a_slashing_event_or_status_halts_a_signing_key(
    setup_for: SetupFor, tmp_path: Path
) -> None:
    s = await setup_for(protection=False)
    await s.gate.admit(KEYS)
    s.gate.on_event(
        RawEvent(
            "attester_slashing",
            {
                "attestation_1": {"attesting_indices": ["0", "2"]},
                "attestation_2": {"attesting_indices": ["0", "1"]},
            },
        )
    )
    for task in list(s.gate._tasks):
        await task
    assert sorted(s.signer.pubkeys()) == sorted([B, C])
    halt = HaltStore(tmp_path).get(A)
    assert halt is not None and halt.reason is HaltReason.SLASHED
    # The status poll: the chain reports C slashed.
    entry = {
        "index": "2",
        "balance": "31000000000",
        "status": "active_slashed",
        "validator": {
            "pubkey": "0x" + C.hex(),
            "withdrawal_credentials": "0x01" + "00" * 11 + "ab" * 20,
            "effective_balance": "31000000000",
            "slashed": True,
            "activation_eligibility_epoch": "0",
            "activation_epoch": "0",
            "exit_epoch": "100",
            "withdrawable_epoch": "200",
        },
    }
    s.node.misbehave(
        routes.STATE_VALIDATORS,
        body={"execution_optimistic": False, "finalized": False, "data": [entry]},
    )
    await s.gate.check()
    assert s.signer.pubkeys() == [B]
    assert set(HaltStore(tmp_path).halts()) == {A, C}
    assert s.found == []  # a slashing halts the key; it does not stop the process
