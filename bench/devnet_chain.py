"""The simulated chain's own cost per slot at scale (default: 10,000 validators).

One slot's worth of messages of a 10,000-validator devnet, fed straight to
the chain's intake and production functions (no HTTP, so the figures are the
chain's CPU, not a client's): the slot's single attestations, the aggregates
its aggregators ask for and publish, the sync committee's messages, the
contributions its aggregators ask for and publish, and one produced block.
Two paths are measured side by side with their baselines and the ratio printed:

- attestation intake: ours (wire parser, one AttestationData root per distinct
  data, one ``verify_signature_sets`` batch in a worker thread) against the
  plain way (``from_json`` per item, a root per item, ``crypto_backend.verify``
  per item);
- aggregate requests: ours (one aggregation per pool content, shared by every
  aggregator asking) against aggregating again for each request.

    python bench/devnet_chain.py [--validators 10000] [--slots-per-epoch 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import crypto_backend  # noqa: E402
from validator.consensus.interop import interop_secret_key  # noqa: E402
from validator.consensus.signing_roots import (  # noqa: E402
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    contribution_and_proof_signing_root,
    randao_reveal_signing_root,
    selection_proof_signing_root,
    sync_committee_message_signing_root,
    sync_committee_selection_proof_signing_root,
)
from validator.consensus.ssz import (  # noqa: E402
    AggregateAndProof,
    ContributionAndProof,
    SignedAggregateAndProof,
    SignedContributionAndProof,
    SingleAttestation,
    from_json,
    hash_tree_root,
    to_json,
)
from validator.devnet import SimulatedBeaconNode  # noqa: E402
from validator.devnet.chain.production import (  # noqa: E402
    assemble_block,
    build_aggregate,
    build_contribution,
    plan_block,
    sync_subcommittee_seats,
)
from validator.devnet.chain.shuffling import is_aggregator, is_sync_committee_aggregator  # noqa: E402
from validator.devnet.chain.simulated_chain import DevnetChain  # noqa: E402
from validator.devnet.judge.duty_messages import (  # noqa: E402
    submit_aggregates,
    submit_attestations,
    submit_contributions,
    submit_sync_messages,
)
from validator.devnet.judge.signatures import aggregate_signatures  # noqa: E402

T = TypeVar("T")


def cpu_seconds() -> float:
    """CPU time of this process (worker threads included) and its live children
    (crypto_backend's lane processes, which verify large batches)."""
    process = psutil.Process()
    total = sum(process.cpu_times()[:2])
    for child in process.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


async def timed(action: Callable[[], Awaitable[T]]) -> tuple[T, float, float]:
    """Result, wall seconds, CPU seconds (this process, its threads and its lanes)."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = await action()
    return result, time.perf_counter() - wall, cpu_seconds() - cpu


def hex0x(data: bytes) -> str:
    return "0x" + data.hex()


def baseline_attestation_intake(chain: DevnetChain, body: list[dict[str, Any]]) -> int:
    accepted = 0
    for item in body:
        attestation = from_json(SingleAttestation, item)
        root = attestation_signing_root(chain.spec, attestation.data)
        pubkey = chain.registry.pubkey(int(attestation.attester_index))
        accepted += crypto_backend.verify(pubkey, root, bytes(attestation.signature))
    return accepted


async def main(validators: int, slots_per_epoch: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        node = SimulatedBeaconNode(
            Path(directory) / "devnet",
            validators,
            seconds_per_slot=60.0,
            slots_per_epoch=slots_per_epoch,
            genesis_delay=-60.0 * slots_per_epoch - 1,
        )
        await node.start()
        print(f"validators: {validators}, slots per epoch: {slots_per_epoch}")
        print(f"new chain (keys, registry root, server): {time.perf_counter() - started:.2f} s")
        try:
            await measure(node.chain, validators)
        finally:
            await node.stop()


async def measure(chain: DevnetChain, validators: int) -> None:
    slot = chain.current_slot()
    epoch = chain.epoch_of(slot)
    committees = chain.duties.committees_at(slot)
    data = chain.attestation_data(slot)
    data_json = to_json(data)
    root = attestation_signing_root(chain.spec, data)
    members = [
        (committee_index, validator)
        for committee_index in range(committees.committees_per_slot)
        for validator in committees.committee(slot, committee_index) or ()
    ]
    keys = [interop_secret_key(validator) for _, validator in members]
    signing = time.perf_counter()
    signatures = crypto_backend.sign_many(keys, root)
    print(f"signing {len(keys)} attestations for the bench: {time.perf_counter() - signing:.2f} s")
    body = [
        {
            "committee_index": str(committee_index),
            "attester_index": str(validator),
            "data": data_json,
            "signature": hex0x(signature),
        }
        for (committee_index, validator), signature in zip(members, signatures, strict=True)
    ]
    rows: list[tuple[str, float, float]] = []

    baseline_started = time.perf_counter()
    accepted = await asyncio.to_thread(baseline_attestation_intake, chain, body)
    baseline_seconds = time.perf_counter() - baseline_started
    assert accepted == len(body)
    failures, wall, cpu = await timed(lambda: submit_attestations(chain, body, time.time()))
    assert failures == [], failures[:3]
    rows.append((f"{len(body)} single attestations", wall, cpu))
    print(
        f"attestation intake: ours {wall * 1000:.0f} ms, plain per-item "
        f"{baseline_seconds * 1000:.0f} ms, ratio {baseline_seconds / wall:.1f}x"
    )

    aggregators = []
    for committee_index in range(committees.committees_per_slot):
        committee = committees.committee(slot, committee_index) or ()
        proofs = crypto_backend.sign_many(
            [interop_secret_key(v) for v in committee],
            selection_proof_signing_root(chain.spec, slot),
        )
        aggregators += [
            (committee_index, validator, proof)
            for validator, proof in zip(committee, proofs, strict=True)
            if is_aggregator(len(committee), proof, chain.spec.target_aggregators_per_committee)
        ]
    data_root = hash_tree_root(data)

    async def ours() -> list[Any]:
        return [
            await build_aggregate(chain, slot, committee_index, data_root)
            for committee_index, _, _ in aggregators
        ]

    async def plain() -> int:
        for committee_index, _, _ in aggregators:
            pooled = chain.attestation_pool.get(slot, committee_index, data_root)
            assert pooled is not None
            await asyncio.to_thread(aggregate_signatures, list(pooled.signatures.values()))
        return len(aggregators)

    _, plain_wall, _ = await timed(plain)
    aggregates, wall, cpu = await timed(ours)
    rows.append((f"{len(aggregators)} aggregate requests", wall, cpu))
    print(
        f"aggregate requests: ours {wall * 1000:.0f} ms, aggregating per request "
        f"{plain_wall * 1000:.0f} ms, ratio {plain_wall / wall:.1f}x"
    )
    signed_aggregates = []
    for (_, validator, proof), aggregate in zip(aggregators, aggregates, strict=True):
        message = AggregateAndProof(
            aggregator_index=validator, aggregate=aggregate, selection_proof=proof
        )
        signature = crypto_backend.sign(
            interop_secret_key(validator), aggregate_and_proof_signing_root(chain.spec, message)
        )
        signed_aggregates.append(
            to_json(SignedAggregateAndProof(message=message, signature=signature))
        )
    failures, wall, cpu = await timed(
        lambda: submit_aggregates(chain, signed_aggregates, time.time())
    )
    assert failures == [], failures[:3]
    rows.append((f"{len(signed_aggregates)} aggregate-and-proofs", wall, cpu))

    sync_members = sorted(set(chain.duties.sync_committee_for_message_slot(slot)))
    head = chain.tree.head.root
    sync_signatures = crypto_backend.sign_many(
        [interop_secret_key(v) for v in sync_members],
        sync_committee_message_signing_root(chain.spec, slot, head),
    )
    messages = [
        {
            "slot": str(slot),
            "beacon_block_root": hex0x(head),
            "validator_index": str(validator),
            "signature": hex0x(signature),
        }
        for validator, signature in zip(sync_members, sync_signatures, strict=True)
    ]
    failures, wall, cpu = await timed(lambda: submit_sync_messages(chain, messages, time.time()))
    assert failures == [], failures[:3]
    rows.append((f"{len(messages)} sync committee messages", wall, cpu))

    contributors = []
    for subcommittee in range(chain.spec.sync_committee_subnet_count):
        for validator in sorted(set(sync_subcommittee_seats(chain, slot, subcommittee))):
            proof = crypto_backend.sign(
                interop_secret_key(validator),
                sync_committee_selection_proof_signing_root(chain.spec, slot, subcommittee),
            )
            if is_sync_committee_aggregator(
                proof, chain.spec.target_aggregators_per_sync_subcommittee
            ):
                contributors.append((subcommittee, validator, proof))

    async def contributions() -> list[Any]:
        return [
            await build_contribution(chain, slot, subcommittee, head)
            for subcommittee, _, _ in contributors
        ]

    built, wall, cpu = await timed(contributions)
    rows.append((f"{len(contributors)} contribution requests", wall, cpu))
    signed_contributions = []
    for (_, validator, proof), contribution in zip(contributors, built, strict=True):
        message = ContributionAndProof(
            aggregator_index=validator, contribution=contribution, selection_proof=proof
        )
        signature = crypto_backend.sign(
            interop_secret_key(validator), contribution_and_proof_signing_root(chain.spec, message)
        )
        signed_contributions.append(
            to_json(SignedContributionAndProof(message=message, signature=signature))
        )
    failures, wall, cpu = await timed(
        lambda: submit_contributions(chain, signed_contributions, time.time())
    )
    assert failures == [], failures[:3]
    rows.append((f"{len(signed_contributions)} contribution-and-proofs", wall, cpu))

    next_slot = slot + 1
    proposer = chain.expected_proposer(next_slot)
    assert proposer is not None
    reveal = crypto_backend.sign(
        interop_secret_key(proposer),
        randao_reveal_signing_root(chain.spec, chain.epoch_of(next_slot)),
    )

    async def produce() -> Any:
        plan = await plan_block(chain, next_slot, proposer, reveal, bytes(32))
        return await asyncio.to_thread(assemble_block, plan)

    _, wall, cpu = await timed(produce)
    rows.append(("one block produced", wall, cpu))

    print(f"\none slot of a {validators}-validator devnet (epoch {epoch}), chain side only:")
    print(f"{'work':<34}{'wall ms':>10}{'cpu ms':>10}")
    for name, wall, cpu in rows:
        print(f"{name:<34}{wall * 1000:>10.0f}{cpu * 1000:>10.0f}")
    total_wall = sum(row[1] for row in rows) * 1000
    total_cpu = sum(row[2] for row in rows) * 1000
    print(f"{'total':<34}{total_wall:>10.0f}{total_cpu:>10.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--validators", type=int, default=10_000)
    parser.add_argument("--slots-per-epoch", type=int, default=8)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.validators, arguments.slots_per_epoch))
