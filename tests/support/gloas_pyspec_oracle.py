"""The pinned consensus-specs pyspec (eth-consensus-specs==1.7.0b4) answering questions about Gloas.

Runs under Python 3.12 in its own environment (the pyspec needs >= 3.12, the project runs
on 3.11), never imported by the project: the tests start it as a subprocess and talk JSON
lines over its stdin and stdout. Each request names a preset and an operation:

- ``root``: decode ``ssz`` (hex) as the pyspec's ``type`` and answer its hash_tree_root
  and its re-serialization (so a decoding that silently differs shows too);
- ``signing_root``: the pyspec's compute_signing_root of that object under
  compute_domain(``domain_type``, ``fork_version``, ``genesis_validators_root``);
- ``constants``: the named constants' values;
- ``balance_weighted_selection``: ``compute_balance_weighted_selection`` as ``compute_ptc``
  calls it (no shuffling), on given candidates, balances and seed.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace
from typing import Any


def _specs() -> dict[str, Any]:
    from eth_consensus_specs.gloas import mainnet, minimal

    return {"mainnet": mainnet, "minimal": minimal}


def _answer(specs: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    spec = specs[request["preset"]]
    operation = request["op"]
    if operation == "constants":
        values = {}
        for name in request["names"]:
            # Preset values and constants are module attributes; configuration is spec.config.
            value = getattr(spec, name) if hasattr(spec, name) else getattr(spec.config, name)
            values[name] = "0x" + bytes(value).hex() if isinstance(value, bytes) else int(value)
        return {"values": values}
    if operation == "balance_weighted_selection":
        # The pyspec reads only ``state.validators[index].effective_balance``, by index.
        validators = [SimpleNamespace(effective_balance=spec.Gwei(0))] * (
            max(request["indices"]) + 1
        )
        for index, balance in zip(request["indices"], request["balances"], strict=True):
            validators[index] = SimpleNamespace(effective_balance=spec.Gwei(balance))
        # The uncached function: the compiled pyspec wraps it in a cache keyed on the
        # state's validators root, which this stand-in state has no need of.
        selected = spec._compute_balance_weighted_selection(
            SimpleNamespace(validators=validators),
            [spec.ValidatorIndex(index) for index in request["indices"]],
            spec.Bytes32(bytes.fromhex(request["seed"])),
            spec.Uint64(request["size"]),
            shuffle_indices=False,
        )
        return {"selected": [int(index) for index in selected]}
    ssz_type = getattr(spec, request["type"])
    value = spec.ssz_deserialize(ssz_type, bytes.fromhex(request["ssz"]))
    if operation == "root":
        return {
            "root": bytes(spec.hash_tree_root(value)).hex(),
            "ssz": bytes(spec.ssz_serialize(value)).hex(),
        }
    if operation == "signing_root":
        domain = spec.compute_domain(
            spec.DomainType(bytes.fromhex(request["domain_type"])),
            spec.Version(bytes.fromhex(request["fork_version"])),
            spec.Root(bytes.fromhex(request["genesis_validators_root"])),
        )
        return {
            "domain": bytes(domain).hex(),
            "signing_root": bytes(spec.compute_signing_root(value, domain)).hex(),
        }
    raise ValueError(f"unknown operation {operation!r}")


def main() -> None:
    specs = _specs()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = _answer(specs, json.loads(line))
        except Exception as failure:  # the caller reports what the pyspec refused
            reply = {"error": f"{type(failure).__name__}: {failure}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
