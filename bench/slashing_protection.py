"""Benchmark of the slashing-protection record (figures go to docs/performance.md).

Prints, in one run:
1. a 10,000-key record_attestations batch (median of 20) against the bare durable write of
   the same bytes (temp file, fsync, rename, directory fsync);
2. the same keys recorded one call each over 200 keys, extrapolated to 10,000;
3. the import of a complete interchange of 10,000 validators x 1,000 attestations and 100
   blocks (generated in a temp dir, deleted afterwards): time and peak RSS, against a bare
   streaming parse of the same file with ijson's yajl2 C backend.
"""

from __future__ import annotations

import os
from pathlib import Path

ZERO_ROOT = "0x" + "00" * 32


def write_complete_interchange(
    path: Path, validators: int, attestations: int = 1000, blocks: int = 100
) -> int:
    """A complete-form interchange with signing roots, as a client with full history exports.

    Every validator gets the same history (only the pubkey differs), so the file is large
    without costing minutes to generate; parsing does not care. Returns the file size.
    """
    attestation_text = [
        f'{{"source_epoch":"{epoch}","target_epoch":"{epoch + 1}",'
        f'"signing_root":"0x{epoch * 0x9E3779B97F4A7C15:064x}"}}'
        for epoch in range(attestations)
    ]
    block_text = [
        f'{{"slot":"{slot * 32}","signing_root":"0x{slot * 0xC2B2AE3D27D4EB4F:064x}"}}'
        for slot in range(blocks)
    ]
    attestation_part = ",".join(attestation_text).encode()
    block_part = ",".join(block_text).encode()
    with open(path, "wb") as stream:
        stream.write(
            b'{"metadata":{"interchange_format_version":"5","genesis_validators_root":"%s"},'
            b'"data":[' % ZERO_ROOT.encode()
        )
        for index in range(validators):
            if index:
                stream.write(b",")
            stream.write(b'{"pubkey":"0x%096x","signed_blocks":[' % (index + 1))
            stream.write(block_part)
            stream.write(b'],"signed_attestations":[')
            stream.write(attestation_part)
            stream.write(b"]}")
        stream.write(b"]}")
    return os.path.getsize(path)
