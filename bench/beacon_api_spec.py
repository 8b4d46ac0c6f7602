"""Cost of strict Beacon API checking: loading the spec and judging typical answers.

Side by side in one run: our loader (validator.devnet.strict_mode.openapi_spec: openapi-core with
each $ref'd YAML file parsed once) against openapi-core's own
``OpenAPI.from_file_path`` (which re-parses a file at every $ref it follows).
Prints load times and the median time to judge each exchange, with the ratio.

    python bench/beacon_api_spec.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from validator.consensus.ssz import electra, to_json  # noqa: E402
from validator.devnet.strict_mode.openapi_spec import (  # noqa: E402
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
    OpenApiRequest,
    OpenApiResponse,
    default_spec_dir,
    load_beacon_api_spec,
)

if TYPE_CHECKING:
    from openapi_core import OpenAPI

JSON = {"Content-Type": "application/json"}
INDICES = list(range(64))


# Typical answers, built here from the product's containers (the benchmark uses
# no test tooling): their shapes are what the spec judges, their values do not matter.
FAR_FUTURE = str(2**64 - 1)


def _hex(tag: int, length: int) -> str:
    return "0x" + bytes([tag]).hex() * length


def syncing_answer() -> object:
    return {
        "data": {
            "head_slot": "100",
            "sync_distance": "0",
            "is_syncing": False,
            "is_optimistic": False,
            "el_offline": False,
        }
    }


def attester_duties_answer(epoch: int, indices: list[int]) -> object:
    return {
        "dependent_root": _hex(0x41, 32),
        "execution_optimistic": False,
        "data": [
            {
                "pubkey": _hex(index % 256, 48),
                "validator_index": str(index),
                "committee_index": str(index % 4),
                "committee_length": "128",
                "committees_at_slot": "4",
                "validator_committee_index": str(index % 128),
                "slot": str(epoch * 32 + index % 32),
            }
            for index in indices
        ],
    }


def validators_answer(indices: list[int]) -> object:
    def entry(index: int) -> object:
        return {
            "index": str(index),
            "balance": "32000000000",
            "status": "active_ongoing",
            "validator": {
                "pubkey": _hex(index % 256, 48),
                "withdrawal_credentials": "0x01" + "00" * 11 + "ab" * 20,
                "effective_balance": "32000000000",
                "slashed": False,
                "activation_eligibility_epoch": "0",
                "activation_epoch": "0",
                "exit_epoch": FAR_FUTURE,
                "withdrawable_epoch": FAR_FUTURE,
            },
        }

    return {"execution_optimistic": False, "finalized": False, "data": [entry(i) for i in indices]}


def produced_block_answer(slot: int) -> tuple[object, dict[str, str]]:
    contents = electra.BlockContents(block=electra.BeaconBlock(slot=slot, proposer_index=3))
    values = {"execution_payload_value": "123456789", "consensus_block_value": "987654321"}
    body = {"version": "electra", "execution_payload_blinded": False, **values}
    headers = {
        "Eth-Consensus-Version": "electra",
        "Eth-Execution-Payload-Blinded": "false",
        "Eth-Execution-Payload-Value": values["execution_payload_value"],
        "Eth-Consensus-Block-Value": values["consensus_block_value"],
    }
    return {**body, "data": to_json(contents)}, headers


def single_attestation(slot: int, attester_index: int) -> object:
    attestation = electra.SingleAttestation(committee_index=0, attester_index=attester_index)
    attestation.data.slot = slot
    return to_json(attestation)


def exchanges() -> list[tuple[str, HttpRequestParts, HttpResponseParts | None]]:
    """(name, request, response or None to judge the request only)."""
    block, block_headers = produced_block_answer(9)
    attestations = [single_attestation(9, index) for index in INDICES]
    return [
        ("syncing answer", HttpRequestParts("GET", "/eth/v1/node/syncing"),
         HttpResponseParts(200, JSON, orjson.dumps(syncing_answer()))),
        ("64 attester duties answer",
         HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON,
                          orjson.dumps([str(i) for i in INDICES])),
         HttpResponseParts(200, JSON, orjson.dumps(attester_duties_answer(3, INDICES)))),
        ("64 validators answer",
         HttpRequestParts("POST", "/eth/v1/beacon/states/head/validators", (), JSON,
                          b'{"ids":["1"]}'),
         HttpResponseParts(200, JSON, orjson.dumps(validators_answer(INDICES)))),
        ("Electra block answer",
         HttpRequestParts("GET", "/eth/v3/validator/blocks/9",
                          [("randao_reveal", _hex(0xA1, 96))]),
         HttpResponseParts(200, {**JSON, **block_headers}, orjson.dumps(block))),
        ("64 single attestations request",
         HttpRequestParts("POST", "/eth/v2/beacon/pool/attestations", (),
                          {**JSON, "Eth-Consensus-Version": "electra"},
                          orjson.dumps(attestations)),
         None),
    ]  # fmt: skip


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    run()  # the first call resolves and caches what it can; not counted
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    spec = load_beacon_api_spec()
    print(f"spec: {spec.spec_dir}")
    print(f"ours: load (openapi-core import, parse, spec check) {spec.load_seconds * 1000:.0f} ms")
    from openapi_core import OpenAPI

    started = time.perf_counter()
    plain = OpenAPI.from_file_path(str(default_spec_dir() / "beacon-node-oapi.yaml"))
    plain_ms = (time.perf_counter() - started) * 1000
    print(f"plain openapi-core: load (parse, spec check) {plain_ms:.0f} ms")

    print(f"{'exchange':34} {'ours ms':>9} {'plain ms':>9} {'ratio':>7}")
    for name, request, response in exchanges():
        ours, base = measure(spec, plain, request, response, args.repeat)
        print(f"{name:34} {ours * 1000:9.1f} {base * 1000:9.1f} {base / ours:6.1f}x")


def measure(
    spec: BeaconApiSpec,
    plain: OpenAPI,
    request: HttpRequestParts,
    response: HttpResponseParts | None,
    repeat: int,
) -> tuple[float, float]:
    """Median seconds to judge one exchange: (ours, plain openapi-core)."""
    if response is None:
        return (
            median_seconds(lambda: spec.check_request(request), repeat),
            median_seconds(
                lambda: list(plain.iter_request_errors(OpenApiRequest(request))), repeat
            ),
        )
    return (
        median_seconds(lambda: spec.check_response(request, response), repeat),
        median_seconds(
            lambda: list(
                plain.iter_response_errors(OpenApiRequest(request), OpenApiResponse(response))
            ),
            repeat,
        ),
    )


if __name__ == "__main__":
    main()
