"""Cost of strict Beacon API checking: loading the spec and judging typical answers.

Side by side in one run: our loader (validator.devnet.openapi_check: openapi-core with
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

from tests.beacon import canned  # noqa: E402
from validator.devnet.openapi_check import (  # noqa: E402
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
    _SpecRequest,
    _SpecResponse,
    default_spec_dir,
    load_beacon_api_spec,
)

if TYPE_CHECKING:
    from openapi_core import OpenAPI

JSON = {"Content-Type": "application/json"}
INDICES = list(range(64))


def exchanges() -> list[tuple[str, HttpRequestParts, HttpResponseParts | None]]:
    """(name, request, response or None to judge the request only)."""
    block, block_headers = canned.produced_block(9)
    attestations = [canned.single_attestation(9, index) for index in INDICES]
    return [
        ("syncing answer", HttpRequestParts("GET", "/eth/v1/node/syncing"),
         HttpResponseParts(200, JSON, orjson.dumps(canned.syncing()))),
        ("64 attester duties answer",
         HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON,
                          orjson.dumps([str(i) for i in INDICES])),
         HttpResponseParts(200, JSON, orjson.dumps(canned.attester_duties(3, INDICES)))),
        ("64 validators answer",
         HttpRequestParts("POST", "/eth/v1/beacon/states/head/validators", (), JSON,
                          b'{"ids":["1"]}'),
         HttpResponseParts(200, JSON, orjson.dumps(canned.validators(INDICES)))),
        ("Electra block answer",
         HttpRequestParts("GET", "/eth/v3/validator/blocks/9",
                          [("randao_reveal", canned.signature(1))]),
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
            median_seconds(lambda: list(plain.iter_request_errors(_SpecRequest(request))), repeat),
        )
    return (
        median_seconds(lambda: spec.check_response(request, response), repeat),
        median_seconds(
            lambda: list(
                plain.iter_response_errors(_SpecRequest(request), _SpecResponse(response))
            ),
            repeat,
        ),
    )


if __name__ == "__main__":
    main()
